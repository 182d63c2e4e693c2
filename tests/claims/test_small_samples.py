"""Below ``SMALL`` units a side, every path of the engine takes its p-value from an exact or permutation test, against
whatever value the claim compares with (0, a ``null``, the edge of a ``margin``): stratified, clustered, one sample,
two samples, pairs and rates. Each expected p-value is counted here from the relabellings themselves."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tomlib.claims._stats import PERMUTATIONS, SMALL, one_sample, paired, rate, stratified, welch

pytestmark = pytest.mark.tier("fast")


def frame(a: list[float], b: list[float], **columns: list[object]) -> pd.DataFrame:
    return pd.DataFrame({"group": ["A"] * len(a) + ["B"] * len(b), "value": [*a, *b], **columns})


def counted(a: list[float], b: list[float]) -> float:
    """P(mean A - mean B >= observed) over every relabelling of one stratum, counted."""
    pooled, k = [*a, *b], len(a)
    observed = np.mean(a) - np.mean(b)
    diffs = [
        np.mean([pooled[i] for i in pick]) - np.mean([pooled[i] for i in range(len(pooled)) if i not in pick])
        for pick in itertools.combinations(range(len(pooled)), k)
    ]
    return sum(d >= observed - 1e-12 for d in diffs) / len(diffs)


def test_four_against_four_within_a_stratum_is_decided_by_the_exact_test() -> None:
    # the case of three_action_aligned_lower (llm:local): a t-test with HC3 errors called p far below 1/70
    est = stratified(frame([10, 11, 12, 14], [0, 1, 3, 2], task=["m1"] * 8), ["task"], [])
    assert est.p_above(0) == pytest.approx(1 / 70)
    assert est.p_below(0) == pytest.approx(1.0)
    assert "permutation" in est.method


def test_two_strata_relabel_within_each_and_weigh_them_equally() -> None:
    a1, b1, a2, b2 = [5.0, 6, 9], [4.0, 1, 2], [3.0, 2, 8], [1.0, 7, 0]
    est = stratified(frame([*a1, *a2], [*b1, *b2], task=["x"] * 3 + ["y"] * 3 + ["x"] * 3 + ["y"] * 3), ["task"], [])
    observed = (np.mean(a1) - np.mean(b1) + np.mean(a2) - np.mean(b2)) / 2
    assert est.effect == pytest.approx(observed)
    sums = []
    for p1, p2 in itertools.product(itertools.combinations(range(6), 3), itertools.combinations(range(6), 3)):
        d = 0.0
        for pick, pooled in ((p1, [*a1, *b1]), (p2, [*a2, *b2])):
            d += np.mean([pooled[i] for i in pick]) - np.mean([pooled[i] for i in range(6) if i not in pick])
        sums.append(d / 2)
    assert est.p_above(0) == pytest.approx(np.mean(np.array(sums) >= observed - 1e-12))


def test_a_margin_shifts_the_exact_test_not_a_t_reference() -> None:
    # not_greater with margin 1: H1 effect < 1; A - 1 against B is the tested relabelling
    a, b = [3.0, 2.5, 4.0, 3.5], [3.0, 3.2, 4.1, 4.4]
    est = stratified(frame(a, b, task=["m"] * 8), ["task"], [])
    assert est.p_below(1.0) == pytest.approx(counted(b, [x - 1 for x in a]))  # P(A-1 - B <= observed) mirrored


def test_one_sample_against_a_null_other_than_zero_flips_signs_around_it() -> None:
    values = np.array([0.6, 0.7, 0.8, 0.9, 0.65])  # every one above 1/2: one sign pattern of 2**5
    est = one_sample(values, 0.5)
    assert est.p_above(0.5) == pytest.approx(1 / 32)
    assert est.p_above(1 / 3) == pytest.approx(1 / 32)


def test_two_samples_against_a_margin_relabel_a_minus_the_margin() -> None:
    est = welch(frame([5.0, 6, 7.5], [0.0, 1, 2.5]))
    assert est.p_above(1.0) == pytest.approx(1 / math.comb(6, 3))
    assert est.p_above(5.5) == pytest.approx(counted([-0.5, 0.5, 2.0], [0.0, 1, 2.5]))


def test_pairs_against_a_margin_flip_the_shifted_differences() -> None:
    f = frame([3.0, 4, 5, 6], [1.0, 1.5, 2, 2.5], task=[1, 2, 3, 4] * 2)
    est = paired(f, ["task"])
    assert est.p_above(1.0) == pytest.approx(1 / 16)  # differences 2, 2.5, 3, 3.5: all above 1


def test_a_rate_against_a_null_other_than_zero_is_the_exact_binomial_test() -> None:
    est = rate(np.array([1.0] * 9 + [0.0]), 0.5)
    assert est.p_above(0.5) == pytest.approx(stats.binomtest(9, 10, 0.5, alternative="greater").pvalue)
    assert est.p_above(0.5) == pytest.approx(11 / 1024)


def test_few_clusters_a_side_relabel_whole_clusters() -> None:
    # three debates a side, four rounds each: the clusters are the units (their means), not the twelve rows
    rows = []
    for debate, (group, level) in enumerate([("A", 5.0), ("A", 6), ("A", 7), ("B", 1), ("B", 2), ("B", 3)]):
        rows += [{"group": group, "value": level + r / 10, "side": "s", "debate": debate} for r in range(4)]
    est = stratified(pd.DataFrame(rows), ["side"], ["debate"])
    assert est.n_units == 6
    assert est.p_above(0) == pytest.approx(1 / math.comb(6, 3))
    assert "clusters relabelled" in est.method


def test_many_relabellings_are_drawn_not_counted_and_p_is_never_zero() -> None:
    rng = np.random.default_rng(3)
    b = list(rng.normal(0, 1, 400))
    est = stratified(frame([5.0] * 4 + [6.0] * 5, b, task=["t"] * 409), ["task"], [])  # 9 a side: still small
    assert est.p_above(0) == pytest.approx(1 / (PERMUTATIONS + 1))


def test_ten_units_a_side_keep_the_t_reference() -> None:
    a, b = list(np.linspace(5, 6, SMALL)), list(np.linspace(0, 1, SMALL))
    est = stratified(frame(a, b, task=["t"] * (2 * SMALL)), ["task"], [])
    assert est.exact is None and est.p_above(0) < 1e-6


def test_pairs_that_share_a_task_count_once_per_task() -> None:
    # two tasks, each paired under six configurations: twelve pairs, but two independently sampled tasks
    rows = []
    for task, lift in (("t1", 3.0), ("t2", 2.0)):
        for config in range(6):
            rows += [
                {"group": "A", "value": lift + config / 10, "config": config, "task_id": task},
                {"group": "B", "value": 0.0, "config": config, "task_id": task},
            ]
    f = pd.DataFrame(rows)
    naive = paired(f, ["config", "task_id"])
    clustered = paired(f, ["config", "task_id"], ["task_id"])
    assert naive.n_units == 12 and naive.p_above(0) < 0.001
    assert clustered.n_units == 2 and "12 pairs in 2 clusters" in clustered.method
    assert clustered.p_above(0) == pytest.approx(1 / 4)  # two clusters: four sign patterns, one as extreme


def test_clustered_pairs_widen_the_error_where_a_task_moves_all_its_pairs() -> None:
    rng = np.random.default_rng(7)
    rows = []
    for task in range(40):
        shift = rng.normal(0, 1)  # what the task does to every configuration's difference
        for config in range(5):
            a = 0.2 + shift + rng.normal(0, 0.1)
            rows += [
                {"group": "A", "value": a, "config": config, "task_id": task},
                {"group": "B", "value": 0.0, "config": config, "task_id": task},
            ]
    f = pd.DataFrame(rows)
    naive, clustered = paired(f, ["config", "task_id"]), paired(f, ["config", "task_id"], ["task_id"])
    assert clustered.effect == pytest.approx(naive.effect) and clustered.exact is None
    assert clustered.se > 1.8 * naive.se and clustered.df == 39 and clustered.design_effect > 3


def test_a_complete_separation_of_many_units_has_a_p_of_zero_not_an_overflow() -> None:
    # 400 units a side, every A unit 1 and every B unit 0, within strata: 1 / C(800, 400) is past any float
    n = 400
    est = stratified(frame([1.0] * n, [0.0] * n, task=["t0", "t1"] * n), ["task"], [])
    assert est.se == 0 and est.p_above(0) < 1e-100 and est.p_below(0) == 1.0
