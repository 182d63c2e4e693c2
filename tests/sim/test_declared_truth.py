"""The sim's declared truth (tomlib.sim._declared): a PM's order and matching move the engineers' follow rate as
declared, each units row of the sim carries the value its competence implies, and the claims engine checks every
verdict on those rows against the truth it implies (issue 32: the sim's verdicts match its declared truth)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.sim.conftest import within_ci
from tests.sim.test_sim import programming
from tomlib.claims import judge, read_units
from tomlib.experiments import coalition_programming as cp
from tomlib.programming import TeamConfig
from tomlib.sim import SimServer, SimSpec
from tomlib.sim._declared import expected_ftm

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

SPEC = SimSpec(name="sim", p_follow=0.3, follow_by_pm={"ToM-1+matching": 0.95}, follow_later={"Engineer4": 0.0})


@pytest.mark.sim
@pytest.mark.parametrize("sim", [SPEC], indirect=True)
def test_matching_moves_ftm_as_declared_and_the_verdicts_match_the_truth(sim: SimServer, isolated: Path) -> None:
    runs = programming([TeamConfig(pm_tom=1, matching=False), TeamConfig(pm_tom=1, matching=True)], tasks=12)
    assert not sim.refused
    f = cp.episode_frame(runs)
    for (setting, rnd), part in f.groupby(["matching", "round"]):
        truth = expected_ftm(SPEC, 1, setting == "matching", int(rnd), 0.25) / 100
        trusted = round(float((part["ftm"] / 100 * 4).sum()))
        assert within_ci(trusted, 4 * len(part), truth), (setting, rnd, trusted / (4 * len(part)), truth)
    cp.table2(runs)
    cp.tables10_12(runs)
    rows = read_units()["coalition.table2"]
    ftm = rows[rows["metric"] == "ftm"]
    assert ftm["expected"].notna().all()  # FTM over all engineers (§6.2) has a closed form in every condition
    assert rows.loc[rows["metric"] == "ftm_next", "expected"].isna().all()  # the next round's team has none
    verdicts = judge(isolated / "results", ["coalition"]).set_index("claim_id")
    raised = verdicts.loc["coalition.matching_raises_ftm_humaneval"]
    # paired over tasks, rounds 1 and 5 averaged within each: half the round-5 gap
    gap = (expected_ftm(SPEC, 1, True, 5, 0.25) - expected_ftm(SPEC, 1, False, 5, 0.25)) / 2
    assert raised["declared_truth"] == "holds" and raised["declared_effect"] == pytest.approx(gap)
    declines = verdicts.loc["coalition.ftm_declines_without_matching"]
    assert declines["declared_truth"] == "holds" and declines["declared_effect"] < 0  # Engineer4 stops following
    pass_claims = verdicts[verdicts.index.str.contains("pass") & verdicts["declared_truth"].notna()]
    assert len(pass_claims) and (pass_claims["declared_truth"] == "boundary").all()  # code is right at p_code anywhere
    checked = verdicts[verdicts["matches_truth"].notna()]
    assert len(checked) >= 3 and not (checked["matches_truth"] == "no").any(), checked[["verdict", "declared_truth"]]


def test_rows_of_other_sources_carry_no_expectation(isolated: Path) -> None:
    from tomlib.experiments._units import write_units_with_truth

    rows = pd.DataFrame(
        {
            "paper_id": "coalition",
            "table_id": "table3",
            "model": "local",
            "task_id": ["t1", "t2"],
            "metric": "pass",
            "value": [1, 0],
            "source": "llm:local",
        }
    )
    write_units_with_truth(rows, isolated / "results")
    assert "expected" not in read_units(isolated / "results")["coalition.table3"].columns
