"""Running an experiment's jobs concurrently: at most ``parallel`` at once, a progress bar, and when one fails (e.g.
a ReplayMiss) the others are cancelled before the caller closes its run log."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def in_flight(parallel: int | None, concurrency: int | None) -> int:
    """Jobs to run at once: ``parallel`` when given, else the model's concurrency (every job keeps at least one call
    in flight, so fewer jobs than the model's slots would leave slots idle: 8 episodes held a 64-slot endpoint to a
    fraction of its throughput), else 8."""
    return int(parallel) if parallel else max(1, int(concurrency or 8))


async def run_jobs(
    jobs: Sequence[tuple[Any, ...]],
    one: Callable[..., Awaitable[T]],
    *,
    parallel: int,
    desc: str,
    unit: str,
    progress: bool = True,
) -> list[T]:
    """``[await one(*job) for job in jobs]``, run concurrently under a semaphore, results in job order."""
    from tqdm.auto import tqdm

    limit = asyncio.Semaphore(parallel)
    bar = tqdm(total=len(jobs), desc=desc, unit=unit, disable=not progress)

    async def limited(job: tuple[Any, ...]) -> T:
        async with limit:
            out = await one(*job)
            bar.update(1)
            return out

    futures = [asyncio.ensure_future(limited(j)) for j in jobs]
    try:
        return list(await asyncio.gather(*futures))
    except BaseException:
        for f in futures:
            f.cancel()
        await asyncio.gather(*futures, return_exceptions=True)
        raise
    finally:
        bar.close()
