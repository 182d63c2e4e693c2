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
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import special, stats

SMALL = 10  # below this many units (or pairs, a side), p-values come from exact or permutation tests
PERMUTATIONS = 9999


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
    exact: dict[str, float] = field(default_factory=dict)  # one-sided p-values against 0 from exact/permutation tests
    ci: tuple[float, float] | None = None  # a 95% interval other than effect ± t*se (Wilson, Newcombe)

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        if self.ci is not None and level == 0.95:
            return self.ci
        if self.se == 0:  # no spread among the units: a point when there are enough units to trust that, else unknown
            return (self.effect, self.effect) if self.n_units >= 2 * SMALL else (math.nan, math.nan)
        half = stats.t.ppf(0.5 + level / 2, self.df) * self.se
        return (self.effect - half, self.effect + half)

    def p_above(self, theta: float) -> float:
        """One-sided p-value for H1: effect > theta."""
        if theta == 0 and "greater" in self.exact:
            return self.exact["greater"]
        if self.se == 0:
            return self._separated(self.effect > theta)
        return float(stats.t.sf((self.effect - theta) / self.se, self.df))

    def p_below(self, theta: float) -> float:
        """One-sided p-value for H1: effect < theta."""
        if theta == 0 and "less" in self.exact:
            return self.exact["less"]
        if self.se == 0:
            return self._separated(self.effect < theta)
        return float(stats.t.cdf((self.effect - theta) / self.se, self.df))

    def _separated(self, holds: bool) -> float:
        return self.exact.get("separation", 1.0) if holds else 1.0


def _perm_one_sample(d: np.ndarray) -> dict[str, float]:
    """Exact sign-flip permutation p-values of the mean of ``d`` (all 2**n flips for small n)."""
    out = {}
    for alt in ("greater", "less"):
        res = stats.permutation_test(
            (d,), np.mean, permutation_type="samples", alternative=alt, n_resamples=PERMUTATIONS, random_state=0
        )
        out[alt] = float(res.pvalue)
    return out


def _perm_two_sample(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    out = {}
    for alt in ("greater", "less"):
        res = stats.permutation_test(
            (a, b),
            lambda x, y: np.mean(x) - np.mean(y),
            permutation_type="independent",
            alternative=alt,
            n_resamples=PERMUTATIONS,
            random_state=0,
        )
        out[alt] = float(res.pvalue)
    return out


def _separation(sizes: list[tuple[int, int]]) -> float:
    """The exact permutation probability that relabelling within each stratum reproduces a complete separation of
    A from B: the product over strata of 1 / C(n_a + n_b, n_a)."""
    return float(np.prod([1.0 / special.comb(na + nb, na, exact=True) for na, nb in sizes]))


def paired(frame: pd.DataFrame, pair_on: list[str]) -> Estimate:
    """A against B unit by unit: the mean of within-pair differences (pairs where both conditions ran)."""
    means = frame.groupby([*pair_on, "group"])["value"].mean().unstack("group").dropna()
    d = (means["A"] - means["B"]).to_numpy(dtype=float)
    n = len(d)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, "paired: no pair ran under both conditions")
    sd = float(np.std(d, ddof=1)) if n > 1 else math.nan
    se = sd / math.sqrt(n) if n > 1 else math.nan
    est = Estimate(float(d.mean()), 0.0 if sd == 0 else se, n - 1, n, f"paired over {', '.join(pair_on)}", sd=sd)
    if n > 1 and sd == 0:
        est.exact = {"separation": 0.5**n}
    elif n < SMALL and n > 1:
        est.exact = _perm_one_sample(d)
        est.method += " (exact sign-flip test)"
    return est


def joined(frame: pd.DataFrame, columns: list[str]) -> pd.Series:
    """Each row's values of ``columns`` as text joined by ``|`` (a stratum or cluster id), column by column rather
    than row by row (what ``agg("|".join, axis=1)`` gives, a hundred times faster on a units table)."""
    text = frame[columns].astype(str)
    out = text[columns[0]]
    for c in columns[1:]:
        out = out + "|" + text[c]
    return out


