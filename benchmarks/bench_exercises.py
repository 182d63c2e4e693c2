"""The class's exercises: how long a student waits for each (the solution, then its checks, in one interpreter as in a
kernel), on this machine idle and loaded (two busy processes beside it, as on a lab server), and how long grading
one submission's exercises takes in the sandbox, against running the same answers and checks in one process.

    .venv/bin/python benchmarks/bench_exercises.py [--notebooks 01 06]
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import multiprocessing as mp
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tomlib.grading import exercises, run_check  # noqa: E402
from tomlib.grading._grade import _one_case  # noqa: E402
from tomlib.runner import find_notebooks  # noqa: E402


def _busy(stop: mp.Event) -> None:  # type: ignore[valid-type]
    x = 0
    while not stop.is_set():  # type: ignore[attr-defined]
        for _ in range(100_000):
            x += 1


def in_process(solution: str, tests: str, checks: int) -> float:
    """Seconds for the solution, then each check, run here (what a student's kernel does)."""
    from otter.test_files import ExceptionTestFile

    t0 = time.perf_counter()
    env: dict[str, object] = {}
    result = eval(compile(solution, "answer", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT), env)
    if asyncio.iscoroutine(result):
        asyncio.run(result)
    for i in range(checks):
        ExceptionTestFile.from_string(_one_case(tests, i)).test_cases[0].body.call_func(env)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--notebooks", nargs="*", default=[])
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    found = [e for nb in find_notebooks(args.notebooks) for e in exercises(nb)]
    print(f"{len(found)} exercises in {len({e.notebook for e in found})} notebooks")
    for e in found:  # warm: imports and first-call caches, as a student who ran the notebook above has them
        in_process(e.solution, e.tests, len(e.checks))
    idle = {e.name: statistics.median(in_process(e.solution, e.tests, len(e.checks)) for _ in range(args.reps))
            for e in found}  # fmt: skip
    stop = mp.Event()
    hogs = [mp.Process(target=_busy, args=(stop,)) for _ in range(2)]
    for h in hogs:
        h.start()
    try:
        loaded = {
            e.name: statistics.median(in_process(e.solution, e.tests, len(e.checks)) for _ in range(args.reps))
            for e in found
        }
    finally:
        stop.set()
        for h in hogs:
            h.join()
    print("\n| exercise | idle (s) | loaded (s) | loaded / idle |")
    print("| --- | ---: | ---: | ---: |")
    for e in found:
        print(f"| {e.name} | {idle[e.name]:.2f} | {loaded[e.name]:.2f} | {loaded[e.name] / idle[e.name]:.1f} |")
    ratio = statistics.median(loaded[n] / idle[n] for n in idle)
    print(f"\nmedian loaded/idle: {ratio:.1f}x (two busy processes on {mp.cpu_count()} cores)")
    # grading: one student's answers (the solutions) in the sandbox, a process per check, against in-process
    t0 = time.perf_counter()
    outcomes = [run_check(e, c, e.solution) for e in found for c in e.checks]
    sandboxed = time.perf_counter() - t0
    here = sum(idle.values())
    passed = sum(o.passed for o in outcomes)
    print(
        f"grading one submission ({len(outcomes)} checks, {passed} passed): {sandboxed:.1f} s in the sandbox, one "
        f"after another; the same in one process {here:.1f} s; sandbox / in-process {sandboxed / here:.1f}x "
        f"({sandboxed / len(outcomes):.2f} s a check)"
    )


if __name__ == "__main__":
    main()
