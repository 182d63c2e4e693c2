"""The trace explorer on a large run log: load time, and lazy drawing against drawing every episode up front.

A synthetic matrix-game log (no experiment needed) of ``--episodes`` x 15 steps (about 77 events per episode) is
loaded into a :class:`tomlib.widgets.Trace`, the explorer is opened (drawing ``prerender`` episodes), an episode is
selected (drawn on demand), and the same condition is drawn eagerly for comparison.

    .venv/bin/python benchmarks/bench_widgets.py [--episodes 2000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from tomlib.testing import synthetic_run_log
from tomlib.trace import load_runs
from tomlib.widgets import EpisodePane, Trace, TraceExplorer


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=2000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp)
        n = synthetic_run_log(results / "runs" / "big" / "events.jsonl", episodes=args.episodes, steps=15)
        t0 = time.perf_counter()
        trace = Trace(load_runs(results, run_ids=["big"]))
        load = time.perf_counter() - t0
        t0 = time.perf_counter()
        explorer = TraceExplorer(trace, prerender=3)
        opened = time.perf_counter() - t0
        t0 = time.perf_counter()
        explorer.episode.index = len(explorer.episode.options) // 2
        selected = time.perf_counter() - t0
        refs = trace.refs("big", explorer.condition.value)
        t0 = time.perf_counter()
        for ref in refs:
            EpisodePane(trace, ref)
        eager = time.perf_counter() - t0
    print(f"events: {n:,} in {args.episodes:,} episodes ({len(refs)} in the condition shown)")
    print(f"load into pandas + index:      {load:6.2f} s ({n / load:,.0f} events/s)")
    print(f"open the explorer (lazy, 3):   {opened:6.2f} s")
    print(f"select an undrawn episode:     {selected:6.3f} s")
    print(f"draw the whole condition:      {eager:6.2f} s")
    print(f"lazy open vs eager drawing:    {eager / opened:6.1f}x less work before the first view")


if __name__ == "__main__":
    main()
