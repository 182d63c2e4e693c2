"""The trace explorer on a large run log: opening it from the episode index (now) against loading every event
into pandas first (before), and lazy drawing against drawing every episode up front.

A synthetic matrix-game log (no experiment needed) of ``--episodes`` x 15 steps (about 77 events per episode) is
written, then opened three ways: every line parsed with ``json`` into one frame and indexed in pandas (what the
explorer did before the index), :meth:`Trace.from_runs` with no saved index (one orjson scan of the file), and with
the index a :class:`tomlib.trace.RunLog` saves when it closes. Each is opened in the explorer (3 episodes drawn).

    .venv/bin/python benchmarks/bench_widgets.py [--episodes 2000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from tomlib.testing import synthetic_run_log
from tomlib.trace._index import INDEX_NAME, read_index
from tomlib.trace._load import events_frame
from tomlib.widgets import EpisodePane, Trace, TraceExplorer


def opened(make_trace) -> tuple[float, Trace, TraceExplorer]:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    trace = make_trace()
    explorer = TraceExplorer(trace, prerender=3)
    return time.perf_counter() - t0, trace, explorer


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=2000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp)
        log = results / "runs" / "big" / "events.jsonl"
        n = synthetic_run_log(log, episodes=args.episodes, steps=15)
        # before: every line parsed with json into one frame, then indexed by episode in pandas
        full, _, _ = opened(lambda: Trace(events_frame([json.loads(line) for line in log.open("rb")])))
        scan, _, _ = opened(lambda: Trace.from_runs(["big"], results=results))
        read_index(log).save(log)  # what RunLog.close leaves beside its log
        indexed, trace, explorer = opened(lambda: Trace.from_runs(["big"], results=results))
        size = (log.parent / INDEX_NAME).stat().st_size
        t0 = time.perf_counter()
        explorer.episode.index = len(explorer.episode.options) // 2
        selected = time.perf_counter() - t0
        refs = trace.refs("big", explorer.condition.value)
        t0 = time.perf_counter()
        for ref in refs:
            EpisodePane(trace, ref)
        eager = time.perf_counter() - t0
    print(f"events: {n:,} in {args.episodes:,} episodes ({len(refs)} in the condition shown); index {size:,} bytes")
    print(f"open, json + full frame (before):     {full:6.2f} s")
    print(f"open, no saved index (one scan):      {scan:6.2f} s  ({full / scan:.1f}x faster than before)")
    print(f"open, with the saved index (now):     {indexed:6.2f} s  ({full / indexed:.1f}x faster than before)")
    print(f"select an undrawn episode:            {selected:6.3f} s")
    print(f"draw the whole condition:             {eager:6.2f} s  ({eager / indexed:.1f}x the indexed open)")


if __name__ == "__main__":
    main()
