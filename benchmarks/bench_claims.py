"""The claims engine calibrated on known truth: every claim of the three papers, replicated under a declared null and
under the paper's effect (:mod:`tomlib.claims._calibrate`), judged exactly as a run's units are.

For each claim with a sampled test it prints its design path, the units (the engine's own plan for 80% power at the
paper's effect, within 400), the false-verdict rate under the null, the "supported" rate under the paper's effect
and the power the engine computes at that n, and the false-verdict rate under the null at 8 units (where p-values
are exact or from permutations). Then the pooled figures, with the Monte-Carlo bound (alpha + 2 SE at the pooled count)
and the mean gap between the supported rate and the computed power. Appendix G's theorems (``test=all``) hold or
fail unit by unit with no sampling error and are not replicated. Claims with no printed effect (ToM+IB's) have no
power to check; their null still counts.

    .venv/bin/python benchmarks/bench_claims.py [--reps 200] [--workers 2]

Then, end to end through the sim server (:mod:`tomlib.experiments._calibration`), one claim per paper the sim can
declare a truth for: ToM+IB's ToM+IB-beats-Base (city agents idle with a declared probability per configuration)
adaptive_tom's aligned-beats-misaligned in Memory-1 (matrix-game agents err with a declared probability; at 0.5
every action is a coin flip), and the coalition paper's matching-raises-FTM on HumanEval (engineers follow a PM who
leads a coalition at a declared rate). ``--e2e-reps`` blocks each (5 units a condition; the coalition's 10 tasks run
with and without matching); 0 skips it, ``--e2e-papers`` picks the cases.
"""

from __future__ import annotations

import argparse
import math
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from tomlib.claims import ALPHA, PAPERS, load_claims
from tomlib.claims._calibrate import SMALL_UNITS, Calibration, calibrate, mc_bound, path_of, planned_units


def one(args: tuple[str, int, int]) -> tuple[Calibration, Calibration]:
    """A claim at its planned units (null and paper's effect), and at ``SMALL_UNITS`` under the null only (the exact
    and permutation paths)."""
    claim_id, reps, seed = args
    claim = next(c for p in PAPERS for c in load_claims(p) if c.claim_id == claim_id)
    planned = calibrate(claim, planned_units(claim), reps, np.random.default_rng(seed))
    null_only = claim.model_copy(update={"paper_effect": None})
    return planned, calibrate(null_only, SMALL_UNITS, reps, np.random.default_rng(seed + 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=200, help="replications per claim and truth (default 200)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--e2e-reps", type=int, default=200, help="end-to-end replications per case (sim server)")
    parser.add_argument("--e2e-papers", default="tom_ib,adaptive_tom,coalition", help="end-to-end cases to run")
    args = parser.parse_args()
    claims = [c for p in PAPERS for c in load_claims(p) if c.test != "all"]
    skipped = sum(c.test == "all" for p in PAPERS for c in load_claims(p))
    start = time.perf_counter()
    jobs = [(c.claim_id, args.reps, 1000 + i) for i, c in enumerate(claims)]
    with ProcessPoolExecutor(args.workers) as pool:
        both = list(pool.map(one, jobs))
    got, small = [b[0] for b in both], [b[1] for b in both]
    print(f"{'claim':52s} {'path':38s} {'n':>4s} {'false':>6s} {'supported':>9s} {'power':>6s} {'false@8':>7s}  sd")
    for r, s in zip(got, small, strict=True):
        sup = "" if r.supported_rate is None else f"{r.supported_rate:.1%}"
        power = "" if r.power is None or math.isnan(r.power) else f"{r.power:.1%}"
        path = path_of(next(c for c in claims if c.claim_id == r.claim_id))
        print(
            f"{r.claim_id:52s} {path:38s} {r.n_units:4d} {r.false_rate:6.1%} {sup:>9s} {power:>6s} "
            f"{s.false_rate:7.1%}  {r.sd_from}"
        )
    total = len(got) * args.reps
    false = sum(r.false_rate for r in got) / len(got)
    false_small = sum(r.false_rate for r in small) / len(small)
    powered = [r for r in got if r.supported_rate is not None and r.power is not None and not math.isnan(r.power)]
    sup = sum(r.supported_rate for r in powered) / len(powered)  # type: ignore[misc]
    power = sum(r.power for r in powered) / len(powered)  # type: ignore[misc]
    worst = max(powered, key=lambda r: abs(r.supported_rate - r.power))  # type: ignore[operator]
    print(
        f"\n{len(got)} claims x {args.reps} replications per truth ({skipped} theorems not replicated), "
        f"{time.perf_counter() - start:.0f} s"
    )
    print(f"null: {false:.2%} false verdicts of {total} (bound alpha + 2 MC SE: {mc_bound(ALPHA, total):.2%})")
    print(
        f"null at {SMALL_UNITS} units (exact and permutation tests): {false_small:.2%} false verdicts of {total} "
        f"(bound {mc_bound(ALPHA, total):.2%})"
    )
    gaps = [abs(r.supported_rate - r.power) for r in powered]  # type: ignore[operator]
    bounds = [0.05 + 2 * math.sqrt(r.power * (1 - r.power) / args.reps) for r in powered]  # type: ignore[operator]
    within = sum(g <= b for g, b in zip(gaps, bounds, strict=True))
    print(
        f"paper's effect, {len(powered)} claims with an effect and a power: mean gap {100 * sum(gaps) / len(gaps):.1f} "
        f"points; {within} within 5 points plus 2 MC SE; largest gap {worst.claim_id} "
        f"{worst.supported_rate:.1%} vs {worst.power:.1%}"
    )
    if args.e2e_reps:
        from tomlib.experiments._calibration import CASES, end_to_end

        for paper in [p for p in args.e2e_papers.split(",") if p in CASES]:
            t = time.perf_counter()
            e = end_to_end(paper, reps=args.e2e_reps)
            print(
                f"end to end through the sim server ({e.claim_id}, {e.reps} replications x {e.per_block} units a "
                f"condition, {time.perf_counter() - t:.0f} s): false verdicts {e.false_rate:.1%} under the declared "
                f"null (bound {mc_bound(ALPHA, e.reps):.1%}); supported {e.supported_rate:.1%} vs computed power "
                f"{e.power:.1%} at the declared effect ({e.effect:+.2f}, SD {e.sd:.2f})"
            )
    print(
        f"calibration: false verdicts {false:.1%} under the null (alpha {ALPHA:.0%}); "
        f"supported {sup:.1%} vs computed power {power:.1%} under the paper's effect"
    )


if __name__ == "__main__":
    main()
