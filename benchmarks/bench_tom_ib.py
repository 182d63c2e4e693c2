"""Verification latency per belief set and the exact planner's solve time (tom_ib, clingo).

Belief sets of 3-12 statements are drawn from true and false facts about a mid-game state; each is parsed,
grounded, checked, and (when inconsistent) shrunk to a minimal core and explained, as the agents' loop does.

    .venv/bin/python benchmarks/bench_tom_ib.py [--sets 500]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from tomlib.asp import optimal_plan, parse_facts, verify
from tomlib.envs.city import Action, City, CityParams

TRUE = [
    "at(food_agent,d2).",
    "carries(food_agent,food,100).",
    "connected(d2,d4).",
    "connected(d1,d2).",
    "level(d4,food,20).",
    "health(d3,100).",
    "plan(move(d4)).",
    "expects(medical_agent,move(d3)).",
    "connected(d2,d3).",
    "at(medical_agent,d1).",
]
FALSE = [
    "at(food_agent,d3).",
    "carries(food_agent,food,120).",
    "connected(d1,d4).",
    "level(d4,food,50).",
    "plan(move(d1)).",
    "plan(supply(medicine,10)).",
    "health(d2,40).",
    "plan(supply(food,150)).",
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", type=int, default=500)
    args = ap.parse_args()
    city = City()
    state = city.reset()
    for a, act in [
        ("FOOD_AGENT", Action("MOVE", "d2")),
        ("MEDICAL_AGENT", Action("NONE")),
        ("SECURITY_AGENT", Action("NONE")),
    ]:
        state = city.apply(state, a, act)
    rng = random.Random(0)
    times, cores, inconsistent = [], [], 0
    for _ in range(args.sets):
        beliefs = rng.sample(TRUE + FALSE, rng.randint(3, 12))
        t0 = time.perf_counter()
        verdict = verify(city, state, "FOOD_AGENT", parse_facts(beliefs))
        times.append(time.perf_counter() - t0)
        if not verdict.consistent:
            inconsistent += 1
            cores.append(len(verdict.core))
    times.sort()
    p95 = times[int(0.95 * (len(times) - 1))]
    print(
        f"{args.sets} belief sets of 3-12 statements ({inconsistent} inconsistent, mean core size "
        f"{statistics.fmean(cores):.2f})"
    )
    print(
        f"verification latency: median {statistics.median(times) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms "
        f"(parse + ground + solve + minimal core + explanation)"
    )
    for rule in ("paper", "authors"):
        for unit in (10, 5, 1):
            plan = optimal_plan(CityParams(dynamics=rule), unit=unit, cache=False)
            print(
                f"optimal plan ({rule} dynamics, {unit}-unit amounts): final mean health {plan.mean_health:.2f}, "
                f"proven optimal {plan.proven_optimal}, ground + solve {plan.solve_seconds:.2f} s"
            )


if __name__ == "__main__":
    main()
