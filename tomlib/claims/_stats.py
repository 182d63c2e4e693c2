"""Effects, intervals and one-sided p-values on the unit of analysis, from scipy.stats and statsmodels.

Every estimate says which unit it was computed on (pairs, strata, clusters or units) and how. The rules, following
Miller (2024), "Adding Error Bars to Evals":

- units matched across the two conditions (``pair_on``: the same task run under both) are compared pair by pair, and
  the pair is the unit (a one-sample t on the differences; an exact sign-flip permutation test below 10 pairs);
- units that share a cluster (``cluster_on``: several rounds of one task) get cluster-robust standard errors (OLS with
  ``cov_type="cluster"``);
- a comparison within strata (``strata``: within each task) is the equal-weight mean of the within-stratum
  differences, with heteroskedasticity-robust (HC3) errors, a linear contrast of an OLS fit;
- two independent samples: Welch's t, with a permutation test below 10 units a side;
- rates: Wilson intervals for one rate, Newcombe's for a difference, exact binomial and Fisher tests;
- a difference that is the same in every unit (a deterministic formal agent) has no sampling error: its p-value is the
  exact permutation probability of a separation that complete.

The small-sample rule holds on every path and against any value the claim compares with (0, a ``null``, the edge of
a ``margin``): below ``SMALL`` units (pairs, clusters) a side, the p-value is that of an exact or permutation test of
the effect against that value (:class:`Exact`), never of a t or normal reference.
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import special, stats

SMALL = 10  # below this many units (or pairs, a side), p-values come from exact or permutation tests
PERMUTATIONS = 9999


DIFF = {"A": 1.0, "B": -1.0}
"""The contrast of a comparison: A - B."""
GAP = {"A": 1.0, "B": -1.0, "C": -1.0, "D": 1.0}
"""The contrast of a difference of gaps: (A - B) - (C - D), e.g. aligned minus misaligned in Table 4 against the same
gap in Table 1 (``gap_diff``)."""

EXACT_LIMIT = 100_000
"""Relabellings enumerated at most for an exact stratified test; past it, ``PERMUTATIONS`` random ones."""


@dataclass
class Exact:
    """An exact or permutation test of the effect against any value ``theta``, kept with the units it needs.

    ``kind``: ``sign_flip`` (``a``: the pairs' differences, or one sample's values: every sign of ``a - theta``),
    ``cluster_flip`` (``a``: the pairs' differences, ``a_strata``: their clusters; the signs of whole clusters),
    ``two_sample`` (``a``, ``b``: the groups' values; labels shuffled after ``a - theta``), ``strata`` (``a``, ``b``
    with ``a_strata``, ``b_strata``: labels shuffled within each stratum after ``a - theta``; the statistic is the
    equal-weight mean of the strata's differences), ``binomial`` (``a``: 0/1 outcomes; the exact binomial test at
    ``theta``), ``fisher`` (``a``, ``b``: two groups' 0/1 outcomes; Fisher's exact test, defined at ``theta = 0``
    only) or ``interaction`` (``a``: every unit's value, ``b``: its group A-D, ``a_strata``: its stratum; the
    residuals of the additive fit permuted within strata, for a difference of gaps). A shift by ``theta`` assumes the
    effect moves every unit alike (a location shift), the usual reading of a permutation test against a value other
    than 0."""

    kind: str
    a: np.ndarray
    b: np.ndarray | None = None
    a_strata: np.ndarray | None = None
    b_strata: np.ndarray | None = None
    _seen: dict[float, tuple[float, float] | None] = field(default_factory=dict, repr=False, compare=False)

    def p(self, theta: float) -> tuple[float, float] | None:
        """One-sided p-values ``(effect > theta, effect < theta)``; None where this test is not defined at ``theta``
        (Fisher's away from 0)."""
        if theta not in self._seen:
            self._seen[theta] = self._test(theta)
        return self._seen[theta]

    def _test(self, theta: float) -> tuple[float, float] | None:
        if self.kind == "sign_flip":
            return _perm_one_sample(self.a - theta)
        if self.kind == "cluster_flip" and self.a_strata is not None:
            return _flip_clusters(self.a - theta, self.a_strata)
        if self.kind == "two_sample" and self.b is not None:
            return _perm_two_sample(self.a - theta, self.b)
        if self.kind == "strata" and self.b is not None:
            return _perm_strata(self.a - theta, self.b, self.a_strata, self.b_strata)
        if self.kind == "interaction" and self.b is not None and self.a_strata is not None:
            return _perm_interaction(self.a, self.b, self.a_strata, theta)
        if self.kind == "binomial":
            k, n = int(np.sum(self.a)), len(self.a)
            if not 0 <= theta <= 1:
                return (0.0, 1.0) if theta < 0 else (1.0, 0.0)
            return tuple(float(stats.binomtest(k, n, theta, alternative=alt).pvalue) for alt in ("greater", "less"))  # type: ignore[return-value]
        if self.kind == "fisher" and self.b is not None and theta == 0:
            ka, kb = int(self.a.sum()), int(self.b.sum())
            table = [[ka, len(self.a) - ka], [kb, len(self.b) - kb]]
            return tuple(float(stats.fisher_exact(table, alternative=alt)[1]) for alt in ("greater", "less"))  # type: ignore[return-value]
        return None


@dataclass
class Estimate:
    """An effect (A - B, or A for one group) with what its uncertainty rests on."""

    effect: float
    se: float  # 0 when every unit agrees (no sampling error to estimate)
    df: float  # degrees of freedom of the t reference (inf: normal)
    n_units: int  # units of analysis: pairs, strata x units, clusters or units
    method: str
    sd: float | None = None  # the unit-level SD, for power
    rows_per_unit: float = 1.0  # rows per unit of analysis (a cluster's rows), for power
    design_effect: float = 1.0  # variance against rows sampled independently (clusters), for power
    exact: Exact | None = None  # the exact or permutation test of a small sample, against any value
    separation: float = 1.0  # no variation: the exact probability of a separation this complete (1: none measured)
    ci: tuple[float, float] | None = None  # a 95% interval other than effect ± t*se (Wilson, Newcombe)
    in_clusters: int | None = None  # clustered: the pairs or rows the ``n_units`` clusters hold

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        if self.ci is not None and level == 0.95:
            return self.ci
        if self.se == 0:  # no spread among the units: a point when there are enough units to trust that, else unknown
            return (self.effect, self.effect) if self.n_units >= 2 * SMALL else (math.nan, math.nan)
        half = stats.t.ppf(0.5 + level / 2, self.df) * self.se
        return (self.effect - half, self.effect + half)

    def p_above(self, theta: float) -> float:
        """One-sided p-value for H1: effect > theta."""
        if self.se == 0:
            return self.separation if self.effect > theta else 1.0
        if (exact := self.exact and self.exact.p(theta)) is not None:
            return exact[0]
        return float(stats.t.sf((self.effect - theta) / self.se, self.df))

    def p_below(self, theta: float) -> float:
        """One-sided p-value for H1: effect < theta."""
        if self.se == 0:
            return self.separation if self.effect < theta else 1.0
        if (exact := self.exact and self.exact.p(theta)) is not None:
            return exact[1]
        return float(stats.t.cdf((self.effect - theta) / self.se, self.df))


def _perm_one_sample(d: np.ndarray) -> tuple[float, float]:
    """Exact sign-flip permutation p-values ``(mean > 0, mean < 0)`` of ``d`` (all 2**n flips for small n)."""
    return tuple(  # type: ignore[return-value]
        float(
            stats.permutation_test(
                (d,), np.mean, permutation_type="samples", alternative=alt, n_resamples=PERMUTATIONS, random_state=0
            ).pvalue
        )
        for alt in ("greater", "less")
    )


def _flip_clusters(d: np.ndarray, clusters: np.ndarray) -> tuple[float, float]:
    """Exact p-values ``(mean > 0, mean < 0)`` of ``d`` over every flip of whole clusters' signs (2**clusters)."""
    ids = pd.factorize(clusters)[0]
    sums = np.bincount(ids, weights=d)
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=len(sums))))
    draws = signs @ sums
    observed, tol = sums.sum(), 1e-9 * max(1.0, abs(sums.sum()))
    return float(np.mean(draws >= observed - tol)), float(np.mean(draws <= observed + tol))


