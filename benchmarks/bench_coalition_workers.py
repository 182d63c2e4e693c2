"""Notebook 07's formal checks solved in this process against on worker processes, in one run.

Times Appendix G (the three readings of what may block), the everyone-in and one-to-many comparisons, Appendix C.1
and the selection rules' shares at notebook 07's defaults, with ``TOMLIB_FORMAL_WORKERS=1`` (every instance solved
here, as before ``tomlib.coalition._many``) and then with the machine's cores (what the runner gives a kernel of a
one-job series), each in a fresh process that pays for starting its workers. Checks that both give the same frames
and prints each part's speedup.

    .venv/bin/python benchmarks/bench_coalition_workers.py [--trials 100] [--draws 300]
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tomlib.workers import ENV_WORKERS, cores


def parts(trials: int, draws: int, results: str) -> dict[str, object]:
    """Each part's result and seconds, in this process."""
    from tomlib.experiments import coalition_mechanism as cm

    calls = {
        "Appendix G (3 readings)": lambda: cm.appendix_g(trials=trials, seed=0, results=results),
        "everyone-in comparison": lambda: cm.everyone_in_comparison(trials=trials, seed=0),
        "selection rules' shares": lambda: cm.selection_views(draws=draws, seed=0),
        "one-to-many comparison": lambda: cm.one_to_many_comparison(trials=trials, seed=0),
        "Appendix C.1": lambda: cm.c1_case_study(draws=draws, seed=0),
    }
    out: dict[str, object] = {}
    for name, call in calls.items():
        t0 = time.perf_counter()
        got = call()
        out[name] = (time.perf_counter() - t0, got)
    return out


def timed(workers: int, trials: int, draws: int, folder: Path) -> dict[str, tuple[float, object]]:
    dump = folder / f"parts-{workers}.pickle"
    env = {**os.environ, ENV_WORKERS: str(workers)}
    code = (
        "import pickle, sys; sys.path.insert(0, sys.argv[1]); import bench_coalition_workers as b; "
        "pickle.dump(b.parts(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]), open(sys.argv[5], 'wb'))"
    )
    here = str(Path(__file__).parent)
    results = str(folder / f"results-{workers}")
    subprocess.run([sys.executable, "-c", code, here, str(trials), str(draws), results, str(dump)], env=env, check=True)
    return pickle.loads(dump.read_bytes())


def frames_equal(a: object, b: object) -> bool:
    import pandas as pd

    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(frames_equal(x, y) for x, y in zip(a, b, strict=True))  # type: ignore[arg-type]
    if isinstance(a, dict):
        return list(a) == list(b) and all(frames_equal(a[k], b[k]) for k in a)  # type: ignore[index, call-overload]
    if isinstance(a, pd.DataFrame):
        return a.equals(b)
    return a == b


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--draws", type=int, default=300)
    args = ap.parse_args()
    n = cores()
    if n < 2:
        sys.exit("this machine gives this process one core: there is nothing to compare")
    with tempfile.TemporaryDirectory() as tmp:
        one = timed(1, args.trials, args.draws, Path(tmp))
        many = timed(n, args.trials, args.draws, Path(tmp))
    print(f"notebook 07's formal checks (trials={args.trials}, draws={args.draws}): one process vs {n} workers")
    for name in one:
        (s1, r1), (sn, rn) = one[name], many[name]
        same = "same frames" if frames_equal(r1, rn) else "FRAMES DIFFER"
        print(f"  {name:<26} {s1:6.2f} s -> {sn:6.2f} s   speedup {s1 / sn:.2f}x   {same}")
    t1, tn = sum(v[0] for v in one.values()), sum(v[0] for v in many.values())
    print(f"  {'all':<26} {t1:6.2f} s -> {tn:6.2f} s   speedup {t1 / tn:.2f}x (workers' start included)")
