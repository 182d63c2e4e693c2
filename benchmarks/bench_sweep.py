"""Sweeps and the notebook series on dask: wall time with one local worker against two, in one run.

The sweep runs notebook 03 (formal and replayed rows of adaptive-ToM Table 3) over ``--episodes`` x ``--seeds``
into fresh results folders, once with ``jobs=1`` and once with ``jobs=2``, and checks that both give the same
long-form tables. ``--series`` also times ``python -m tomlib run --force`` over the whole offline series (HTML
export included, as ``./reproduce.sh`` does): 1 job with each kernel in one process and no warm kernels, 1 job without
warm kernels, 1 job as the runner's defaults set it (formal workers on the machine's cores, the next notebook's kernel
started while one runs), and 2 jobs (one core each). Both paths use the same engine (a LocalCluster); with one job a
kernel's formal work already uses every core, so a second job buys less than it did.

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
from tomlib.runner._kernels import ENV_WARM
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


def timed_series(results: Path, jobs: int, **env_over: str) -> float:
    """``tomlib run --force --jobs N`` with ``env_over`` set (``TOMLIB_FORMAL_WORKERS``, ``TOMLIB_WARM_KERNELS``) and
    the rest of those two unset, as the runner's defaults."""
    env = {k: v for k, v in os.environ.items() if k not in (ENV_WORKERS, ENV_WARM)}
    env.update(env_over)
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
    as for a user's second run), back to back: one job with every kernel in one process and no warm kernels (how the
    series ran before formal workers and warm kernels), one job without warm kernels, one job as the runner sets it
    (formal workers on the cores, the next notebook's kernel started while one runs), and two jobs."""
    runs = {
        "series0": (f"--jobs 1, {ENV_WORKERS}=1, {ENV_WARM}=0", 1, {ENV_WORKERS: "1", ENV_WARM: "0"}),
        "series_cold": (f"--jobs 1, {ENV_WARM}=0", 1, {ENV_WARM: "0"}),
        "series1": ("--jobs 1 (the default)", 1, {}),
        "series2": ("--jobs 2", 2, {}),
    }
    took = {name: timed_series(root / name, jobs, **env) for name, (_, jobs, env) in runs.items()}
    print(f"whole offline series, `python -m tomlib run --force` (HTML included; formal workers: {cores()} cores)")
    for name, (label, _, _) in runs.items():
        print(f"  {label:<48} {took[name]:7.1f} s   speedup {took['series0'] / took[name]:.2f}x")
    print(f"  warm kernels alone (one job): {took['series_cold'] / took['series1']:.2f}x")
    for name in runs:
        stamps = sorted((root / name / "notebooks").glob("*.stamp.json"))
        per = {p.name.split("_")[0]: json.loads(p.read_text())["seconds"] for p in stamps}
        print(f"  {name} per notebook (s): " + ", ".join(f"{k} {v:.1f}" for k, v in per.items()))
    parts = {p.name: sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) for p in (root / "series1").iterdir()}
    print(
        f"  results/ of the one-job series: {sum(parts.values()) / 1e6:.1f} MB ("
        + ", ".join(f"{k} {v / 1e6:.1f}" for k, v in sorted(parts.items(), key=lambda kv: -kv[1]) if v >= 1e5)
        + ")"
    )


if __name__ == "__main__":
    main()
