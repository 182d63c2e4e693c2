"""The claims engine on known truth: verdicts follow the declared effect, keep their error rate under the null, and
use the unit that was independently sampled (pairs, clusters), so inverting a verdict's logic or dropping its unit
of analysis fails here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tomlib.claims import Claim
from tomlib.claims._verdict import ALPHA, verdicts

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def claim(**over: object) -> Claim:
    fields: dict = {
        "claim_id": "t.claim",
        "statement": "A beats B.",
        "quote": "A beats B",
        "paper_file": "adaptive-tom-aaai2026.txt",
        "line": 1,
        "rests_on": "Table 1",
        "comparison": "A against B",
        "test": "mean_diff",
        "direction": "greater",
        "units": "t.units",
        "metric": "score",
        "a": "cond == 'A'",
        "b": "cond == 'B'",
    }
    fields.update(over)
    return Claim(**fields)


def units(a: np.ndarray, b: np.ndarray, **cols: np.ndarray) -> pd.DataFrame:
    """Two conditions' unit outcomes as a units table; ``cols`` are extra columns over the concatenated units."""
    frame = pd.DataFrame(
        {"cond": ["A"] * len(a) + ["B"] * len(b), "value": np.concatenate([a, b]), "metric": "score", "source": "sim:x"}
    )
    for k, v in cols.items():
        frame[k] = v
    return frame


def verdict_of(c: Claim, table: pd.DataFrame) -> pd.Series:
    return verdicts("t", [c], {"t.units": table}).iloc[0]


def test_a_declared_effect_is_supported_its_reverse_contradicted_and_none_left_open() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.normal(1.0, 1.0, 60), rng.normal(0.0, 1.0, 60)
    assert verdict_of(claim(), units(a, b))["verdict"] == "supported"
    assert verdict_of(claim(direction="less"), units(a, b))["verdict"] == "contradicted"
    assert verdict_of(claim(), units(b, a))["verdict"] == "contradicted"
    same = verdict_of(claim(), units(rng.normal(0, 1, 8), rng.normal(0, 1, 8)))
    assert same["verdict"] == "inconclusive"
    row = verdict_of(claim(paper_effect=0.5, paper_effect_sd=1.0), units(rng.normal(0, 1, 8), rng.normal(0, 1, 8)))
    assert row["verdict"] == "inconclusive" and row["units_for_power"] == 2 * 64, row  # d = 0.5: 64 a side


def test_the_interval_covers_the_declared_effect_and_the_effect_is_a_minus_b() -> None:
    rng = np.random.default_rng(2)
    row = verdict_of(claim(), units(rng.normal(3.0, 1.0, 400), rng.normal(1.0, 1.0, 400)))
    assert row["ci_low"] < 2.0 < row["ci_high"] and abs(row["effect"] - 2.0) < 0.2


def _false_verdicts(make: callable, c: Claim, reps: int = 200, seed: int = 0) -> float:
    rng = np.random.default_rng(seed)
    wrong = sum(verdict_of(c, make(rng))["verdict"] != "inconclusive" for _ in range(reps))
    return wrong / reps


def _mc_bound(p: float, reps: int) -> float:
    return p + 2.5 * np.sqrt(p * (1 - p) / reps)


def test_under_the_null_false_verdicts_stay_at_alpha() -> None:
    rate = _false_verdicts(lambda r: units(r.normal(0, 1, 30), r.normal(0, 1, 30)), claim())
    assert rate <= _mc_bound(ALPHA, 200), rate


def _clustered(rng: np.random.Generator, effect: float = 0.0) -> pd.DataFrame:
    """Six tasks a condition, 20 rounds each; rounds of a task share most of their outcome (ICC 0.8)."""
    frames = []
    for cond, shift in (("A", effect), ("B", 0.0)):
        task = rng.normal(0, 2.0, 6)
        vals = (task[:, None] + rng.normal(0, 1.0, (6, 20)) + shift).ravel()
        frames.append(
            pd.DataFrame({"cond": cond, "task": np.repeat([f"{cond}{i}" for i in range(6)], 20), "value": vals})
        )
    out = pd.concat(frames, ignore_index=True)
    return out.assign(metric="score", source="sim:x")


def test_units_that_share_a_task_are_one_cluster() -> None:
    # counting 120 rounds as 120 independent units would call most null draws significant; clustered, they stay at
    # alpha (the unit sampled independently is the task)
    naive = _false_verdicts(_clustered, claim(), reps=100)
    clustered = _false_verdicts(_clustered, claim(cluster_on="task"), reps=200)
    assert naive > 0.3, naive
    assert clustered <= _mc_bound(ALPHA, 200), clustered


