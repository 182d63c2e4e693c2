"""Wall time and environment steps per second of the formal adaptive-ToM tables at the paper's scale, and what the
run log costs.

Runs Tables 1-4 and Fig. 3 (30 repetitions, seed 42, every task the formal agents can play) once with full run
logging, as the notebooks do. Then Table 1 three times each with the batched run log, with the per-event write path
it replaced, and with no events, and prints the run log's share of Table 1's wall time before and after.

Every timing plays its conditions: the conditions a process played are forgotten before each one (a table asked for
again in one process replays them, which is what a notebook gains, not what playing costs). The per-state memos of
Greedy and the kitchen, the worker processes and the solved kitchen stay, as in a notebook's kernel.

    .venv/bin/python benchmarks/bench_adaptive_tom.py
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time

os.environ.setdefault("TOMLIB_RESULTS", tempfile.mkdtemp())

from tomlib.experiments import adaptive_tom as at
from tomlib.experiments.adaptive_tom import _played
from tomlib.trace import RunLog


def played(coro_fn) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    """The wall time and report of ``coro_fn()`` with every condition played, none replayed."""
    _played.forget()
    t0 = time.perf_counter()
    rep = asyncio.run(coro_fn())
    return time.perf_counter() - t0, rep


def timed(label: str, coro_fn) -> tuple[float, int]:  # type: ignore[no-untyped-def]
    wall, rep = played(coro_fn)
    steps = int(rep.episodes["steps"].sum()) if "steps" in rep.episodes else 0
    print(f"{label:<38} {wall:7.2f} s  {steps:>7} steps  {steps / wall:>9,.0f} steps/s")
    return wall, steps


def main() -> None:
    tasks = ["memory_1", "memory_n", "game1", "game2", "overcooked"]
    print(f"formal adaptive-ToM tables, 30 repetitions, seed 42, {os.cpu_count()} CPUs, every condition played")
    w1, s1 = timed("Table 1 (9 pairs x 5 tasks)", lambda: at.table1(tasks=tasks, progress=False))
    w2, s2 = timed("Table 2 (14 pairings x 5 tasks)", lambda: at.table2(tasks=tasks, progress=False))
    w3, _ = timed("Table 3 (Overcooked cross-play)", lambda: at.table3(progress=False))
    w4, _s4 = timed("Table 4 (3-action game)", lambda: at.table4(progress=False))
    w5, _s5 = timed("Fig. 3 (expert weights)", lambda: at.fig3(progress=False))
    total = w1 + w2 + w3 + w4 + w5
    print(f"{'Tables 1 + 2':<38} {w1 + w2:7.2f} s  {s1 + s2:>7} steps  {(s1 + s2) / (w1 + w2):>9,.0f} steps/s")
    print(f"{'whole formal default (Tables 1-4, Fig. 3)':<38} {total:7.2f} s  (classroom budget: 60 s)")

    # what the run log costs: the same Table 1 cells with events written, with the per-event path this log had
    # before batching (json.dumps, a full redaction scan, write and flush per line), and with no events at all;
    # alternated three times, the fastest of each kept (the machines are noisy); the events of conditions played in
    # worker processes are recorded there alike in every variant and written here by the variant
    original = RunLog.event

    def legacy_event(self, kind, payload=None, *, condition=None, episode=None, step=None, agent=None):  # type: ignore[no-untyped-def]
        ev = {
            "run_id": self.run_id,
            "experiment": self.experiment,
            "condition": condition or "",
            "episode": episode,
            "step": step,
            "agent": agent or "",
            "kind": kind,
            "payload": payload or {},
            "time": time.time(),
        }
        line = self._redact.text(json.dumps(ev, ensure_ascii=False, default=str))
        with self._lock:
            self._fh.write(line.encode() + b"\n")
            self._fh.flush()
        return ev

    variants = {
        "batched (now)": original,
        "per-event (before)": legacy_event,
        "no events": lambda self, kind, payload=None, **kw: None,
    }
    best = dict.fromkeys(variants, float("inf"))
    for _ in range(3):
        for name, fn in variants.items():
            RunLog.event = fn  # type: ignore[method-assign]
            try:
                best[name] = min(best[name], played(lambda: at.table1(tasks=tasks, progress=False))[0])
            finally:
                RunLog.event = original  # type: ignore[method-assign]
    print(
        "Table 1 played again in this warm process (its worker processes, the solved kitchen and the per-state memos "
        "of Greedy and the kitchen kept; the first Table 1 above paid for them):"
    )
    for name, wall in best.items():
        print(f"Table 1, {name:<24} {wall:7.2f} s (fastest of 3)")
    base = best["no events"]
    for name in ("per-event (before)", "batched (now)"):
        print(
            f"run-log share of Table 1, {name}: {1 - base / best[name]:.0%} (speedup without logging: "
            f"{best[name] / base:.2f}x)"
        )


if __name__ == "__main__":
    main()
