"""The class's exercises: how long a student waits for each, on this machine idle and loaded (two busy processes
beside it, as on a lab server a class shares): the answer and its checks in a fresh interpreter (imports included,
the worst case) and in a warm one (a kernel that ran the notebook above); the class plan's parameter changes, each a
notebook run on the class's copies; and how long grading one submission takes in the sandbox, a process per check,
against the same answers and checks run in one process.

    .venv/bin/python benchmarks/bench_exercises.py [--notebooks 01 06] [--no-runs]
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import multiprocessing as mp
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tomlib.classroom import prepare  # noqa: E402
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


def fresh(solution: str, tests: str, checks: int) -> float:
    """Seconds for the answer and its checks in a new interpreter (imports included)."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from benchmarks.bench_exercises import in_process; "
        "in_process(sys.argv[2], sys.argv[3], int(sys.argv[4]))"
    )
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, str(ROOT), solution, tests, str(checks)], check=True)
    return time.perf_counter() - t0


PLAN_RUNS = {  # the class plan's parameter changes (notebooks/README.md), each run on a class's copy
    "00 with tom_order = 2": ["00", "-p", "tom_order", "2"],
    "06 with the paper's dynamics, no model": ["06", "-p", "dynamics", "paper", "-p", "model", ""],
}


def plan_run(args: list[str], work: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "tomlib", "run", *args, "--force", "--notebooks-dir", str(work), "--results",
         str(work / "r")],
        check=True, capture_output=True,
    )  # fmt: skip
    return time.perf_counter() - t0


def loaded(measure: Callable[[], dict[str, float]]) -> dict[str, float]:
    """``measure()`` with two busy processes beside it."""
    stop = mp.Event()
    hogs = [mp.Process(target=_busy, args=(stop,)) for _ in range(2)]
    for h in hogs:
        h.start()
    try:
        return measure()
    finally:
        stop.set()
        for h in hogs:
            h.join()


def table(title: str, idle: dict[str, float], busy: dict[str, float]) -> None:
    print(f"\n| {title} | idle (s) | loaded (s) | loaded / idle |")
    print("| --- | ---: | ---: | ---: |")
    for name in idle:
        print(f"| {name} | {idle[name]:.2f} | {busy[name]:.2f} | {busy[name] / idle[name]:.1f} |")
    print(f"median loaded / idle: {statistics.median(busy[n] / idle[n] for n in idle):.1f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--notebooks", nargs="*", default=[])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-runs", action="store_true", help="skip the class plan's notebook runs")
    ap.add_argument("--runs-only", action="store_true", help="only the class plan's notebook runs")
    args = ap.parse_args()
    found = [e for nb in find_notebooks(args.notebooks) for e in exercises(nb)]
    print(f"{len(found)} exercises in {len({e.notebook for e in found})} notebooks; loaded = two busy processes on "
          f"{mp.cpu_count()} cores")  # fmt: skip

    def cold() -> dict[str, float]:
        return {e.name: fresh(e.solution, e.tests, len(e.checks)) for e in found}

    def warm() -> dict[str, float]:
        return {
            e.name: statistics.median(in_process(e.solution, e.tests, len(e.checks)) for _ in range(args.reps))
            for e in found
        }

    if not args.runs_only:
        table("exercise, fresh interpreter", cold(), loaded(cold))
        for e in found:  # warm: imports and first-call caches, as a student who ran the notebook above has them
            in_process(e.solution, e.tests, len(e.checks))
        idle = warm()
        table("exercise, warm kernel", idle, loaded(warm))
    if not args.no_runs:
        with tempfile.TemporaryDirectory() as tmp:
            work = prepare(Path(tmp) / "classroom")

            def runs() -> dict[str, float]:
                return {name: plan_run(a, work) for name, a in PLAN_RUNS.items()}

            runs()  # once to warm the caches a class's first run fills
            table("the class plan's runs", runs(), loaded(runs))
    if args.runs_only:
        return
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