def _paired(rng: np.random.Generator, effect: float) -> pd.DataFrame:
    """Twelve tasks run under both conditions; tasks differ a lot, the condition shifts every task a little."""
    task = rng.normal(0, 5.0, 12)
    a, b = task + effect + rng.normal(0, 0.3, 12), task + rng.normal(0, 0.3, 12)
    return units(a, b, task=np.concatenate([np.arange(12), np.arange(12)]))


def test_the_same_tasks_under_both_conditions_are_compared_pair_by_pair() -> None:
    rng = np.random.default_rng(3)
    table = _paired(rng, 0.8)
    assert verdict_of(claim(pair_on="task"), table)["verdict"] == "supported"
    assert verdict_of(claim(), table)["verdict"] == "inconclusive"  # unpaired, the task spread hides the effect
    assert verdict_of(claim(pair_on="task"), table)["n_units"] == 12


def test_holm_corrects_within_a_paper() -> None:
    rng = np.random.default_rng(4)
    table = units(rng.normal(0.6, 1, 40), rng.normal(0, 1, 40))
    alone = verdicts("t", [claim()], {"t.units": table}).iloc[0]
    nulls = {f"t.null{i}": units(rng.normal(0, 1, 40), rng.normal(0, 1, 40)) for i in range(3)}
    others = [claim(claim_id=f"t.other{i}", units=f"t.null{i}") for i in range(3)]
    together = verdicts("t", [claim(), *others], {"t.units": table, **nulls}).set_index("claim_id")
    assert together.loc["t.claim", "p_value"] > alone["p_value"]
    assert together.loc["t.claim", "p_value"] <= 4 * alone["p_value"] + 1e-12


def test_checks_of_ours_are_a_family_of_their_own() -> None:
    """Holm's family is the paper's claims: a check of ours (``by = ours``) added beside them moves no paper p-value."""
    rng = np.random.default_rng(4)
    table = units(rng.normal(0.6, 1, 40), rng.normal(0, 1, 40))
    alone = verdicts("t", [claim()], {"t.units": table}).iloc[0]
    nulls = {f"t.null{i}": units(rng.normal(0, 1, 40), rng.normal(0, 1, 40)) for i in range(3)}
    ours = [claim(claim_id=f"t.ours{i}", units=f"t.null{i}", by="ours", label="Ours: a check") for i in range(3)]
    together = verdicts("t", [claim(), *ours], {"t.units": table, **nulls}).set_index("claim_id")
    assert together.loc["t.claim", "p_value"] == alone["p_value"]
    assert (together.loc[[c.claim_id for c in ours], "p_value"] >= 0).all()


def test_a_difference_every_unit_shows_is_decided_without_sampling_error() -> None:
    # deterministic formal agents: 30 episodes score 75, 30 score 0 (Table 1's Memory-1 cells)
    row = verdict_of(claim(strata="task"), units(np.full(30, 75.0), np.zeros(30), task=np.array(["m1"] * 60)))
    assert row["verdict"] == "supported" and row["effect"] == 75.0 and row["ci_low"] == row["ci_high"] == 75.0
    few = verdict_of(claim(), units(np.array([75.0]), np.array([0.0])))
    assert few["verdict"] == "inconclusive"  # one unit a side decides nothing


def test_similar_and_no_better_claims_use_their_margin() -> None:
    rng = np.random.default_rng(5)
    table = units(rng.normal(0.0, 1, 200), rng.normal(0.0, 1, 200))
    assert verdict_of(claim(direction="equivalent", margin=0.5), table)["verdict"] == "supported"
    assert verdict_of(claim(direction="not_greater", margin=0.5), table)["verdict"] == "supported"
    far = units(rng.normal(2.0, 1, 200), rng.normal(0.0, 1, 200))
    assert verdict_of(claim(direction="equivalent", margin=0.5), far)["verdict"] == "contradicted"
    assert verdict_of(claim(direction="not_greater", margin=0.5), far)["verdict"] == "contradicted"


def test_rates_get_newcombe_intervals_and_theorems_hold_only_without_counterexample() -> None:
    wins = units(np.array([1.0] * 40 + [0.0] * 10), np.array([1.0] * 20 + [0.0] * 30))
    row = verdict_of(claim(test="rate_diff"), wins)
    assert row["verdict"] == "supported" and row["ci_low"] < 0.4 < row["ci_high"]
    assert "Newcombe" in row["method"]
    every = units(np.ones(50), np.array([]))
    theorem = claim(test="all", direction="all", b="")
    assert verdict_of(theorem, every)["verdict"] == "supported"
    assert verdict_of(theorem, units(np.array([1.0] * 49 + [0.0]), np.array([])))["verdict"] == "contradicted"


