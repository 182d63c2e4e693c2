"""Sandbox throughput: every HumanEval canonical solution checked against its own tests, 1 worker vs 2, and what
the isolation costs (2 workers, isolated vs resource limits only, in the same run).

Prints checks per second for each, the ratios measured in this run, and which isolation applied. Run it as an
ordinary user too (e.g. ``setpriv --reuid=nobody ...``) to time the user-namespace path.

    .venv/bin/python benchmarks/bench_sandbox.py
"""

from __future__ import annotations

import os
import time

from tomlib.datasets import humaneval
from tomlib.sandbox import Limits, check_many


def main() -> None:
    tasks = humaneval()
    jobs = [(t.reference, t.tests) for t in tasks]
    rates = {}
    runs = {
        "1 worker, isolated": (1, Limits(), "isolated"),
        "2 workers, isolated": (2, Limits(), "isolated"),
        "2 workers, rlimits only": (2, Limits(namespaces=False), "rlimits-only"),
    }
    isolation: dict[str, list[str]] = {}
    for name, (workers, limits, mode) in runs.items():
        os.environ["TOMLIB_SANDBOX"] = mode
        t0 = time.perf_counter()
        results = check_many(jobs, workers=workers, limits=limits)
        seconds = time.perf_counter() - t0
        rates[name] = len(jobs) / seconds
        isolation[name] = results[0].isolation
        passed = sum(r.passed for r in results)
        print(f"{name}: {passed}/{len(jobs)} passed in {seconds:.1f} s = {rates[name]:.1f} checks/s")
    print(f"speedup 2 vs 1 workers: {rates['2 workers, isolated'] / rates['1 worker, isolated']:.2f}x")
    print(f"isolation costs: {rates['2 workers, rlimits only'] / rates['2 workers, isolated']:.2f}x the time a check")
    print(f"isolation (uid {os.geteuid()}):", ", ".join(isolation["2 workers, isolated"]))


if __name__ == "__main__":
    main()
