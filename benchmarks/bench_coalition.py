"""Exact stable coalitions (the ICLR draft's notion, min_size = ⌈n/2⌉) with clingo vs brute force.

Prints, per n, the mean and worst time over random instances (uniform scores in [-1, 1], three decimals) of:
clingo finding a stable structure or proving none exists; clingo returning the optimal stable structure; and
brute-force enumeration of every structure (where it finishes), with the ratio measured in this run.

    .venv/bin/python benchmarks/bench_coalition.py [--instances 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from tomlib.coalition import brute_force_stable, make_instance, objective, solve_coalitions


def run(instances: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    print(f"{'n':>3} {'clingo: any stable (s)':>24} {'clingo: optimal (s)':>21} {'brute force (s)':>17} "
          f"{'brute/clingo any':>17} {'brute/clingo opt':>17} {'stable':>7}")  # fmt: skip
    for n in (5, 8, 10, 12):
        any_t, opt_t, brute_t, stable = [], [], [], 0
        for _ in range(instances):
            inst = make_instance(rng.uniform(-1, 1, (n, n)).round(3), epsilon=0.25)
            t0 = time.perf_counter()
            sol = solve_coalitions(inst, optimize=False)
            any_t.append(time.perf_counter() - t0)
            stable += sol.stable_exists
            t0 = time.perf_counter()
            best = solve_coalitions(inst, optimize=True)
            opt_t.append(time.perf_counter() - t0)
            assert best.stable_exists == sol.stable_exists
            if n <= 10:
                t0 = time.perf_counter()
                found = brute_force_stable(inst)
                brute_t.append(time.perf_counter() - t0)
                assert bool(found) == sol.stable_exists
                if found:
                    assert best.objective == min(objective(inst, s) for s in found)

        def fmt(ts: list[float]) -> str:
            return f"{np.mean(ts):.3f} (max {max(ts):.3f})" if ts else "—"

        r_any = f"{np.mean(brute_t) / np.mean(any_t):.1f}x" if brute_t else "—"
        r_opt = f"{np.mean(brute_t) / np.mean(opt_t):.1f}x" if brute_t else "—"
        print(f"{n:>3} {fmt(any_t):>24} {fmt(opt_t):>21} {fmt(brute_t):>17} {r_any:>17} {r_opt:>17} "
              f"{stable:>4}/{instances}")  # fmt: skip
    print(
        "n = 12: brute force not run (it enumerates every coalition structure and every candidate blocking coalition)"
    )


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--instances", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    run(args.instances, args.seed)
