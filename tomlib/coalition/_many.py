"""Many small independent instances solved on worker processes.

Notebook 07's formal checks (Appendix G, everyone-in, one-to-many, Appendix C.1) solve thousands of small instances,
each in a few milliseconds, one after the other on one core. :func:`solve_many` hands them to spawned worker
processes (:func:`tomlib.workers.formal_workers` of them, the runner's share of the cores per kernel) in order-keeping
chunks. The instances are drawn by the caller first, so every number is the same as solving them in turn.

A function handed to :func:`solve_many` is pickled by name: keep it in ``tomlib.coalition`` (a worker imports that
alone, in about 0.4 s) or use a ``functools.partial`` of one, never a lambda. Randomness inside it must come from its
item (Appendix G seeds ``random.Random`` per trial), never from a generator shared across items.
"""

from __future__ import annotations

import atexit
import multiprocessing
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

from tomlib.workers import formal_workers, start_worker

T = TypeVar("T")
R = TypeVar("R")

MIN_PER_WORKER = 8
"""Fewer items than this per worker are solved here: a worker's start (about 0.4 s) would cost more."""

_pool: tuple[int, ProcessPoolExecutor] | None = None


def solve_many(solve: Callable[[T], R], items: Sequence[T], workers: int | None = None) -> list[R]:
    """``[solve(x) for x in items]``, on ``workers`` (else :func:`formal_workers`) spawned processes when there are
    enough items. ``solve`` is a module-level function or a ``functools.partial`` of one: a worker imports its module
    by name, so one of :mod:`tomlib.coalition` keeps a worker's start short. A worker that stops (killed, or a script
    without an ``if __name__ == "__main__":`` guard) is reported on stderr and everything is solved here instead."""
    n = formal_workers() if workers is None else workers
    if n < 2 or len(items) < n * MIN_PER_WORKER:
        return [solve(x) for x in items]
    try:
        return list(_executor(n).map(solve, items, chunksize=max(1, len(items) // (8 * n))))
    except BrokenProcessPool:
        print("tomlib: a coalition worker process stopped; solving here", file=sys.stderr, flush=True)
        close()
        return [solve(x) for x in items]


def _executor(workers: int) -> ProcessPoolExecutor:
    global _pool
    if _pool is None or _pool[0] != workers:
        close()
        # spawned, not forked: a notebook kernel has threads (its message loops), which a fork would leave behind
        context = multiprocessing.get_context("spawn")
        _pool = (workers, ProcessPoolExecutor(workers, mp_context=context, initializer=start_worker))
    return _pool[1]


def close() -> None:
    """Stop the worker processes (started again when next needed)."""
    global _pool
    if _pool is not None:
        _pool[1].shutdown(wait=True, cancel_futures=True)
        _pool = None


atexit.register(close)
