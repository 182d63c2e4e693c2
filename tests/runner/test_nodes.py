"""The local cluster's scheduler and worker serve nothing over HTTP, where dask's own serve status pages to every
local user (:mod:`tomlib.runner._nodes`); both still work together. Started in this process: no cluster, no kernel."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from distributed import Scheduler, Worker

from tomlib.runner._nodes import NoHTTPScheduler, NoHTTPWorker

pytestmark = pytest.mark.tier("fast")


def serving(node: Any) -> bool:
    return getattr(node, "http_server", None) is not None


async def pair(scheduler_cls: type[Scheduler], worker_cls: type[Worker]) -> tuple[bool, bool, int]:
    """Whether a scheduler and a worker of these classes serve HTTP, and how many workers the scheduler saw."""
    async with scheduler_cls(host="127.0.0.1", port=0, dashboard=False, dashboard_address="127.0.0.1:0") as s:
        worker = worker_cls(s.address, nthreads=1, host="127.0.0.1", memory_limit=0)  # it needs the address
        async with worker:
            return serving(s), serving(worker), len(s.workers)


def test_ours_serve_no_http_where_dasks_do_and_still_work_together() -> None:
    assert asyncio.run(pair(Scheduler, Worker)) == (True, True, 1)  # what the classes exist to change
    assert asyncio.run(pair(NoHTTPScheduler, NoHTTPWorker)) == (False, False, 1)
