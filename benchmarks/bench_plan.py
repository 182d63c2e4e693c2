"""Stopping when decided against the fixed-n plan, on the claims engine's calibration draws (declared truth).

For every claim with a sampled test and a paper effect that the claim can hold at, both designs judge replications
drawn with the claim's structure (:func:`tomlib.claims._calibrate.draw`) under a declared null and under the paper's
effect:

- fixed n: the engine's plan for 80% power (:func:`tomlib.claims._calibrate.planned_units`), judged once at the end
  by the fixed-n engine;
- sequential: up to ``--max-factor`` times that n, looked at after each of ``--waves`` equal waves, stopped at the
  first look where the anytime-valid confidence sequence (:mod:`tomlib.claims._sequential`) decides the claim.

Units stand for calls: a claim's calls grow with its units, so the share of units is the share of calls. Then the
planner's fixed-n calls and the full profile's, for ``--model`` on each paper (``python -m tomlib plan``'s numbers,
from the pilot in ``results/``), with the sequential share applied.

    .venv/bin/python benchmarks/bench_plan.py [--reps 200] [--waves 8] [--max-factor 2] [--workers 2]
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

from tomlib.claims import ALPHA, PAPERS, load_claims, verdicts
from tomlib.claims._calibrate import design, draw, mc_bound, null_effect, planned_units
from tomlib.claims._sequential import first_units, sequential_verdict
from tomlib.claims._verdict import groups, paper_distance


@dataclass
class Row:
    claim_id: str
    n_fixed: int
    fixed_false: float
    fixed_power: float
    seq_false: float
    seq_power: float
    seq_share_effect: float  # mean units used / n_fixed, under the paper's effect
    seq_share_null: float


def _sequential(claim, frame, n_fixed: int, n_max: int, waves: int) -> tuple[str, int]:
    c = design(claim)
    grouped = groups(c, frame)
    for k in range(1, waves + 1):
        n = math.ceil(n_max * k / waves)
        verdict, _ = sequential_verdict(c, first_units(c, grouped, n), ALPHA, n_fixed)
        if verdict != "inconclusive" or k == waves:
            return verdict, n
    raise AssertionError("unreachable")


def one(args: tuple[str, int, int, int, float]) -> Row:
    claim_id, reps, seed, waves, factor = args
    warnings.simplefilter("ignore")  # statsmodels' solvers warn where they stop at 2 units; handled by the planner
    claim = next(c for p in PAPERS for c in load_claims(p) if c.claim_id == claim_id)
    rng = np.random.default_rng(seed)
    n_fixed = planned_units(claim)
    n_max = math.ceil(n_fixed * factor)
    effect = claim.paper_effect - (float(claim.null or 0.0) if claim.test in ("mean", "rate") else 0.0)
    out: dict[str, list] = {k: [] for k in ("ff", "fp", "sf", "sp", "ue", "un")}
    for _ in range(reps):
        for truth, e in (("null", null_effect(claim)), ("effect", effect)):
            fixed = verdicts("bench", [design(claim)], {"calibration": draw(claim, e, n_fixed, rng)}).iloc[0]["verdict"]
            seq, used = _sequential(claim, draw(claim, e, n_max, rng), n_fixed, n_max, waves)
            if truth == "null":
                out["ff"].append(fixed in ("supported", "contradicted"))
                out["sf"].append(seq in ("supported", "contradicted"))
                out["un"].append(used / n_fixed)
            else:
                out["fp"].append(fixed == "supported")
                out["sp"].append(seq == "supported")
                out["ue"].append(used / n_fixed)
    m = {k: float(np.mean(v)) for k, v in out.items()}
    return Row(claim_id, n_fixed, m["ff"], m["fp"], m["sf"], m["sp"], m["ue"], m["un"])


def planner_calls(model: str) -> list[str]:
    """The planner's fixed-n calls against the full profile, per paper, for ``model`` (pilot: results/)."""
    from tomlib.planning import make_plan

    lines = []
    for paper in PAPERS:
        try:
            plan = make_plan(model, load_claims(paper))
        except Exception as exc:  # a model the planner refuses, or no pilot: said, not hidden
            lines.append(f"{paper}: no plan ({exc})")
            continue
        t, f = plan.total, plan.full_total
        lines.append(f"{paper}: fixed-n plan {t.calls:,} calls (${t.usd or 0:,.2f}); full profile {f.calls:,} calls")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=200, help="replications per claim and truth (default 200)")
    parser.add_argument("--waves", type=int, default=8, help="looks, at equal steps up to the cap (default 8)")
    parser.add_argument("--max-factor", type=float, default=2.0, help="the sequential cap, times the fixed n")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--model", default="gpt-4o-mini", help="the model whose plan prices the calls")
    parser.add_argument("--claims", default="", help="only these claim ids (comma-separated)")
    args = parser.parse_args()
    wanted = {c for c in args.claims.split(",") if c}
    claims = [
        c
        for p in PAPERS
        for c in load_claims(p)
        if c.test != "all"
        and c.paper_effect is not None
        and (paper_distance(c) or 0) > 0
        and (not wanted or c.claim_id in wanted)
    ]
    start = time.perf_counter()
    jobs = [(c.claim_id, args.reps, 2000 + i, args.waves, args.max_factor) for i, c in enumerate(claims)]
    with ProcessPoolExecutor(args.workers) as pool:
        rows = list(pool.map(one, jobs))
    print(f"{'claim':52s} {'n':>4s} {'false f/s':>11s} {'power f/s':>13s} {'units s/f (effect, null)':>26s}")
    for r in rows:
        print(
            f"{r.claim_id:52s} {r.n_fixed:4d} {r.fixed_false:5.1%}/{r.seq_false:5.1%} "
            f"{r.fixed_power:6.1%}/{r.seq_power:6.1%} {r.seq_share_effect:12.0%} {r.seq_share_null:12.0%}"
        )
    total = len(rows) * args.reps
    ff, sf = (float(np.mean([getattr(r, k) for r in rows])) for k in ("fixed_false", "seq_false"))
    fp, sp = (float(np.mean([getattr(r, k) for r in rows])) for k in ("fixed_power", "seq_power"))
    share = float(np.mean([r.seq_share_effect for r in rows]))
    share_null = float(np.mean([r.seq_share_null for r in rows]))
    print(
        f"\n{len(rows)} claims x {args.reps} replications per truth, {args.waves} waves up to {args.max_factor:g}x "
        f"the fixed n, {time.perf_counter() - start:.0f} s; MC bound on false verdicts {mc_bound(ALPHA, total):.2%}"
    )
    print(f"units under the null: sequential {share_null:.0%} of fixed-n (it runs to its cap when nothing is there)")
    for line in planner_calls(args.model):
        print(f"{line}; sequential at {share:.0%} of the fixed-n plan")
    print(
        f"sequential: {share:.0%} of fixed-n calls; false verdicts {sf:.1%} (fixed-n {ff:.1%}); "
        f"power {sp:.1%} (fixed-n {fp:.1%})"
    )


if __name__ == "__main__":
    main()
