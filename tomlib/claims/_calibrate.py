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
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tomlib.claims._registry import Claim
from tomlib.claims._verdict import decide, judge_claim, paper_distance, power_at, solve_power

CLUSTER_SIZE = 5
ICC = 0.2  # the share of a unit's variance its cluster carries
RATE_SHIFT = 0.1  # the SD of a cluster's shift of a rate's probability, per unit of sqrt(ICC)
STRATA = 3


def design(claim: Claim) -> Claim:
    """The claim with its queries on synthetic columns (``cond``); its test, direction, margin, null and unit
    structure kept.

    Args:
        claim: a registered claim, whose design a calibration draws units for.
    """
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
    """The spread to draw a claim's units with, and where it comes from: the paper's SD (``paper``), else twice the
    paper's effect, the margin or 1 (``assumed``).

    Args:
        claim: the claim whose spread is asked for.
    """
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
    if claim.test in ("mean", "rate"):  # a claim about each stratum: the same effect in every one
        strata = {k: (np.arange(n_units) % STRATA).astype(str) for k in cols["strata"]}
        if claim.test == "mean":
            return _frame(["A"] * n_units, base + effect + rng.normal(0, sd, n_units), strata)
        p = min(max(base + effect, 0.0), 1.0)
        return _frame(["A"] * n_units, (rng.random(n_units) < p).astype(float), strata)
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
        # drawn in the clusters' order: a set's order of strings changes with PYTHONHASHSEED, and so did the check
        bumps = {k: rng.normal(0, math.sqrt(icc)) for k in np.unique(clusters)}
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
        false += verdict_alone(c, draw(claim, null_effect(claim), n_units, rng)) in ("supported", "contradicted")
    sd, sd_from = declared_sd(claim)
    supported, power = None, None
    if claim.paper_effect is not None:
        effect = claim.paper_effect - (float(claim.null or 0.0) if claim.test in ("mean", "rate") else 0.0)
        hits = 0
        for _ in range(reps):
            hits += verdict_alone(c, draw(claim, effect, n_units, rng)) == "supported"
        supported = hits / reps
        base = 0.5 if claim.test == "rate_diff" else (float(claim.null or 0.0) if claim.test == "rate" else None)
        rows, deff = clustering(claim)
        planned = c.model_copy(update={"paper_effect_sd": sd})
        if claim.each_stratum:  # every one of the STRATA strata must be decided, each on its share of the units
            one = power_at(planned, n_units // STRATA, sd, base, rows_per_unit=rows, design_effect=deff)
            power = None if one is None else one**STRATA
        else:
            power = power_at(planned, n_units, sd, base, rows_per_unit=rows, design_effect=deff)
    return Calibration(claim.claim_id, n_units, reps, false / reps, supported, power, sd_from)


def verdict_alone(claim: Claim, units: pd.DataFrame, source: str = "sim:calibration") -> str:
    """The verdict :func:`verdicts` gives a claim judged alone on ``units`` (its Holm family of one: p unadjusted),
    without the rest of its row (power, coverage), which a calibration does not read."""
    j = judge_claim(claim, {claim.units: units}, source)
    if j is None:
        return "not reproduced"
    return decide(source, j, j.p_decision if math.isfinite(j.p_decision) else None)[0]


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
    """``p`` plus ``z`` Monte-Carlo standard errors at ``reps`` replications: the most a rate of ``p`` reads as by
    chance.

    Args:
        p: the true rate (an error rate's ``alpha``).
        reps: the replications it is estimated from.
        z: standard errors allowed, 2 (about 97.7% one-sided).
    """
    return p + z * math.sqrt(p * (1 - p) / reps)


def path_of(claim: Claim) -> str:
    """The engine's path for a claim's design (:mod:`tomlib.claims._stats`), as the calibration groups them."""
    cols = claim.columns
    if claim.test == "gap_diff":
        return "difference of gaps"
    if claim.each_stratum:
        return f"{claim.test} in each stratum"
    if claim.test in ("mean", "rate"):
        return f"one {claim.test} against a value"
    kind = "rates" if claim.test == "rate_diff" else "means"
    if cols["pair_on"]:
        return f"paired {kind}" + (", clustered" if cols["cluster_on"] else "")
    if cols["strata"] or cols["cluster_on"]:
        return f"{kind} within strata" + (", clustered" if cols["cluster_on"] else "")
    return f"two samples of {kind}" + (" against a margin" if claim.margin is not None else "")


ENGINE_CHECK_REPS = 20
"""Replications per path, size and truth in REPORT's engine check (``benchmarks/bench_claims.py``: 200 a claim)."""
SMALL_UNITS = 8
"""The small size the engine check also draws: below ``SMALL`` a side, where p-values are exact or permutations."""


def engine_check(papers: tuple[str, ...], reps: int = ENGINE_CHECK_REPS, seed: int = 0) -> pd.DataFrame:
    """The engine on declared truth, small enough for every report: for each design path the registries use, its
    first claim, replicated ``reps`` times at its planned units (at most 120) under a declared null (a decided verdict
    is false) and under the paper's effect (the supported rate against the power the engine computes), and at
    :data:`SMALL_UNITS` under the null. Seeded: the same rows every time for the same registries and engine."""
    from tomlib.claims._registry import load_claims

    first: dict[str, Claim] = {}
    for paper in papers:
        for c in load_claims(paper):
            if c.test != "all":
                first.setdefault(path_of(c), c)
    rows = []
    for i, (path, claim) in enumerate(sorted(first.items())):
        for size, n in (("planned", planned_units(claim, cap=120)), ("small", SMALL_UNITS)):
            # at 8 units the null only: the planner's power is for planned sizes (a stratum of 8 holds one or two)
            asked = claim if size == "planned" else claim.model_copy(update={"paper_effect": None})
            got = calibrate(asked, n, reps, np.random.default_rng([seed, i, n]))
            rows.append(
                {
                    "path": path,
                    "claim_id": claim.claim_id,
                    "size": size,
                    "n_units": n,
                    "reps": reps,
                    "false_verdicts": round(got.false_rate * reps),
                    "supported_rate": got.supported_rate,
                    "power": got.power,
                }
            )
    return pd.DataFrame(rows)


ENGINE_CHECK = "claims_calibration.csv"
"""The engine check's rows in a results folder, beside ``claims.csv``."""


def engine_key(papers: tuple[str, ...], reps: int, seed: int) -> str:
    """What the engine check's rows are a function of: the registries, the engine's code, ``reps`` and ``seed``."""
    import hashlib

    from tomlib.claims._registry import claims_dir

    h = hashlib.sha256(f"{','.join(papers)}\0{reps}\0{seed}\0".encode())
    for path in [*(claims_dir() / f"{p}.csv" for p in papers), *sorted(Path(__file__).parent.glob("*.py"))]:
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def write_engine_check(
    results: str | os.PathLike[str] | None = None, reps: int = ENGINE_CHECK_REPS, seed: int = 0
) -> Path:
    """:func:`engine_check` written to ``results/claims_calibration.csv``, unless the rows there were made by the
    same registries, engine, ``reps`` and ``seed`` (then they are the same rows, and kept). The rows are also kept in
    the cache folder (:func:`tomlib.paths.cache_dir`, when it is this user's alone), so that every results folder and
    every run of the same code reuses them: seeded, they would be the same.

    Args:
        results: the results folder (default ``results/``).
        reps: replications per claim and case, 20 (the error rates REPORT shows, bounded by :func:`mc_bound`).
        seed: the draws' seed.
    """
    from tomlib.claims._registry import PAPERS
    from tomlib.errors import UsageError
    from tomlib.paths import cache_dir, private_dir, read_own, results_dir, write_atomic

    path = results_dir(results) / ENGINE_CHECK
    key = engine_key(PAPERS, reps, seed)
    if path.exists():
        try:
            if set(pd.read_csv(path, usecols=["engine"])["engine"].astype(str)) == {key}:
                return path
        except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError):
            pass  # unreadable or from another version: made again
    try:
        cached: Path | None = private_dir(cache_dir(), parents=True) / f"engine-check-{key}.csv"
    except (OSError, UsageError):  # no cache of this user's alone: the check is only made here
        cached = None
    raw = read_own(cached) if cached is not None else None
    if raw is None:
        with warnings.catch_warnings():  # statsmodels' power solvers warn where they cannot converge; nan is handled
            warnings.simplefilter("ignore")
            raw = engine_check(PAPERS, reps, seed).assign(engine=key).to_csv(index=False).encode()
        if cached is not None:
            write_atomic(cached, raw)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, raw)
    return path
