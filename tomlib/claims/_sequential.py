"""Anytime-valid verdicts: a confidence sequence for each claim's effect, so that a run may look after every wave of
units and stop as soon as the claim is decided, with its error rates kept at any stopping time.

The method is the asymptotic confidence sequence of Waudby-Smith, Arbour, Sinha, Kennedy and Ramdas ("Time-uniform
central limit theory and asymptotic confidence sequences", Annals of Statistics, 2024): after ``t`` independent
observations with mean ``m_t`` and SD ``s_t``, the effect lies in ``m_t ± B(t s_t²) / t`` at every ``t`` at once
with probability at least ``1 - alpha`` (asymptotically), where ``B`` is the two-sided normal-mixture uniform boundary
of Howard, Ramdas, McAuliffe and Sekhon (Annals of Statistics, 2021), taken from their ``confseq`` package and tuned
to be tightest at the planned number of units.

A claim's observations are its independent units reduced to one number each, in the order they were sampled (the
order of the units file, which keeps each dataset's order): a pair's difference where the claim pairs (``pair_on``);
otherwise the i-th unit of A beside the i-th unit of B within each stratum (a cluster's rows averaged first, so the
cluster is the unit); a unit's value for a one-group claim. The verdict reads the sequence as the fixed-n engine
reads its interval (:func:`decide`), at level ``alpha`` two-sided. The sequence is asymptotic, so no verdict is given
on fewer than ``MIN_OBSERVATIONS`` observations (where the fixed-n engine turns to exact tests too).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tomlib.claims._registry import Claim
from tomlib.claims._stats import DIFF, GAP, joined
from tomlib.errors import TomlibError


class NeedsConfseq(TomlibError, ImportError):
    """confseq is not installed: it builds from C++ source, so only a run that stops when decided asks for it."""


def require_confseq() -> None:
    """Raise :class:`NeedsConfseq` (one line, naming the fix) unless confseq's boundaries import."""
    try:
        import confseq.boundaries  # noqa: F401
    except ImportError:
        raise NeedsConfseq(
            "stopping when decided needs confseq (confidence sequences), which builds from C++ source (g++): run "
            "./reproduce.sh --stop-when-decided once, which builds it into .venv (./reproduce.sh test does too)"
        ) from None


def _boundary(v: float, alpha: float, v_opt: float) -> float:
    require_confseq()
    from confseq.boundaries import normal_mixture_bound

    return float(normal_mixture_bound(np.array([v]), alpha, v_opt, alpha, False)[0])


def _in_order(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One row per unit (the mean of its rows), in the order units first appear."""
    first = frame.groupby(keys, sort=False)["value"].mean().reset_index()
    return first


def observations(claim: Claim, frame: pd.DataFrame) -> np.ndarray:
    """The claim's independent observations in sampling order (see the module's docstring); ``frame`` is what
    :func:`tomlib.claims._verdict.groups` returns."""
    cols = claim.columns
    a = frame[frame["group"] == "A"]
    if not claim.b:  # the values themselves: :func:`decide` sets them against the claim's null
        unit = cols["cluster_on"] or cols["pair_on"]
        values = _in_order(a, unit)["value"] if unit else a["value"]
        return values.to_numpy(float)
    if cols["pair_on"]:
        keys = cols["pair_on"]
        a = frame[frame["group"] == "A"].groupby(keys, sort=False)["value"].mean()
        b = frame[frame["group"] == "B"].groupby(keys, sort=False)["value"].mean()
        return (a - b.reindex(a.index)).dropna().to_numpy(float)  # in the order A's units were sampled
    unit = cols["cluster_on"]
    strata = [s for s in cols["strata"] if s not in unit] or None
    out: list[float] = []
    parts = frame.groupby(strata, sort=False) if strata else [(None, frame)]
    for _, part in parts:
        sides = {}
        weights = GAP if claim.test == "gap_diff" else DIFF
        for g in weights:
            rows = part[part["group"] == g]
            sides[g] = (_in_order(rows, unit)["value"] if unit else rows["value"]).to_numpy(float)
        k = min(len(v) for v in sides.values())
        out += list(sum(w * sides[g][:k] for g, w in weights.items()))
    return np.asarray(out, float)


@dataclass
class Sequence:
    """The confidence sequence at the last look: mean, bounds and the observations it rests on."""

    effect: float
    low: float
    high: float
    n: int


MIN_OBSERVATIONS = 10
"""Below this many observations the sequence is left unbounded: its normal approximation does not yet hold (a
calibration bench looked at 3-6 observations and erred in 8-11% of nulls)."""


def confidence_sequence(x: np.ndarray, alpha: float, n_opt: int) -> Sequence:
    """The asymptotic confidence sequence at ``t = len(x)``, tightest near ``n_opt`` observations; unbounded below
    ``MIN_OBSERVATIONS``."""
    t = len(x)
    if t < MIN_OBSERVATIONS:
        return Sequence(float(x.mean()) if t else math.nan, -math.inf, math.inf, t)
    m, s = float(x.mean()), float(x.std(ddof=1))
    if s == 0:  # every observation the same: no spread to bound yet; wait (one more unit moves it or not)
        s = 1e-12
    v_opt = max(n_opt, 2) * s * s
    half = _boundary(t * s * s, alpha, v_opt) / t
    return Sequence(m, m - half, m + half, t)


def decide(claim: Claim, low: float, high: float) -> str:
    """supported | contradicted | inconclusive from an interval, as the fixed-n engine's two-sided tests read it."""
    base = float(claim.null or 0.0) if claim.test in ("mean", "rate") else 0.0
    m = float(claim.margin or 0.0)
    d = claim.direction
    if d == "greater":
        yes, no = low > base, high < base
    elif d == "less":
        yes, no = high < base, low > base
    elif d == "not_greater":
        yes, no = high < base + m, low > base + m
    elif d == "not_less":
        yes, no = low > base - m, high < base - m
    else:  # equivalent
        yes, no = low > base - m and high < base + m, low > base + m or high < base - m
    return "supported" if yes else "contradicted" if no else "inconclusive"


def sequential_verdict(claim: Claim, frame: pd.DataFrame, alpha: float, n_opt: int) -> tuple[str, Sequence]:
    """The claim's verdict on the units so far, valid at whatever look a run stops, and its confidence sequence.

    Args:
        claim: the claim to judge.
        frame: its units with a ``group`` column (:func:`tomlib.claims.groups`), in sampling order.
        alpha: the level, two-sided (a run splits its alpha over the claims it waits for).
        n_opt: the observations the sequence is tightest at (the planned units).
    """
    seq = confidence_sequence(observations(claim, frame), alpha, n_opt)
    return decide(claim, seq.low, seq.high), seq


def first_units(claim: Claim, frame: pd.DataFrame, n: int) -> pd.DataFrame:
    """The rows of the first ``n`` units of analysis in sampling order: pairs where the claim pairs; else, per group,
    the first ``n / 2`` clusters or units (``n`` of them for a one-group claim)."""
    cols = claim.columns

    def first(rows: pd.DataFrame, key: list[str], k: int) -> pd.DataFrame:
        if not key:
            return rows.head(k)
        ids = joined(rows, key)
        return rows[ids.isin(list(dict.fromkeys(ids))[:k])]

    if cols["pair_on"]:
        return first(frame, cols["pair_on"], n)
    per = max(n // (2 if claim.b else 1), 1)
    return pd.concat([first(rows, cols["cluster_on"], per) for _, rows in frame.groupby("group", sort=False)])
