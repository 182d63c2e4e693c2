"""Sandbox throughput: every HumanEval canonical solution checked against its own tests, 1 worker vs 2.

Prints checks per second for each, the speedup measured in this run, and which isolation applied.

    .venv/bin/python benchmarks/bench_sandbox.py
"""

from __future__ import annotations

import time

from tomlib.datasets import humaneval
from tomlib.sandbox import check_many


def main() -> None:
    tasks = humaneval()
    jobs = [(t.reference, t.tests) for t in tasks]
    rates = {}
    for workers in (1, 2):
        t0 = time.perf_counter()
        results = check_many(jobs, workers=workers)
        seconds = time.perf_counter() - t0
        rates[workers] = len(jobs) / seconds
        passed = sum(r.passed for r in results)
        print(f"{workers} worker(s): {passed}/{len(jobs)} passed in {seconds:.1f} s = {rates[workers]:.1f} checks/s")
    print(f"speedup 2 vs 1 workers: {rates[2] / rates[1]:.2f}x")
    print("isolation:", ", ".join(results[0].isolation))


if __name__ == "__main__":
    main()
