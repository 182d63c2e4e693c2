"""The engine checked on known truth: replications of each claim's design under a declared null and under the paper's
effect, judged exactly as a run's units are.

Each replication draws units with the claim's structure (its test, direction and margin; pairs when it pairs, strata
when it stratifies, clusters when it clusters) and a declared effect of A against B (or of A against its ``null``):

- under the null, the effect is 0, or the edge of the margin for claims of "similar", "no better" or "no worse"
  (there the claim is just false); a decided verdict either way is false;
- under the paper's effect, the "supported" rate is the power; the engine's own planner (:func:`power_at`) says what
  it should be at that n.

The spread is the paper's SD where it prints one (``sd: paper``), else one that makes the paper's effect half an SD
(``sd: assumed``). Clusters share a random effect of ``icc`` of the variance. Each claim is judged alone, so Holm's
correction is the identity here (the engine tests check it apart).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tomlib.claims._registry import Claim
from tomlib.claims._verdict import paper_distance, power_at, solve_power, verdicts

CLUSTER_SIZE = 5
ICC = 0.2  # the share of a unit's variance its cluster carries
RATE_SHIFT = 0.1  # the SD of a cluster's shift of a rate's probability, per unit of sqrt(ICC)
STRATA = 3


def design(claim: Claim) -> Claim:
    """The claim with its queries on synthetic columns (``cond``); its test, direction, margin, null and unit
    structure kept."""
    return claim.model_copy(
        update={
            "units": "calibration",
            "metric": "y",
            "select": "",
            "a": "cond == 'A'",
            "b": "cond == 'B'" if claim.b else "",
            "c": "cond == 'C'" if claim.c else "",
            "d": "cond == 'D'" if claim.d else "",
        }
    )


def declared_sd(claim: Claim) -> tuple[float, str]:
    if claim.paper_effect_sd:
        return float(claim.paper_effect_sd), "paper"
    scale = abs(claim.paper_effect or 0.0) or float(claim.margin or 0.0) or 1.0
    return 2 * scale, "assumed"


def null_effect(claim: Claim) -> float:
    """Where the claim is just false: no difference, or the edge of its margin."""
    m = float(claim.margin or 0.0)
    return {"not_greater": m, "not_less": -m, "equivalent": m}.get(claim.direction, 0.0)


def draw(claim: Claim, effect: float, n_units: int, rng: np.random.Generator, icc: float = ICC) -> pd.DataFrame:
    """One replication's units: ``n_units`` units of analysis (pairs count once; two-group designs split them).

    Means are normal with the declared SD (a pair shares a level, so its difference has that SD); rates are
    Bernoulli around 0.5 (or the claim's ``null``), independent within a pair; clusters share a level (``icc`` of
    the variance; for rates a shift of the cluster's probability); strata differ in level."""
    cols = claim.columns
    sd, _ = declared_sd(claim)
    base = float(claim.null or 0.0) if claim.test in ("mean", "rate") else 0.0
    if claim.test == "mean":
        return _frame(["A"] * n_units, base + effect + rng.normal(0, sd, n_units), {})
    if claim.test == "rate":
        p = min(max(base + effect, 0.0), 1.0)
        return _frame(["A"] * n_units, (rng.random(n_units) < p).astype(float), {})
    if claim.test == "gap_diff":  # four groups; the effect in A alone makes (A - B) - (C - D) equal to it
        per = max(n_units // 4, 2)
        extra = {k: (np.arange(4 * per) % STRATA).astype(str) for k in cols["strata"]}
        y = np.repeat([effect, 0.0, 0.0, 0.0], per) + rng.normal(0, sd, 4 * per)
        if cols["strata"]:
            y = y + np.array([float(v) for v in extra[cols["strata"][0]]])
        return _frame([g for g in "ABCD" for _ in range(per)], y, extra)
    rates = claim.test == "rate_diff"
    p0 = 0.5
    if cols["pair_on"]:  # the same units under both conditions
        n = n_units
        keys = {
            k: np.tile(np.arange(n) % STRATA if k in cols["strata"] else np.arange(n), 2).astype(str)
            for k in cols["pair_on"]
        }
        keys |= {k: np.tile(np.arange(n) % STRATA, 2).astype(str) for k in cols["strata"] if k not in keys}
        if rates:
            y = np.concatenate([rng.random(n) < _p(p0 + effect), rng.random(n) < p0]).astype(float)
        else:
            shared = rng.normal(0, sd, n)
            noise = sd / math.sqrt(2)
            y = np.concatenate([shared + effect + rng.normal(0, noise, n), shared + rng.normal(0, noise, n)])
        return _frame(["A"] * n + ["B"] * n, y, keys)
    half = max(n_units // 2, 1) * (CLUSTER_SIZE if cols["cluster_on"] else 1)  # clustered: n_units clusters
    extra = {k: (np.arange(2 * half) % STRATA).astype(str) for k in cols["strata"]}
    clusters = (np.arange(2 * half) // CLUSTER_SIZE).astype(str)  # a cluster belongs to one group
    extra |= {k: clusters for k in cols["cluster_on"] if k not in extra}
    shift = np.zeros(2 * half)
    if cols["cluster_on"]:
        bumps = {k: rng.normal(0, math.sqrt(icc)) for k in set(clusters)}
        shift = np.array([bumps[k] for k in clusters])
    group = np.repeat([1.0, 0.0], half)
    if rates:
        p = np.clip(p0 + effect * group + RATE_SHIFT * shift, 0, 1)
        y = (rng.random(2 * half) < p).astype(float)
    else:
        within = sd * math.sqrt(1 - icc) if cols["cluster_on"] else sd
        y = effect * group + rng.normal(0, within, 2 * half) + sd * shift
        if cols["strata"]:
            y = y + np.array([float(v) for v in extra[cols["strata"][0]]])  # strata differ in level
    return _frame(["A"] * half + ["B"] * half, y, extra)


def _frame(cond: list[str], y: np.ndarray, extra: dict[str, np.ndarray]) -> pd.DataFrame:
    frame = pd.DataFrame({"cond": cond, "value": y, "metric": "y", "source": "sim:calibration"})
    for k, v in extra.items():
        frame[k] = v
    return frame


def _p(x: float) -> float:
    return min(max(x, 0.0), 1.0)


@dataclass
class Calibration:
    """One claim's replications: false verdicts under the null, "supported" under the paper's effect."""

    claim_id: str
    n_units: int
    reps: int
    false_rate: float
    supported_rate: float | None
    power: float | None
    sd_from: str


def calibrate(claim: Claim, n_units: int, reps: int, rng: np.random.Generator) -> Calibration:
    """``reps`` replications of the claim's design at ``n_units`` under the null and under the paper's effect."""
    c = design(claim)
    false = 0
    for _ in range(reps):
        v = verdicts("cal", [c], {"calibration": draw(claim, null_effect(claim), n_units, rng)}).iloc[0]["verdict"]
        false += v in ("supported", "contradicted")
    sd, sd_from = declared_sd(claim)
    supported, power = None, None
    if claim.paper_effect is not None:
        effect = claim.paper_effect - (float(claim.null or 0.0) if claim.test in ("mean", "rate") else 0.0)
        hits = 0
        for _ in range(reps):
            got = verdicts("cal", [c], {"calibration": draw(claim, effect, n_units, rng)})
            hits += got.iloc[0]["verdict"] == "supported"
        supported = hits / reps
        base = 0.5 if claim.test == "rate_diff" else (float(claim.null or 0.0) if claim.test == "rate" else None)
        rows, deff = clustering(claim)
        power = power_at(
            c.model_copy(update={"paper_effect_sd": sd}), n_units, sd, base, rows_per_unit=rows, design_effect=deff
        )
    return Calibration(claim.claim_id, n_units, reps, false / reps, supported, power, sd_from)


def clustering(claim: Claim, icc: float = ICC) -> tuple[float, float]:
    """Rows per cluster and Kish's design effect 1 + (m - 1) rho of :func:`draw`'s clusters (for rates, rho is the
    share of a Bernoulli's variance that the cluster's shift of its probability carries)."""
    if not claim.columns["cluster_on"] or claim.columns["pair_on"]:
        return 1.0, 1.0
    rho = icc if claim.test != "rate_diff" else (RATE_SHIFT**2 * icc) / 0.25
    return float(CLUSTER_SIZE), 1 + (CLUSTER_SIZE - 1) * rho


def planned_units(claim: Claim, cap: int = 400) -> int:
    """The units the engine's planner asks for at the paper's effect and the declared SD (80% power), within what a
    replication can hold: at least enough for the design's strata and clusters, at most ``cap``."""
    sd, _ = declared_sd(claim)
    base = 0.5 if claim.test == "rate_diff" else (float(claim.null or 0.0) if claim.test == "rate" else None)
    distance = paper_distance(claim)
    n = None
    if distance is not None and distance > 0:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            n = solve_power(design(claim).model_copy(update={"paper_effect_sd": sd}), sd, distance, base)
    rows, deff = clustering(claim)
    n = n * deff / rows if n and math.isfinite(n) else n
    cols = claim.columns
    floor = 4 * STRATA * 2 if cols["strata"] else 8
    return int(min(max(n if n and math.isfinite(n) else 40, floor), cap))


def mc_bound(p: float, reps: int, z: float = 2.0) -> float:
    """``p`` plus ``z`` Monte-Carlo standard errors at ``reps`` replications."""
    return p + z * math.sqrt(p * (1 - p) / reps)