def stratified(frame: pd.DataFrame, strata: list[str], cluster_on: list[str]) -> Estimate:
    """The equal-weight mean over strata of the A - B difference, as a contrast of an OLS fit with a mean per stratum
    and condition; cluster-robust errors when units share a cluster, HC3 otherwise."""
    from statsmodels.regression.linear_model import OLS  # not statsmodels.api: 0.4 s less to import

    df = frame.copy()
    df["_stratum"] = joined(df, strata) if strata else "all"
    counts = df.groupby(["_stratum", "group"]).size().unstack("group").reindex(columns=["A", "B"]).fillna(0)
    usable = counts[(counts["A"] >= 2) & (counts["B"] >= 2)].index  # a spread needs two units a condition
    df = df[df["_stratum"].isin(usable)]
    if df.empty:
        return Estimate(math.nan, math.nan, math.nan, 0, "no stratum ran both conditions with 2 units or more each")
    df["_cell"] = df["_stratum"] + "#" + df["group"]
    names = sorted(df["_cell"].unique())  # a mean per cell, no intercept (the formula value ~ 0 + C(_cell))
    design = (df["_cell"].to_numpy()[:, None] == np.array(names, dtype=object)[None, :]).astype(float)
    model = OLS(df["value"].to_numpy(float), design)
    strata_ids = sorted(df["_stratum"].unique())
    contrast = np.zeros(len(names))
    for s in strata_ids:
        contrast[names.index(f"{s}#A")] += 1 / len(strata_ids)
        contrast[names.index(f"{s}#B")] -= 1 / len(strata_ids)
    sizes = [(int((g["group"] == "A").sum()), int((g["group"] == "B").sum())) for _, g in df.groupby("_stratum")]
    within = df.groupby("_cell")["value"].std(ddof=1)
    sd = float(np.sqrt(np.mean(np.square(within)))) if len(within) else math.nan
    label = f"within {', '.join(strata)}" if strata else "two samples"
    if (within == 0).all():  # every unit of a condition alike in every stratum: no sampling error
        effect = float(contrast @ df.groupby("_cell")["value"].mean().reindex(names).to_numpy())
        return Estimate(
            effect, 0.0, math.inf, len(df), label + " (no variation)", sd=0.0, exact={"separation": _separation(sizes)}
        )
    if cluster_on:
        df["_cluster"] = joined(df, cluster_on)
        per_group = df.groupby("group")["_cluster"].nunique()
        if per_group.reindex(["A", "B"]).fillna(0).min() < 2:
            return Estimate(math.nan, math.nan, math.nan, int(per_group.sum()), "fewer than 2 clusters a condition")
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
        if cluster_on:
            sizes = [
                (
                    int(g.loc[g["group"] == "A", "_cluster"].nunique()),
                    int(g.loc[g["group"] == "B", "_cluster"].nunique()),
                )
                for _, g in df.groupby("_stratum")
            ]
        return Estimate(
            effect, 0.0, math.inf, n_units, label + " (no variation)", sd=0.0, exact={"separation": _separation(sizes)}
        )
    est = Estimate(effect, se, float(df_t), n_units, label, sd=sd)
    if cluster_on:  # what clustering costs, for the planner: Kish's design effect, measured on this contrast
        naive = float(np.squeeze(model.fit(cov_type="HC3").t_test(contrast).sd))
        est.rows_per_unit = len(df) / n_units
        est.design_effect = max(1.0, (se / naive) ** 2) if naive > 0 else 1.0
    return est


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
            exact={"separation": _separation([(len(a), len(b))])},
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
        est.exact = _perm_two_sample(a, b)
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
        est.se, est.exact = 0.0, {"separation": 0.5**n}
    elif n < SMALL:
        flips = _perm_one_sample(d)
        est.exact, est.method = flips, "one sample (exact sign-flip test)"
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
    exact = {alt: float(stats.binomtest(k, n, null, alternative=alt).pvalue) for alt in ("greater", "less")}
    est = Estimate(p - 0.0, se, math.inf, n, "rate (Wilson interval, exact binomial test)", sd=math.sqrt(p * (1 - p)))
    est.ci, est.exact = (float(lo), float(hi)), exact
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
    table = [[ka, len(a) - ka], [kb, len(b) - kb]]
    exact = {alt: float(stats.fisher_exact(table, alternative=alt)[1]) for alt in ("greater", "less")}
    pooled = (ka + kb) / (len(a) + len(b))
    est = Estimate(pa - pb, se, math.inf, len(a) + len(b), "rates (Newcombe interval, Fisher exact test)")
    est.ci, est.exact, est.sd = (float(lo), float(hi)), exact, math.sqrt(pooled * (1 - pooled))
    return est
