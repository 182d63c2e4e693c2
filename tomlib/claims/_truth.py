"""A claim's declared truth on a simulated model's rows, and whether its verdict matches it.

A simulated model (``tomlib.sim``) declares its competence, and beside each of its units rows the experiments write
the value that competence implies (``expected``; empty where the sim has no closed form). The declared effect of a
claim is its own contrast (the same groups, pairs and strata as its verdict) computed on those expected values instead
of the outcomes: no sampling error, so it says exactly whether the claim holds for the sim.

- ``holds``: the declared effect lies inside the claim (beyond its margin, on its side); a "supported" verdict is
  right, a "contradicted" one is a false verdict.
- ``fails``: it lies on the other side; "contradicted" is right, "supported" false.
- ``boundary``: it sits exactly on the claim's boundary (no difference, or the edge of the margin); any decided verdict
  is false, which the engine promises happens at most ``alpha`` of the time.

An inconclusive verdict on a claim that holds or fails is not wrong: it is ``undecided`` (the run was too small).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from tomlib.claims._registry import Claim
from tomlib.claims._stats import DIFF, GAP, joined
from tomlib.claims._units import EXPECTED

TOLERANCE = 1e-9  # expected values are exact up to float rounding
TRUTH_COLUMNS = ["declared_effect", "declared_truth", "matches_truth"]


def point_effect(claim: Claim, frame: pd.DataFrame, column: str = EXPECTED) -> float:
    """The claim's effect on ``column`` with the weights its verdict uses: within pairs, then the equal-weight mean
    over strata that ran both conditions with 2 units or more each, else the difference of the groups' means (the
    mean of group A for one-sample claims); for a claim about each stratum, the weakest stratum's."""
    if claim.each_stratum:  # the weakest stratum's, as its verdict shows
        inner = claim.model_copy(update={"each_stratum": False, "strata": ""})
        got = [point_effect(inner, part, column) for _, part in frame.groupby(joined(frame, claim.columns["strata"]))]
        got = [e for e in got if math.isfinite(e)]
        return min(got, key=lambda e: inside(claim, e)) if got else math.nan
    a = frame[frame["group"] == "A"]
    if claim.test in ("mean", "rate"):
        return float(a[column].mean()) if len(a) else math.nan
    cols = claim.columns
    if cols["pair_on"]:
        means = frame.groupby([*cols["pair_on"], "group"])[column].mean().unstack("group").dropna()
        return float((means["A"] - means["B"]).mean()) if len(means) and {"A", "B"} <= set(means) else math.nan
    if cols["strata"] or cols["cluster_on"] or claim.test == "gap_diff":
        strata = cols["strata"]
        key = joined(frame, strata) if strata else pd.Series("all", index=frame.index)
        weights = GAP if claim.test == "gap_diff" else DIFF
        diffs = []
        for _, part in frame.groupby(key):
            cells = {g: part.loc[part["group"] == g, column] for g in weights}
            if all(len(v) >= 2 for v in cells.values()):
                diffs.append(sum(w * cells[g].mean() for g, w in weights.items()))
        return float(np.mean(diffs)) if diffs else math.nan
    b = frame[frame["group"] == "B"]
    return float(a[column].mean() - b[column].mean()) if len(a) and len(b) else math.nan


def inside(claim: Claim, effect: float) -> float:
    """How far ``effect`` lies inside the claim (positive: the claim holds; negative: it fails; 0: its boundary)."""
    delta = effect - (float(claim.null or 0.0) if claim.test in ("mean", "rate") else 0.0)
    m = float(claim.margin or 0.0)
    return {
        "greater": delta,
        "less": -delta,
        "not_greater": m - delta,
        "not_less": delta + m,
        "equivalent": m - abs(delta),
    }[claim.direction]


def declared_truth(claim: Claim, frame: pd.DataFrame) -> tuple[float, str] | None:
    """(declared effect, holds | fails | null) from the ``expected`` values of a claim's rows (:func:`groups`), or
    None when some row has no declared expectation (or the claim is a theorem, checked unit by unit)."""
    if claim.test == "all" or EXPECTED not in frame.columns or frame.empty or frame[EXPECTED].isna().any():
        return None
    effect = point_effect(claim, frame)
    if not math.isfinite(effect):
        return None
    d = inside(claim, effect)
    return effect, "holds" if d > TOLERANCE else "fails" if d < -TOLERANCE else "boundary"


def matches(verdict: str, truth: str) -> str:
    """``yes`` (the verdict is the truth, or inconclusive under a null), ``no`` (a false verdict) or ``undecided``
    (inconclusive where the declared effect is real: too few units, not wrong)."""
    if verdict == "inconclusive":
        return "yes" if truth == "boundary" else "undecided"
    right = {"supported": "holds", "contradicted": "fails"}.get(verdict)
    return "yes" if right == truth else "no"
