"""What the simulated model's declared competence implies for a units row: its expected value, where the sim's rules
give one in closed form.

The claims engine turns these into the declared truth of a claim (its contrast computed on the expected values
instead of the outcomes), so a rehearsal on the sim says whether each verdict matches the truth the sim was built
with. A row whose expectation has no closed form here gets NaN, and a claim resting on such a row has no declared
truth:

- FTM over all engineers (``ftm``, §6.2's; and ``ftm_team`` without matching, where the team is everyone): an engineer
  follows with ``SimSpec.follow_chance`` (its PM's order, matching from round 2, drift in ``follow_later``), the PM
  scores a follower N(``score_followed``, ``score_noise``) and any other N(``score_ignored``, ``score_noise``),
  rounded to 3 decimals, and trusts a score s with φ = (1 - s)/2 ≤ ε. With matching, ``ftm_team`` counts a coalition
  chosen from the scores, which has no closed form.
- Pass@1 of the team's answer (``pass``): an engineer's code is the reference with ``p_code``, independently of
  whether it followed, so whichever engineer the PM ranks first, the answer passes with ``p_code``.
- Debate round verdicts (``win``, ``draw``) when the sim is also the judge: a draw with ``judge_draw``, else the
  affirmative with ``judge_affirmative``, whoever spoke.

The programming team's engineers are assumed to be the default four (``Engineer1`` … ``Engineer4``), which only
matters where ``follow_later`` names some of them.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pandas as pd

from tomlib.sim._spec import SimSpec

ENGINEERS = tuple(f"Engineer{i}" for i in range(1, 5))
FTM_TABLES = {"table1", "table2", "table6"}
PASS_TABLES = {"table3", "table10", "table11", "table12"}
SCORE_DECIMALS = 3  # the sim's scores are rounded to 3 decimals (tomlib.sim._answers._clip)


def trust_chance(spec: SimSpec, mean: float, epsilon: float) -> float:
    """P(φ ≤ ε) for a score drawn N(mean, score_noise), clipped to [-1, 1] and rounded: s ≥ 1 - 2ε."""
    threshold = 1 - 2 * epsilon - 0.5 * 10**-SCORE_DECIMALS  # the rounding's half step
    if threshold <= -1:
        return 1.0
    if threshold > 1:
        return 0.0
    if spec.score_noise == 0:
        return float(max(-1.0, min(1.0, mean)) >= threshold)
    return 1 - NormalDist(mean, spec.score_noise).cdf(threshold)


def expected_ftm(spec: SimSpec, tom_order: int, matching: bool, round_: int, epsilon: float) -> float:
    """Expected FTM (%) over all four engineers in one round of one condition."""
    sender = f"ToM-{tom_order}" + ("+matching" if matching and round_ > 1 else "")
    followed = trust_chance(spec, spec.score_followed, epsilon)
    ignored = trust_chance(spec, spec.score_ignored, epsilon)
    chances = [spec.follow_chance(sender, e, round_ > 1) for e in ENGINEERS]
    return 100 * float(np.mean([p * followed + (1 - p) * ignored for p in chances]))


def expected_values(spec: SimSpec, rows: pd.DataFrame) -> pd.Series:
    """Each units row's expected value under ``spec`` (NaN where the sim declares none in closed form)."""
    return pd.Series([_expected(spec, r) for r in rows.to_dict("records")], index=rows.index, dtype=float)


def _expected(spec: SimSpec, r: dict) -> float:
    paper, table, metric = r.get("paper_id"), str(r.get("table_id")), r.get("metric")
    if paper != "coalition":
        return np.nan
    try:
        if table in FTM_TABLES and (metric == "ftm" or (metric == "ftm_team" and r.get("matching") == "no_matching")):
            matching = r.get("matching") == "matching"
            return expected_ftm(spec, int(r["tom_order"]), matching, int(r["round"]), float(r["epsilon"]))
        if table in PASS_TABLES and metric == "pass":
            return spec.p_code
        if table == "table4" and metric in ("win", "draw") and str(r.get("judge")) == spec.name:
            if metric == "draw":
                return spec.judge_draw
            aff = spec.judge_affirmative if r.get("side") == "affirmative" else 1 - spec.judge_affirmative
            return (1 - spec.judge_draw) * aff
    except (KeyError, TypeError, ValueError):  # a row without the columns its expectation needs
        return np.nan
    return np.nan