def test_a_row_in_both_groups_or_a_missing_column_is_named() -> None:
    from tomlib.claims._verdict import ClaimDataError

    table = units(np.ones(5), np.zeros(5))
    with pytest.raises(ClaimDataError, match="both A"):
        verdict_of(claim(b="value >= 0"), table)
    with pytest.raises(ClaimDataError, match=r"which the units .* lack"):
        verdict_of(claim(a="nosuch == 1"), table)


def test_a_claim_that_compares_models_is_judged_on_every_llm_source_together() -> None:
    rng = np.random.default_rng(6)
    table = pd.concat(
        [
            pd.DataFrame({"model": "big", "value": rng.normal(2, 1, 30), "source": "llm:big"}),
            pd.DataFrame({"model": "small", "value": rng.normal(0, 1, 30), "source": "llm:small"}),
        ]
    ).assign(metric="score")
    c = claim(a="model == 'big'", b="model == 'small'")
    got = verdicts("t", [c], {"t.units": table}).set_index(["claim_id", "source"])
    assert got.loc[("t.claim", "llm:*"), "verdict"] == "supported"
    assert ("t.claim", "llm:big") not in got.index  # one model's source alone cannot hold it


def test_a_rerun_replaces_its_condition_and_keeps_the_others(tmp_path) -> None:
    from tomlib.claims import read_units, write_units

    def rows(dynamics: str, n: int, value: float) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "paper_id": "tom_ib",
                "table_id": "fig5",
                "dynamics": dynamics,
                "trial": range(n),
                "metric": "h",
                "value": value,
                "source": "llm:m",
            }
        )

    write_units(rows("authors", 3, 1.0), tmp_path)
    write_units(rows("paper", 2, 2.0), tmp_path)  # another reading: beside the first
    write_units(rows("authors", 1, 5.0), tmp_path)  # the same condition again: replaces its three trials whole
    got = read_units(tmp_path)["tom_ib.fig5"]
    assert got.groupby("dynamics")["value"].agg(["size", "mean"]).to_dict() == {
        "size": {"authors": 1, "paper": 2},
        "mean": {"authors": 5.0, "paper": 2.0},
    }


def test_an_inconclusive_verdict_without_units_for_power_says_why() -> None:
    from tomlib.claims import verdict_text

    rng = np.random.default_rng(9)
    no_effect = verdict_of(claim(), units(rng.normal(0, 1, 6), rng.normal(0, 1, 6)))
    assert no_effect["verdict"] == "inconclusive"
    assert verdict_text(no_effect).endswith("no units for 80% power: the paper prints no effect to plan with")
    wrong_way = verdict_of(claim(paper_effect=-0.5), units(rng.normal(0, 1, 6), rng.normal(0, 1, 6)))
    assert "at the paper's own effect the claim does not hold" in verdict_text(wrong_way)


def test_welch_with_one_side_alike_throughout_is_quiet_and_decided() -> None:
    import warnings

    from tomlib.claims._stats import welch

    frame = pd.DataFrame({"group": ["A"] * 360 + ["B"] * 180, "value": [100.0] * 360 + [39.0, 43.0, 37.0] * 60})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # scipy's "Precision loss" warning would fail here
        est = welch(frame)
    assert est.effect == pytest.approx(100 - 39.6667, abs=1e-3) and est.se > 0 and est.method == "two samples (Welch)"


def test_an_inconclusive_verdict_past_its_planned_units_does_not_ask_for_units() -> None:
    """n = 300 with 90 enough for the paper's effect: more units are not what is missing."""
    from tomlib.claims import verdict_text

    row = pd.Series(
        {
            "verdict": "inconclusive",
            "effect": -0.26,
            "ci_low": -1.04,
            "ci_high": 0.51,
            "n_units": 300,
            "units_for_power": 90.0,
            "method": "paired t",
        }
    )
    said = "n = 300; too few units to tell, though past the 90 units that give 80% power at the paper's effect"
    assert verdict_text(row).endswith(said)
    fewer = row.copy()
    fewer["n_units"] = 40
    assert verdict_text(fewer).endswith("; too few units to tell: 90 would give 80% power at the paper's effect")


