"""A claim about every stratum is judged in each one (an intersection-union test), never pooled: A-ToM's weight on the
partner's order can average above 1/3 while it stays below 1/3 with a ToM-1 partner. And a formal source whose units
all agree has an exact effect: "A > B" with an effect of exactly 0 is contradicted, not left open. Units for power
that no run will gather are said to be beyond reach, not printed as a count."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.claims.test_engine import claim, units, verdict_of
from tomlib.claims import Claim
from tomlib.claims._truth import declared_truth, point_effect
from tomlib.claims._verdict import groups

pytestmark = pytest.mark.tier("fast")


def weights(tom0: float, tom1: float, n: int = 40, seed: int = 0) -> pd.DataFrame:
    """The final weight on the partner's order, ``n`` episodes with each partner."""
    rng = np.random.default_rng(seed)
    values = np.concatenate([rng.normal(tom0, 0.05, n), rng.normal(tom1, 0.05, n)])
    frame = units(values, np.array([]), player2=np.array(["tom0"] * n + ["tom1"] * n))
    return frame


def weight_claim(**over: object) -> Claim:
    return claim(test="mean", b="", null=1 / 3, strata="player2", each_stratum=True, **over)


def test_a_claim_for_each_partner_fails_with_the_partner_it_fails_for() -> None:
    table = weights(0.574, 0.292)
    assert table["value"].mean() > 1 / 3 + 0.05  # pooled, it would look supported
    row = verdict_of(weight_claim(), table)
    assert row["verdict"] == "contradicted"
    assert row["effect"] == pytest.approx(0.292, abs=0.02)  # the weakest partner's weight is what is shown
    assert "tom1" in row["method"] and "(outside the claim)" in row["method"] and row["n_units"] == 80


def test_it_is_supported_only_when_every_partner_supports_it() -> None:
    assert verdict_of(weight_claim(), weights(0.574, 0.45))["verdict"] == "supported"
    # one partner barely above 1/3 with few episodes: not every stratum decided, so the claim is not either
    row = verdict_of(weight_claim(), weights(0.574, 0.34, n=6, seed=2))
    assert row["verdict"] == "inconclusive"


def test_a_one_group_claim_with_strata_must_say_each_stratum() -> None:
    with pytest.raises(ValueError, match="each_stratum"):
        claim(test="mean", b="", null=0.5, strata="player2")


def test_the_declared_truth_of_a_claim_for_each_stratum_is_its_weakest() -> None:
    table = weights(0.574, 0.292).assign(expected=lambda f: np.where(f["player2"] == "tom0", 0.57, 0.29))
    c = weight_claim()
    frame = groups(c, table)
    assert point_effect(c, frame) == pytest.approx(0.29)
    assert declared_truth(c, frame) == (pytest.approx(0.29), "fails")


def test_a_formal_zero_with_no_spread_contradicts_a_greater_than() -> None:
    # memory_n_partial_success under epsilon = 0: every one of 300 episodes scores 0 in both arms
    table = units(np.zeros(300), np.zeros(300), task=np.array(["memory_n"] * 600)).assign(source="formal")
    row = verdict_of(claim(strata="task"), table)
    assert row["verdict"] == "contradicted" and "on its boundary" in row["method"]
    # a "no worse" claim holds on its boundary
    assert verdict_of(claim(strata="task", direction="not_less", margin=0.0), table)["verdict"] == "supported"
    # the same rows from a sampled model stay open: no spread seen is not no spread
    assert verdict_of(claim(strata="task"), table.assign(source="llm:x"))["verdict"] == "inconclusive"
    # and a formal source of a few units is not trusted to be deterministic
    few = units(np.zeros(4), np.zeros(4), task=np.array(["m"] * 8)).assign(source="formal")
    assert verdict_of(claim(strata="task"), few)["verdict"] == "inconclusive"


def test_units_for_power_past_a_hundred_times_the_papers_n_are_beyond_reach() -> None:
    from tomlib.claims._text import verdict_text

    rng = np.random.default_rng(4)
    table = units(rng.normal(0, 1, 30), rng.normal(0, 1, 30))
    far = verdict_of(claim(paper_effect=0.01, paper_effect_sd=1.0, paper_n=30), table)
    assert far["verdict"] == "inconclusive" and far["units_for_power"] > 3000
    said = verdict_text(far)
    assert "beyond reach (needs over 3,000 units)" in said and str(int(far["units_for_power"])) not in said
    near = verdict_of(claim(paper_effect=0.5, paper_effect_sd=1.0, paper_n=30), table)
    assert "beyond reach" not in verdict_text(near) and "would give 80% power" in verdict_text(near)