def _perm_two_sample(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Permutation p-values ``(mean a - mean b > 0, < 0)``: every relabelling for small groups."""
    return tuple(  # type: ignore[return-value]
        float(
            stats.permutation_test(
                (a, b),
                lambda x, y: np.mean(x) - np.mean(y),
                permutation_type="independent",
                alternative=alt,
                n_resamples=PERMUTATIONS,
                random_state=0,
            ).pvalue
        )
        for alt in ("greater", "less")
    )


def _perm_strata(
    a: np.ndarray, b: np.ndarray, a_strata: np.ndarray | None, b_strata: np.ndarray | None
) -> tuple[float, float]:
    """Permutation p-values ``(T > 0, T < 0)`` of T, the equal-weight mean over strata of mean A - mean B, with the
    labels relabelled within each stratum: every relabelling when there are at most ``EXACT_LIMIT`` (the exact
    test), else ``PERMUTATIONS`` random ones (p = (1 + as extreme) / (1 + drawn), never 0)."""
    a_strata = np.zeros(len(a), int) if a_strata is None else a_strata
    b_strata = np.zeros(len(b), int) if b_strata is None else b_strata
    names = sorted(set(a_strata.tolist()) & set(b_strata.tolist()))
    parts = [(a[a_strata == s], b[b_strata == s]) for s in names]
    observed = float(np.mean([x.mean() - y.mean() for x, y in parts]))
    total = math.prod(special.comb(len(x) + len(y), len(x), exact=True) for x, y in parts)
    draws: np.ndarray
    if total <= EXACT_LIMIT:
        draws = np.zeros(1)
        for x, y in parts:  # each stratum's differences over all its relabellings, summed over strata (outer sums)
            pooled, k = np.concatenate([x, y]), len(x)
            picks = np.array(list(itertools.combinations(range(len(pooled)), k)), dtype=int)
            chosen = np.zeros((len(picks), len(pooled)), bool)
            np.put_along_axis(chosen, picks, True, axis=1)
            diffs = (chosen @ pooled) / k - (~chosen @ pooled) / (len(pooled) - k)
            draws = (draws[:, None] + diffs[None, :]).ravel()
        draws /= len(parts)
        extra = 0
    else:
        rng = np.random.default_rng(0)
        draws = np.zeros(PERMUTATIONS)
        for x, y in parts:
            shuffled = rng.permuted(np.tile(np.concatenate([x, y]), (PERMUTATIONS, 1)), axis=1)
            draws += shuffled[:, : len(x)].mean(axis=1) - shuffled[:, len(x) :].mean(axis=1)
        draws /= len(parts)
        extra = 1  # the observed relabelling counts among the draws
    tol = 1e-9 * max(1.0, abs(observed))  # sums in another order differ in the last bits
    greater = (np.sum(draws >= observed - tol) + extra) / (len(draws) + extra)
    less = (np.sum(draws <= observed + tol) + extra) / (len(draws) + extra)
    return float(greater), float(less)


def _perm_interaction(values: np.ndarray, groups: np.ndarray, strata: np.ndarray, theta: float) -> tuple[float, float]:
    """Permutation p-values ``(T > theta, T < theta)`` of the difference of gaps (A - B) - (C - D), the equal-weight
    mean over strata, by Freedman and Lane's permutation of residuals (Anderson & Legendre 1999 found it the most
    reliable test of an interaction): A's values shifted by ``-theta``, then in each stratum the additive fit (a level
    for A and B against C and D, another for A and C against B and D) is taken away and its residuals are permuted
    within the stratum, ``PERMUTATIONS`` times. The statistic is studentized (the contrast over its standard error
    from the cells' variances), which keeps the test near its level with a few units a cell, where the raw contrast
    rejected a true null about twice as often as it should. Approximate, not exact: no relabelling of an interaction
    is exact with the two main effects unknown."""
    y = values.astype(float) - theta * (groups == "A")
    rng = np.random.default_rng(0)
    names = sorted(set(strata.tolist()))
    effect, var = np.zeros(PERMUTATIONS + 1), np.zeros(PERMUTATIONS + 1)
    for s in names:
        at = strata == s
        ys, gs = y[at], groups[at]
        first = np.isin(gs, ["A", "B"]).astype(float)
        left = np.isin(gs, ["A", "C"]).astype(float)
        design = np.column_stack([np.ones(len(ys)), first, left])
        residuals = ys - design @ np.linalg.lstsq(design, ys, rcond=None)[0]
        # row 0: the units as observed; the others: residuals permuted (the additive fit has no difference of gaps)
        rows = np.vstack([ys, rng.permuted(np.tile(residuals, (PERMUTATIONS, 1)), axis=1)])
        for g, w in GAP.items():
            cell = gs == g
            k = int(cell.sum())
            part = rows[:, cell]
            effect += w * part.mean(axis=1)
            var += part.var(axis=1, ddof=1) / k if k > 1 else 0.0
    t = effect / np.sqrt(np.maximum(var, 1e-300))
    observed, draws = t[0], t[1:]
    tol = 1e-9 * max(1.0, abs(observed))
    greater = (np.sum(draws >= observed - tol) + 1) / (PERMUTATIONS + 1)
    less = (np.sum(draws <= observed + tol) + 1) / (PERMUTATIONS + 1)
    return float(greater), float(less)


def _separation(sizes: list[tuple[int, int]]) -> float:
    """The exact permutation probability that relabelling within each stratum reproduces a complete separation of
    A from B: the product over strata of 1 / C(n_a + n_b, n_a)."""
    # whole numbers divided: C(800, 400) is past any float, 1 / it is correctly rounded (to 0 there)
    return 1 / math.prod(special.comb(na + nb, na, exact=True) for na, nb in sizes)


def paired(frame: pd.DataFrame, pair_on: list[str], cluster_on: list[str] | None = None) -> Estimate:
    """A against B unit by unit: the mean of within-pair differences (pairs where both conditions ran). Pairs that
    share a cluster (``cluster_on``, a subset of ``pair_on``: one task paired under several configurations) are not
    independent: their mean gets a cluster-robust error with a t on clusters - 1 degrees of freedom, the clusters
    count as the units, and below ``SMALL`` clusters whole clusters' signs are flipped."""
    means = frame.groupby([*pair_on, "group"])["value"].mean().unstack("group").dropna()
    d = (means["A"] - means["B"]).to_numpy(dtype=float)
    n = len(d)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, "paired: no pair ran under both conditions")
    clusters = joined(means.index.to_frame(index=False), cluster_on).to_numpy() if cluster_on else None
    if clusters is not None and len(set(clusters.tolist())) < n:  # a cluster of one pair each is no cluster
        return _clustered_pairs(d, clusters, pair_on, cluster_on or [])
    sd = float(np.std(d, ddof=1)) if n > 1 else math.nan
    se = sd / math.sqrt(n) if n > 1 else math.nan
    est = Estimate(float(d.mean()), 0.0 if sd == 0 else se, n - 1, n, f"paired over {', '.join(pair_on)}", sd=sd)
    if n > 1 and sd == 0:
        est.separation = 0.5**n
    elif n < SMALL and n > 1:
        est.exact = Exact("sign_flip", d)
        est.method += " (exact sign-flip test)"
    return est


