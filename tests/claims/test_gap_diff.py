"""A claim is tested as the paper compares, not against a threshold of ours: "the gap is smaller in Table 4 than in
Table 1" is a difference of gaps, (A - B) - (C - D), and every margin or non-zero null left in the registry says why it
stays (issue 53, item 2)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.claims.test_engine import claim, verdict_of
from tomlib.claims import Claim, load_claims
from tomlib.claims._calibrate import calibrate, mc_bound
from tomlib.claims._truth import point_effect
from tomlib.claims._verdict import groups
from tomlib.errors import ConfigFileError

pytestmark = pytest.mark.tier("fast")


def gap_claim(**over: object) -> Claim:
    fields: dict = {
        "test": "gap_diff",
        "direction": "less",
        "c": "cond == 'C'",
        "d": "cond == 'D'",
        "strata": "task",
    }
    return claim(**{**fields, **over})


def four(means: dict[str, float], n: int, seed: int = 0, sd: float = 1.0, tasks: int = 2) -> pd.DataFrame:
    """``n`` units in each of groups A-D and each task, normal around ``means`` (plus a level per task)."""
    rng = np.random.default_rng(seed)
    rows = [
        {"cond": g, "task": f"t{t}", "value": mu + 10 * t + rng.normal(0, sd), "metric": "score", "source": "sim:x"}
        for t in range(tasks)
        for g, mu in means.items()
        for _ in range(n)
    ]
    return pd.DataFrame(rows)


def test_the_effect_is_the_gap_in_a_b_minus_the_gap_in_c_d_averaged_over_strata() -> None:
    # the second gap (75 - 0) is far wider than the first (64 - 57): (7) - (75) = -68
    table = four({"A": 64.0, "B": 57.0, "C": 75.0, "D": 0.0}, n=60, sd=5.0)
    row = verdict_of(gap_claim(), table)
    assert row["effect"] == pytest.approx(-68.0, abs=1.5)
    assert row["ci_low"] < -68.0 < row["ci_high"]
    assert row["verdict"] == "supported" and row["n_units"] == 480
    assert "difference of gaps" in row["method"]
    # the same units under "the first gap is wider": contradicted
    assert verdict_of(gap_claim(direction="greater"), table)["verdict"] == "contradicted"


def test_equal_gaps_at_different_levels_are_no_evidence() -> None:
    # both gaps are 10 points, one pair of groups 50 points above the other: the levels are not the claim
    table = four({"A": 60.0, "B": 50.0, "C": 10.0, "D": 0.0}, n=40, sd=5.0, seed=3)
    assert verdict_of(gap_claim(), table)["verdict"] == "inconclusive"


def test_few_units_get_a_permutation_p_and_hold_alpha_under_the_null() -> None:
    small = four({"A": 60.0, "B": 50.0, "C": 10.0, "D": 0.0}, n=4, sd=5.0, seed=4)
    row = verdict_of(gap_claim(), small)
    assert "Freedman-Lane" in row["method"]
    clear = four({"A": 20.0, "B": 50.0, "C": 60.0, "D": 0.0}, n=4, sd=2.0, seed=5)  # gaps -30 and +60
    assert verdict_of(gap_claim(), clear)["verdict"] == "supported"
    rng = np.random.default_rng(6)
    wrong = sum(
        verdict_of(gap_claim(), four(dict.fromkeys("ABCD", 0.0), n=4, seed=int(rng.integers(1 << 30))))["verdict"]
        != "inconclusive"
        for _ in range(60)
    )
    assert wrong / 60 <= mc_bound(0.05, 60)


def test_calibration_of_the_difference_of_gaps_holds_alpha_and_finds_the_papers_effect() -> None:
    c = gap_claim(paper_effect=-2.0, paper_effect_sd=2.0)
    got = calibrate(c, n_units=160, reps=80, rng=np.random.default_rng(7))
    assert got.false_rate <= mc_bound(0.05, 80)
    assert got.power is not None and got.supported_rate is not None
    assert abs(got.supported_rate - got.power) <= 0.05 + 2 * np.sqrt(got.power * (1 - got.power) / 80)


def test_the_declared_truth_uses_the_same_contrast() -> None:
    table = four({"A": 64.0, "B": 57.0, "C": 75.0, "D": 0.0}, n=3)
    table["expected"] = table["cond"].map({"A": 64.0, "B": 57.0, "C": 75.0, "D": 0.0}) + table["task"].map(
        {"t0": 0.0, "t1": 10.0}
    )
    c = gap_claim()
    assert point_effect(c, groups(c, table)) == pytest.approx(-68.0)


def test_a_gap_claim_names_all_four_groups_and_only_it_does() -> None:
    with pytest.raises(ValueError, match="gap_diff"):
        gap_claim(d="")
    with pytest.raises(ValueError, match="gap_diff"):
        claim(c="cond == 'C'", d="cond == 'D'")


def test_the_three_action_gap_is_registered_as_the_papers_comparison_with_table_1() -> None:
    [c] = [c for c in load_claims("adaptive_tom") if c.claim_id == "adaptive_tom.three_action_gap_small"]
    assert (c.test, c.direction, c.margin) == ("gap_diff", "less", None)
    assert c.tables == ["adaptive_tom.table1", "adaptive_tom.table4"]
    assert "table4" in c.a and "table4" in c.b and "table1" in c.c and "table1" in c.d
    # the paper's cells: (6.984 - 75.00 + 14.741 - 62.60) / 2
    assert c.paper_effect == pytest.approx((6.984 - 75.0 + 14.741 - 62.6) / 2, abs=1e-3)


def test_every_margin_and_non_zero_null_in_the_registry_says_why_it_stays(tmp_path: Path) -> None:
    kept = [
        c
        for paper in ("adaptive_tom", "coalition", "tom_ib")
        for c in load_claims(paper)
        if c.margin is not None or c.null not in (None, 0.0)
    ]
    assert kept and all(len(c.margin_why.split()) >= 10 for c in kept)
    table = pd.read_csv(Path("data/claims/adaptive_tom.csv"), dtype=str, keep_default_na=False)
    table.loc[table["margin"] != "", "margin_why"] = ""
    table.to_csv(tmp_path / "adaptive_tom.csv", index=False)
    with pytest.raises(ConfigFileError, match="margin_why"):
        load_claims("adaptive_tom", tmp_path)
