"""Wall time and environment steps per second of the formal adaptive-ToM tables at the paper's scale.

Runs Tables 1 and 2 (30 repetitions, seed 42, every task the formal agents can play) once with full run
logging, as the notebooks do, and once without a results directory's log being read back; then the rest of
the formal default (Tables 3 and 4, Fig. 3). Prints seconds, steps/s and the share spent writing the log.

    .venv/bin/python benchmarks/bench_adaptive_tom.py
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time

os.environ.setdefault("TOMLIB_RESULTS", tempfile.mkdtemp())

from tomlib.experiments import adaptive_tom as at
from tomlib.trace import RunLog


def timed(label: str, coro_fn) -> tuple[float, int]:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    rep = asyncio.run(coro_fn())
    wall = time.perf_counter() - t0
    steps = int(rep.episodes["steps"].sum()) if "steps" in rep.episodes else 0
    print(f"{label:<38} {wall:7.2f} s  {steps:>7} steps  {steps / wall:>9,.0f} steps/s")
    return wall, steps


def main() -> None:
    tasks = ["memory_1", "memory_n", "game1", "game2", "overcooked"]
    print(f"formal adaptive-ToM tables, 30 repetitions, seed 42, {os.cpu_count()} CPUs")
    w1, s1 = timed("Table 1 (9 pairs x 5 tasks)", lambda: at.table1(tasks=tasks, progress=False))
    w2, s2 = timed("Table 2 (14 pairings x 5 tasks)", lambda: at.table2(tasks=tasks, progress=False))
    w3, _ = timed("Table 3 (Overcooked cross-play)", lambda: at.table3(progress=False))
    w4, _s4 = timed("Table 4 (3-action game)", lambda: at.table4(progress=False))
    w5, _s5 = timed("Fig. 3 (expert weights)", lambda: at.fig3(progress=False))
    total = w1 + w2 + w3 + w4 + w5
    print(f"{'Tables 1 + 2':<38} {w1 + w2:7.2f} s  {s1 + s2:>7} steps  {(s1 + s2) / (w1 + w2):>9,.0f} steps/s")
    print(f"{'whole formal default (Tables 1-4, Fig. 3)':<38} {total:7.2f} s  (classroom budget: 60 s)")

    # what the run log costs: the same Table 1 grid-world cells with logging to a discarded directory vs none
    original = RunLog.event
    RunLog.event = lambda self, kind, payload=None, **kw: None  # type: ignore[method-assign, assignment]
    try:
        w_nolog, _ = timed("Table 1 without writing events", lambda: at.table1(tasks=tasks, progress=False))
    finally:
        RunLog.event = original  # type: ignore[method-assign]
    print(f"run-log share of Table 1: {1 - w_nolog / w1:.0%} (speedup without logging: {w1 / w_nolog:.2f}x)")


if __name__ == "__main__":
    main()
