"""The claims engine end to end on the sim (issue 32): a sim that declares an effect per condition, run through an
experiment, gives the verdict the declared truth implies (``benchmarks/bench_claims.py`` measures the rates)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tomlib.claims._verdict import verdicts
from tomlib.experiments._calibration import city_trials, the_claim
from tomlib.sim import SimSpec


def _verdict(idle: dict[str, float], trials: int) -> dict:
    frame = city_trials(idle, trials, seed=3).assign(metric="y")
    return verdicts("cal", [the_claim()], {"calibration": frame}).iloc[0].to_dict()


def test_a_declared_gain_of_tom_ib_is_supported_and_the_callers_results_are_untouched(isolated: Path) -> None:
    got = _verdict({"Base": 0.6, "ToM+IB": 0.0}, trials=6)
    assert got["verdict"] == "supported" and got["effect"] > 0 and got["n_units"] == 12, got
    reverse = _verdict({"Base": 0.0, "ToM+IB": 0.6}, trials=6)
    assert reverse["verdict"] == "contradicted", reverse
    assert not (isolated / "results" / "units").exists()  # the runs wrote to their own scratch folder


def test_the_declared_competence_names_known_configurations() -> None:
    with pytest.raises(ValueError, match="city_idle maps configurations"):
        SimSpec(city_idle={"ToM-IB": 0.1})
    with pytest.raises(ValueError, match="city_idle"):
        SimSpec(city_idle={"Base": 1.5})