def _clustered_pairs(d: np.ndarray, clusters: np.ndarray, pair_on: list[str], cluster_on: list[str]) -> Estimate:
    """The mean of pair differences ``d`` whose pairs share ``clusters``: statsmodels' cluster-robust error on an
    intercept-only fit (the mean), clusters as the units."""
    from statsmodels.regression.linear_model import OLS

    ids, g = pd.factorize(clusters)[0], len(set(clusters.tolist()))
    said = f"{len(d)} pairs in {g} cluster{'s' if g != 1 else ''}"
    label = f"paired over {', '.join(pair_on)}, clustered by {', '.join(cluster_on)} ({said})"
    if g < 2:
        return Estimate(float(d.mean()), math.nan, math.nan, g, label + ": fewer than 2 clusters", in_clusters=len(d))
    sd = float(np.std(d, ddof=1))
    if sd == 0:
        return Estimate(
            float(d.mean()), 0.0, math.inf, g, label + " (no variation)", sd=0.0, separation=0.5**g, in_clusters=len(d)
        )
    fit = OLS(d, np.ones((len(d), 1))).fit(cov_type="cluster", cov_kwds={"groups": ids}, use_t=True)
    se = float(fit.bse[0])
    est = Estimate(float(d.mean()), se, g - 1, g, label, sd=sd, rows_per_unit=len(d) / g, in_clusters=len(d))
    est.design_effect = max(1.0, (se / (sd / math.sqrt(len(d)))) ** 2)
    if g < SMALL:
        est.exact = Exact("cluster_flip", d, a_strata=ids)
        est.method += " (exact test: signs of whole clusters flipped)"
    return est


