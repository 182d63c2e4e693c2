"""Sweeps and the notebook series on dask: wall time with one local worker against two, in one run.

The sweep runs notebook 03 (formal and replayed rows of adaptive-ToM Table 3) over ``--episodes`` x ``--seeds``
into fresh results folders, once with ``jobs=1`` and once with ``jobs=2``, and checks that both give the same
long-form tables. ``--series`` also times ``python -m tomlib run --force`` over the whole offline series (HTML
export included, as ``./reproduce.sh`` does): 1 job with each kernel in one process, 1 job whose kernels play formal
conditions in worker processes on the machine's cores (the runner's default), and 2 jobs (one core each). Both paths
use the same engine (a LocalCluster); with one job a kernel's formal work already uses every core, so a second job
buys less than it did.

    .venv/bin/python benchmarks/bench_sweep.py [--episodes 10 20] [--seeds 1 2 3] [--series]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from tomlib.runner import Profile, sweep
from tomlib.workers import ENV_WORKERS, cores


def timed_sweep(results: Path, grid: Path, jobs: int) -> tuple[float, pd.DataFrame]:
    t0 = time.perf_counter()
    index = sweep("03", grid, jobs=jobs, profile=Profile(name="bench"), results=results, progress=False)
    seconds = time.perf_counter() - t0
    df = pd.read_csv(index, keep_default_na=False)
    if not (df["status"] == "ok").all():
        sys.exit(f"sweep with jobs={jobs} failed: {df[df['status'] != 'ok'][['run_id', 'error']].to_string()}")
    tables = pd.read_csv(index.with_name("results.csv")).drop(columns=["started", "finished"])
    return seconds, tables


def timed_series(results: Path, jobs: int, workers: int | None = None) -> float:
    """``tomlib run --force --jobs N``; ``workers`` sets the kernels' formal worker processes (else the runner's
    share of the cores)."""
    env = {k: v for k, v in os.environ.items() if k != ENV_WORKERS}
    if workers is not None:
        env[ENV_WORKERS] = str(workers)
    t0 = time.perf_counter()
    cmd = [sys.executable, "-m", "tomlib", "run", "--force", "--jobs", str(jobs), "--results", str(results)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode:
        sys.exit(f"series with --jobs {jobs} failed:\n{done.stdout[-2000:]}")
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, nargs="+", default=[10, 20])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--series", action="store_true", help="also time the whole series, --jobs 1 vs --jobs 2")
    ap.add_argument("--series-only", action="store_true", help="time the whole series only (no sweep of 03)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if args.series_only:
            series(root)
            return
        grid = root / "grid.yaml"
        grid.write_text(f"parameters:\n  episodes: {args.episodes}\n  seed: {args.seeds}\nfixed:\n  model: ''\n")
        n = len(args.episodes) * len(args.seeds)
        one, t1 = timed_sweep(root / "serial", grid, 1)
        two, t2 = timed_sweep(root / "two", grid, 2)
        pd.testing.assert_frame_equal(t1, t2)
        print(f"sweep of notebook 03 over {n} grid points ({len(t1)} table rows, identical with 1 and 2 workers)")
        print(f"  1 worker : {one:7.1f} s")
        print(f"  2 workers: {two:7.1f} s   speedup {one / two:.2f}x")
        if args.series:
            series(root)


def series(root: Path) -> None:
    """The whole offline series into fresh results folders (the store and the solved kitchen cache stay as they are,
    as for a user's second run): one job with every kernel in one process (``TOMLIB_FORMAL_WORKERS=1``, as before
    formal workers), one job as the runner sets it (the cores for the notebook's formal work), and two jobs."""
    s0 = timed_series(root / "series0", 1, workers=1)
    s1 = timed_series(root / "series1", 1)
    s2 = timed_series(root / "series2", 2)
    print("whole offline series, `python -m tomlib run --force` (HTML included)")
    print(f"  --jobs 1, {ENV_WORKERS}=1: {s0:7.1f} s")
    print(f"  --jobs 1:                {s1:7.1f} s   speedup {s0 / s1:.2f}x (formal workers: {cores()} cores)")
    print(f"  --jobs 2:                {s2:7.1f} s   speedup {s0 / s2:.2f}x")
    for name in ("series0", "series1", "series2"):
        stamps = sorted((root / name / "notebooks").glob("*.stamp.json"))
        per = {p.name.split("_")[0]: json.loads(p.read_text())["seconds"] for p in stamps}
        print(f"  {name} per notebook (s): " + ", ".join(f"{k} {v:.0f}" for k, v in per.items()))
    parts = {p.name: sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) for p in (root / "series1").iterdir()}
    print(
        f"  results/ of the one-job series: {sum(parts.values()) / 1e6:.1f} MB ("
        + ", ".join(f"{k} {v / 1e6:.1f}" for k, v in sorted(parts.items(), key=lambda kv: -kv[1]) if v >= 1e5)
        + ")"
    )


if __name__ == "__main__":
    main()