def test_an_inconclusive_verdict_says_which_case_it_is() -> None:
    """Too few units, no spread, or a CI that rules out the paper's effect: three cases, three wordings (issue 54:
    '-0.75 [-6.83, +5.33], n = 18; past the 4 units that give 80% power' hid that the CI excludes the paper's +68.8)."""
    from tomlib.claims import verdict_text

    row = pd.Series(
        {"verdict": "inconclusive", "effect": -0.75, "ci_low": -6.83, "ci_high": 5.33, "n_units": 18,
         "units_for_power": 4.0, "method": "within task"}
    )  # fmt: skip
    assert verdict_text(row, paper_effect=68.8).endswith("n = 18; the CI excludes the paper's +68.8")
    assert verdict_text(row, paper_effect=2.0).endswith("too few units to tell, though past the 4 units that give "
                                                        "80% power at the paper's effect")  # fmt: skip
    flat = row.copy()
    flat[["effect", "ci_low", "ci_high", "units_for_power"]] = [0.0, float("nan"), float("nan"), 90.0]
    assert verdict_text(flat, paper_effect=68.8) == (
        "inconclusive: +0, no spread to estimate from (n = 18); too few units to tell: 90 would give 80% power at "
        "the paper's effect"
    )


def test_robustness_counts_the_alternative_readings_it_was_judged_under() -> None:
    from tomlib.claims._text import robustness_text

    row = pd.Series({"verdict": "supported", "robust": "no", "flips_under": "trust=uniform",
                     "held_under": "blocking=any; blocking=trusted", "not_checked": "epsilon"})  # fmt: skip
    assert robustness_text(row) == (
        "same verdict under 2 of 3 alternative readings; flips under `trust=uniform`; not checked: epsilon"
    )
    one = row.copy()
    one[["flips_under", "held_under", "not_checked"]] = [None, "metric=ftm_team", None]
    assert robustness_text(one) == "same verdict under 1 of 1 alternative reading"


def test_the_grouper_gives_each_subsets_own_groups_in_order_and_its_own_errors() -> None:
    from tomlib.claims._verdict import ClaimDataError, Grouper, groups

    rng = np.random.default_rng(3)
    n = 40
    table = units(
        rng.normal(1, 1, n),
        rng.normal(0, 1, n),
        reading=np.array(["d", "alt"] * n),
        source=np.array(["formal", "llm:x"] * n),
        task=np.array(["t1"] * n + ["t2"] * n),
    )
    table["value"] = table["value"].astype(object)
    table.loc[5, "value"] = "not a number"  # dropped, as groups drops it
    table.loc[7, "metric"] = "other"
    c = claim(select="task == 't1' or task == 't2'", a="cond == 'A'", b="cond == 'B' and reading == 'd'")
    grouper = Grouper({"t.units": table})
    subsets = [table, table[table["source"] == "formal"], table[table["reading"] == "d"], table.iloc[::3], table[:0]]
    for sub in subsets:
        want, got = groups(c, sub), grouper(c, sub)
        assert list(got.columns) == list(want.columns)
        pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True))
    # rows in both groups: an error where the subset holds one, none where it holds none
    both = claim(b="cond == 'B' or reading == 'alt'")
    with pytest.raises(ClaimDataError, match="in both A"):
        grouper(both, table)
    only_default = table[table["reading"] == "d"]
    pd.testing.assert_frame_equal(
        grouper(both, only_default).reset_index(drop=True), groups(both, only_default).reset_index(drop=True)
    )
    # a frame that is not a subset of the whole table (a changed value) is grouped on its own
    changed = table.copy()
    changed["value"] = 0.0
    assert (grouper(c, changed)["value"] == 0.0).all()
    with pytest.raises(ClaimDataError, match=r"which the units .* lack"):
        grouper(claim(a="no_such_column == 1"), table)


def test_a_judge_that_keeps_groups_judges_as_verdicts_does_and_keeps_each_sources_judged_claims() -> None:
    """A :class:`Judge` over the whole table (its groups picked once) gives the rows plain ``verdicts`` gives on a
    subset of it, and keeps what each source judged (what a judgement under another reading starts from)."""
    from tomlib.claims import Judge

    rng = np.random.default_rng(11)
    n = 30
    table = units(rng.normal(1, 1, n), rng.normal(0, 1, n), source=np.array(["formal", "sim:x"] * n))
    table["reading"] = np.array(["d", "d", "alt", "alt"] * (n // 2))  # each source and group under both
    claims = [claim(), claim(claim_id="t.less", direction="less")]
    subset = {"t.units": table[table["reading"] == "d"]}
    judge = Judge({"t.units": table})
    got = judge.verdicts("t", claims, subset)
    pd.testing.assert_frame_equal(got, verdicts("t", claims, subset))
    assert sorted(judge.judged) == ["formal", "sim:x"]
    assert sorted(judge.judged["formal"]) == ["t.claim", "t.less"]
    kept = judge.judged["sim:x"]["t.claim"]
    assert kept.est.n_units == len(subset["t.units"].query("source == 'sim:x'"))