def joined(frame: pd.DataFrame, columns: list[str]) -> pd.Series:
    """Each row's values of ``columns`` as text joined by ``|`` (a stratum or cluster id), column by column rather
    than row by row (what ``agg("|".join, axis=1)`` gives, a hundred times faster on a units table)."""
    text = frame[columns].astype(str)
    out = text[columns[0]]
    for c in columns[1:]:
        out = out + "|" + text[c]
    return out


def stratified(
    frame: pd.DataFrame, strata: list[str], cluster_on: list[str], weights: dict[str, float] = DIFF
) -> Estimate:
    """The equal-weight mean over strata of the groups' contrast (``weights``: A - B, or the difference of gaps
    :data:`GAP`), as a contrast of an OLS fit with a mean per stratum and group; cluster-robust errors when units
    share a cluster, HC3 otherwise (Miller 2024, as the module docstring says)."""
    from statsmodels.regression.linear_model import OLS  # not statsmodels.api: 0.4 s less to import

    gap = len(weights) > 2
    df = _usable_strata(frame, strata, weights)
    if df.empty:
        return Estimate(math.nan, math.nan, math.nan, 0, "no stratum ran every group with 2 units or more each")
    names, design, contrast = _cell_contrast(df, weights)
    model = OLS(df["value"].to_numpy(float), design)
    sizes = [(int((g["group"] == "A").sum()), int((g["group"] == "B").sum())) for _, g in df.groupby("_stratum")]
    within = df.groupby("_cell")["value"].std(ddof=1)
    sd = float(np.sqrt(np.mean(np.square(within)))) if len(within) else math.nan
    where = f"within {', '.join(strata)}" if strata else "two samples"
    label = f"difference of gaps (A - B) - (C - D) {where if strata else ''}".strip() if gap else where
    # a difference of gaps without spread has no relabelling to measure it by: no evidence unless exact (formal)
    alike = 1.0 if gap else _separation(sizes)
    if (within == 0).all():  # every unit of a condition alike in every stratum: no sampling error
        effect = float(contrast @ df.groupby("_cell")["value"].mean().reindex(names).to_numpy())
        return Estimate(effect, 0.0, math.inf, len(df), label + " (no variation)", sd=0.0, separation=alike)
    if cluster_on:
        df["_cluster"] = joined(df, cluster_on)
        per_group = df.groupby("group")["_cluster"].nunique()
        if per_group.reindex(list(weights)).fillna(0).min() < 2:
            return Estimate(math.nan, math.nan, math.nan, int(per_group.sum()), "fewer than 2 clusters a group")
        groups = pd.factorize(df["_cluster"])[0]
        fit = model.fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
        n_clusters = int(groups.max() + 1)
        label += f", clustered by {', '.join(cluster_on)} ({n_clusters} clusters)"
        n_units, df_t = n_clusters, n_clusters - 1
    else:
        fit = model.fit(cov_type="HC3", use_t=True)
        n_units, df_t = len(df), fit.df_resid
    tt = fit.t_test(contrast)
    effect, se = float(np.squeeze(tt.effect)), float(np.squeeze(tt.sd))
    if not se > 1e-9 * max(1.0, abs(effect)):  # rounding, not sampling error: as if every unit agreed
        return _rounding_only(df, effect, n_units, label, sizes, gap=gap, clustered=bool(cluster_on))
    est = Estimate(effect, se, float(df_t), n_units, label, sd=sd)
    if cluster_on:  # what clustering costs, for the planner: Kish's design effect, measured on this contrast
        est.in_clusters = len(df)
        naive = float(np.squeeze(model.fit(cov_type="HC3").t_test(contrast).sd))
        est.rows_per_unit = len(df) / n_units
        est.design_effect = max(1.0, (se / naive) ** 2) if naive > 0 else 1.0
    est.exact, how = _small_gaps(df, bool(cluster_on)) if gap else _small_strata(df, bool(cluster_on))
    est.method += how
    return est


