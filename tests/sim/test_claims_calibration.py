"""The claims engine end to end on the sim (issue 32): a sim that declares an effect per condition, run through an
experiment, gives the verdict the declared truth implies (``benchmarks/bench_claims.py`` measures the rates)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tomlib.claims._verdict import verdicts
from tomlib.experiments._calibration import run_block, the_claim
from tomlib.sim import SimSpec

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def _verdict(paper: str, spec: dict[str, object], units: int) -> dict:
    frame = run_block(paper, spec, units, seed=3)
    return verdicts("cal", [the_claim(paper)], {"calibration": frame}).iloc[0].to_dict()


@pytest.mark.sim
def test_a_declared_gain_of_tom_ib_is_supported_and_the_callers_results_are_untouched(isolated: Path) -> None:
    got = _verdict("tom_ib", {"city_idle": {"Base": 0.6, "ToM+IB": 0.0}}, units=6)
    assert got["verdict"] == "supported" and got["effect"] > 0 and got["n_units"] == 12, got
    reverse = _verdict("tom_ib", {"city_idle": {"Base": 0.0, "ToM+IB": 0.6}}, units=6)
    assert reverse["verdict"] == "contradicted", reverse
    assert not (isolated / "results" / "units").exists()  # the runs wrote to their own scratch folder


def test_the_declared_competence_names_known_configurations() -> None:
    with pytest.raises(ValueError, match="city_idle maps configurations"):
        SimSpec(city_idle={"ToM-IB": 0.1})
    with pytest.raises(ValueError, match="city_idle"):
        SimSpec(city_idle={"Base": 1.5})


@pytest.mark.sim
def test_matrix_agents_of_their_declared_order_coordinate_when_aligned_and_coin_flips_do_not(isolated: Path) -> None:
    exact = _verdict("adaptive_tom", {"tom_error": 0.0}, units=4)
    assert exact["verdict"] == "supported" and exact["effect"] > 20, exact
    flips = run_block("adaptive_tom", {"tom_error": 0.5}, 40, seed=4)
    gap = flips.groupby("alignment")["value"].mean()
    assert abs(gap["aligned"] - gap["misaligned"]) < 6, gap  # 40 episodes a pair: SE about 2.1 points


@pytest.mark.sim
def test_engineers_who_follow_a_coalition_leader_raise_ftm_and_equal_rates_do_not(isolated: Path) -> None:
    c = the_claim("coalition")

    def verdict(spec: dict[str, object]) -> dict:
        frame = run_block("coalition", spec, 10, seed=3, per_block=10)  # one seed of 10 tasks, with and without
        return verdicts("cal", [c], {"calibration": frame}).iloc[0].to_dict()

    gain = verdict({"p_follow": 0.3, "follow_by_pm": {"ToM-1+matching": 1.0}})
    assert gain["verdict"] == "supported" and gain["n_units"] == 10, gain  # the pairs are the tasks
    loss = verdict({"p_follow": 0.9, "follow_by_pm": {"ToM-1+matching": 0.0}})
    assert loss["verdict"] == "contradicted", loss
    assert not (isolated / "results" / "units").exists()
