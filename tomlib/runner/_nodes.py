"""The local cluster's scheduler and worker without HTTP servers.

dask starts an HTTP server in every scheduler and worker even without a dashboard (``/info``, ``/json``, ``/health``,
Prometheus metrics, call stacks and logs), with no login, reachable by every local user. These classes skip it; the
runner uses the plain scheduler only for ``--dashboard``. Imported by the worker processes (the nanny hands them the
class by name), so this module imports nothing of tomlib.
"""

from __future__ import annotations

from typing import Any

from distributed import Scheduler, Worker


class NoHTTPScheduler(Scheduler):
    """A scheduler that serves nothing over HTTP: no dashboard, no status or metrics pages."""

    def start_http_server(self, *args: Any, **kwargs: Any) -> None:
        pass


class NoHTTPWorker(Worker):
    """A worker that serves nothing over HTTP (dask would give it status, metrics and call-stack pages)."""

    def start_http_server(self, *args: Any, **kwargs: Any) -> None:
        pass