def _usable_strata(frame: pd.DataFrame, strata: list[str], weights: dict[str, float]) -> pd.DataFrame:
    """``frame``'s rows in the strata where every group of ``weights`` has 2 units or more (a spread needs two), with
    their stratum (``_stratum``; ``all`` without strata) and cell (``_cell``: stratum and group)."""
    df = frame.copy()
    df["_stratum"] = joined(df, strata) if strata else "all"
    counts = df.groupby(["_stratum", "group"]).size().unstack("group").reindex(columns=list(weights)).fillna(0)
    usable = counts[(counts >= 2).all(axis=1)].index  # a spread needs two units a group
    df = df[df["_stratum"].isin(usable)]
    if df.empty:
        return df
    df["_cell"] = df["_stratum"] + "#" + df["group"]
    return df


def _cell_contrast(df: pd.DataFrame, weights: dict[str, float]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The cells' names, the design matrix of a mean per cell with no intercept (``value ~ 0 + C(_cell)``) and the
    contrast that weighs each stratum's groups by ``weights``, the strata equally."""
    names = sorted(df["_cell"].unique())
    design = (df["_cell"].to_numpy()[:, None] == np.array(names, dtype=object)[None, :]).astype(float)
    strata_ids = sorted(df["_stratum"].unique())
    contrast = np.zeros(len(names))
    for s in strata_ids:
        for g, w in weights.items():
            contrast[names.index(f"{s}#{g}")] += w / len(strata_ids)
    return names, design, contrast


def _rounding_only(
    df: pd.DataFrame,
    effect: float,
    n_units: int,
    label: str,
    sizes: list[tuple[int, int]],
    *,
    gap: bool,
    clustered: bool,
) -> Estimate:
    """An effect whose standard error is rounding, not sampling error, read as if every unit agreed: the exact
    probability of a separation that complete (of the clusters, when clustered); none for a difference of gaps."""
    in_clusters = len(df) if clustered else None
    if gap:
        return Estimate(
            effect, 0.0, math.inf, n_units, label + " (no variation)", sd=0.0, separation=1.0, in_clusters=in_clusters
        )
    if clustered:
        sizes = [
            (
                int(g.loc[g["group"] == "A", "_cluster"].nunique()),
                int(g.loc[g["group"] == "B", "_cluster"].nunique()),
            )
            for _, g in df.groupby("_stratum")
        ]
    return Estimate(
        effect,
        0.0,
        math.inf,
        n_units,
        label + " (no variation)",
        sd=0.0,
        separation=_separation(sizes),
        in_clusters=in_clusters,
    )


def _small_gaps(df: pd.DataFrame, clustered: bool) -> tuple[Exact | None, str]:
    """The permutation test of a difference of gaps with fewer than ``SMALL`` units (clusters) in some group, and
    what to add to its method; ``(None, "")`` with more. A cluster counts as one unit: its rows' mean."""
    units = df.groupby(["_stratum", "group", "_cluster"])["value"].mean().reset_index() if clustered else df
    if units.groupby("group").size().min() >= SMALL:
        return None, ""
    exact = Exact(
        "interaction",
        units["value"].to_numpy(float),
        units["group"].to_numpy(object),
        units["_stratum"].to_numpy(object),
    )
    return exact, " (permutation test: residuals of the additive fit permuted within strata, Freedman-Lane)"


def _small_strata(df: pd.DataFrame, clustered: bool) -> tuple[Exact | None, str]:
    """The permutation test of a stratified comparison with fewer than ``SMALL`` units (clusters, when clustered) a
    side, and what to add to its method; ``(None, "")`` with more. A cluster counts as one unit: its rows' mean."""
    units = df.groupby(["_stratum", "group", "_cluster"])["value"].mean().reset_index() if clustered else df
    sides = units.groupby("group").size().reindex(["A", "B"]).fillna(0)
    if sides.min() >= SMALL:
        return None, ""
    a, b = units[units["group"] == "A"], units[units["group"] == "B"]
    exact = Exact(
        "strata",
        a["value"].to_numpy(float),
        b["value"].to_numpy(float),
        a["_stratum"].to_numpy(object),
        b["_stratum"].to_numpy(object),
    )
    what = "clusters relabelled within strata" if clustered else "labels relabelled within strata"
    return exact, f" (permutation test: {what})"


def welch(frame: pd.DataFrame) -> Estimate:
    """Two independent samples: Welch's t (a permutation test below ``SMALL`` units a side)."""
    a = frame.loc[frame["group"] == "A", "value"].to_numpy(float)
    b = frame.loc[frame["group"] == "B", "value"].to_numpy(float)
    if len(a) < 2 or len(b) < 2:
        return Estimate(math.nan, math.nan, math.nan, len(a) + len(b), "two samples: fewer than 2 units a side")
    sd = float(math.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2))
    if a.var() == 0 and b.var() == 0:
        return Estimate(
            float(a.mean() - b.mean()),
            0.0,
            math.inf,
            len(a) + len(b),
            "two samples (no variation)",
            sd=0.0,
            separation=_separation([(len(a), len(b))]),
        )
    with warnings.catch_warnings():  # one side alike throughout: its variance is exactly 0, not a cancellation
        if a.var() == 0 or b.var() == 0:
            warnings.filterwarnings("ignore", "Precision loss occurred", RuntimeWarning)
        res = stats.ttest_ind(a, b, equal_var=False)
    lo, hi = res.confidence_interval(0.95)
    se = (a.mean() - b.mean()) / res.statistic if res.statistic else (hi - lo) / (2 * stats.t.ppf(0.975, res.df))
    est = Estimate(
        float(a.mean() - b.mean()), float(abs(se)), float(res.df), len(a) + len(b), "two samples (Welch)", sd=sd
    )
    if min(len(a), len(b)) < SMALL:
        est.exact = Exact("two_sample", a, b)
        est.method += " (permutation test)"
    return est


