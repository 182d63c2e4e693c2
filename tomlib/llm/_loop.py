"""One private event loop per process, so model calls work from ``await`` in Jupyter and from plain code.

All HTTP clients, semaphores and budgets live on this loop; callers on other loops (a notebook's) or on
no loop at all hand their coroutines over to it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_state: dict[str, Any] = {"loop": None, "pid": None}


def engine_loop() -> asyncio.AbstractEventLoop:
    """The process's model-call loop, started on first use (and again after a fork)."""
    with _lock:
        loop = _state["loop"]
        if loop is None or _state["pid"] != os.getpid() or loop.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="tomlib-llm", daemon=True)
            thread.start()
            _state["loop"], _state["pid"] = loop, os.getpid()
        return loop


def _submit(coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
    return asyncio.run_coroutine_threadsafe(coro, engine_loop())


def _on_engine_now() -> bool:
    try:
        return asyncio.get_running_loop() is engine_loop()
    except RuntimeError:
        return False


async def on_engine(coro: Coroutine[Any, Any, T]) -> T:
    """Await ``coro`` on the engine loop from any loop."""
    if _on_engine_now():
        return await coro
    return await asyncio.wrap_future(_submit(coro))


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from synchronous code (also inside a running notebook loop).

    Args:
        coro: the coroutine to run, e.g. ``table1(...)`` of an experiment.
    """
    if _on_engine_now():
        coro.close()
        raise RuntimeError("run_sync() cannot be called from the engine loop itself; use `await`.")
    return _submit(coro).result()
