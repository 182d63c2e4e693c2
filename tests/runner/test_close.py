"""The end of a run does not wait forever on a worker that never answers the call to close its kernels
(:func:`tomlib.runner._cluster._close_kernels`): the cluster's close ends that worker, and its kernel with it. And a
worker closing its kernels keeps its event loop turning (its heartbeats go on)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from tomlib.runner import _kernels
from tomlib.runner._cluster import _close_kernels, close_kernels

pytestmark = pytest.mark.tier("fast")


class Unanswered:
    """A client whose workers never answer: ``run`` blocks until the test lets it go."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.called = threading.Event()

    def run(self, function: object) -> None:
        self.called.set()
        self.release.wait()


def test_a_worker_that_never_answers_does_not_hold_the_run() -> None:
    client = Unanswered()
    ending = threading.Thread(target=_close_kernels, args=(client, 0.2))
    ending.start()
    ending.join(60)  # far past the 0.2 s it was given: only a wait without a bound could still be running
    try:
        assert client.called.is_set() and not ending.is_alive()
    finally:
        client.release.set()


def test_a_worker_closing_its_kernels_keeps_its_event_loop_turning(monkeypatch: pytest.MonkeyPatch) -> None:
    """dask's ``Client.run`` calls a plain function on the worker's event loop: kernels that take seconds to shut
    down would stop its heartbeats, and the scheduler's close then met a worker that printed a traceback."""
    monkeypatch.setattr(_kernels, "close", lambda: time.sleep(0.5))
    ticks = 0

    async def heartbeat() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.02)
            ticks += 1

    async def end_of_run() -> None:
        beating = asyncio.create_task(heartbeat())
        await close_kernels()  # as Client.run awaits a coroutine function on the worker's loop
        beating.cancel()

    asyncio.run(end_of_run())
    assert ticks >= 5, ticks  # about 25 while the kernels closed; none when the loop waited on them