def one_sample(values: np.ndarray, null: float) -> Estimate:
    """A mean against a value: one-sample t (an exact sign-flip test below ``SMALL`` units)."""
    d = values.astype(float) - null
    n = len(d)
    if n < 2:
        return Estimate(math.nan, math.nan, math.nan, n, "one sample: fewer than 2 units")
    sd = float(d.std(ddof=1))
    est = Estimate(float(values.mean()), sd / math.sqrt(n), n - 1, n, "one sample (t)", sd=sd)
    if sd == 0:
        est.se, est.separation = 0.0, 0.5**n
    elif n < SMALL:
        est.exact, est.method = Exact("sign_flip", values.astype(float)), "one sample (exact sign-flip test)"
    return est


def rate(values: np.ndarray, null: float) -> Estimate:
    """A rate of 0/1 units against ``null``: Wilson interval, exact binomial tests."""
    from statsmodels.stats.proportion import proportion_confint

    n, k = len(values), int(np.sum(values))
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, "rate: no units")
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    p = k / n
    se = math.sqrt(max(p * (1 - p), 1e-12) / n)
    est = Estimate(p - 0.0, se, math.inf, n, "rate (Wilson interval, exact binomial test)", sd=math.sqrt(p * (1 - p)))
    est.ci, est.exact = (float(lo), float(hi)), Exact("binomial", values.astype(float))
    est.effect = p
    return est


def rate_diff(frame: pd.DataFrame) -> Estimate:
    """Two independent rates: Newcombe's interval for the difference, Fisher's exact test."""
    from statsmodels.stats.proportion import confint_proportions_2indep

    a = frame.loc[frame["group"] == "A", "value"].to_numpy(float)
    b = frame.loc[frame["group"] == "B", "value"].to_numpy(float)
    if len(a) == 0 or len(b) == 0:
        return Estimate(math.nan, math.nan, math.nan, len(a) + len(b), "rates: a group has no units")
    ka, kb = int(a.sum()), int(b.sum())
    lo, hi = confint_proportions_2indep(ka, len(a), kb, len(b), method="newcomb", compare="diff")
    pa, pb = ka / len(a), kb / len(b)
    se = math.sqrt(max(pa * (1 - pa), 1e-12) / len(a) + max(pb * (1 - pb), 1e-12) / len(b))
    pooled = (ka + kb) / (len(a) + len(b))
    est = Estimate(pa - pb, se, math.inf, len(a) + len(b), "rates (Newcombe interval, Fisher exact test)")
    est.ci, est.exact, est.sd = (float(lo), float(hi)), Exact("fisher", a, b), math.sqrt(pooled * (1 - pooled))
    return est
