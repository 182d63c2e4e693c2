"""Every report shows the claims engine against a declared truth (issue 53, item 9): each design path the registries
use, replicated under a declared null and under the paper's effect, small enough to make in every series (seeded and
kept in the cache folder, so a results folder of the same code reuses it)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.claims.test_engine import claim
from tomlib.claims import _calibrate as cal
from tomlib.claims import load_claims
from tomlib.report._claims import engine_check

pytestmark = pytest.mark.tier("fast")


def test_each_design_path_of_the_registries_is_named_once() -> None:
    paths = {cal.path_of(c) for p in ("adaptive_tom", "coalition", "tom_ib") for c in load_claims(p) if c.test != "all"}
    assert {"difference of gaps", "mean in each stratum", "paired means, clustered", "two samples of means"} <= paths
    assert cal.path_of(claim(pair_on="task", cluster_on="task")) == "paired means, clustered"
    assert cal.path_of(claim(test="rate_diff", strata="task")) == "rates within strata"


def test_the_check_holds_alpha_on_its_small_and_planned_sizes() -> None:
    rows = cal.engine_check(("tom_ib",), reps=20, seed=1)
    assert set(rows["size"]) == {"planned", "small"} and (rows.loc[rows["size"] == "small", "n_units"] == 8).all()
    assert rows["false_verdicts"].sum() / rows["reps"].sum() <= cal.mc_bound(0.05, int(rows["reps"].sum()))
    again = cal.engine_check(("tom_ib",), reps=20, seed=1)
    pd.testing.assert_frame_equal(rows, again)  # seeded: the same rows for the same code


def test_each_stratum_power_is_the_chance_that_every_stratum_is_decided() -> None:
    c = claim(test="mean", b="", null=0.0, strata="s", each_stratum=True, paper_effect=0.5, paper_effect_sd=1.0)
    got = cal.calibrate(c, 90, 200, np.random.default_rng(2))
    assert got.power is not None and abs(got.supported_rate - got.power) < 0.1  # type: ignore[operator]


def test_the_check_is_made_once_and_kept_in_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOMLIB_CACHE", str(tmp_path / "cache"))
    calls = []
    real = cal.engine_check

    def counted(*args: object, **kwargs: object) -> pd.DataFrame:
        calls.append(args)
        return real(("tom_ib",), reps=2)

    monkeypatch.setattr(cal, "engine_check", counted)
    first = cal.write_engine_check(tmp_path / "a", reps=2)
    second = cal.write_engine_check(tmp_path / "b", reps=2)  # another results folder, the same code: the cache
    assert len(calls) == 1 and first.read_bytes() == second.read_bytes()
    cached = next((tmp_path / "cache").glob("engine-check-*.csv"))
    os.chmod(cached, 0o666)  # a cache file others could write is not believed
    (tmp_path / "b" / cal.ENGINE_CHECK).unlink()
    cal.write_engine_check(tmp_path / "b", reps=2)
    assert len(calls) == 2


def test_reports_sentence_pools_the_null_and_compares_power_at_planned_sizes() -> None:
    rows = pd.DataFrame(
        {
            "path": ["two samples of means"] * 2 + ["paired means"] * 2,
            "claim_id": ["x.a", "x.a", "x.b", "x.b"],
            "size": ["planned", "small"] * 2,
            "n_units": [40, 8, 34, 8],
            "reps": [20] * 4,
            "false_verdicts": [1, 2, 0, 1],
            "supported_rate": [0.75, 0.1, 0.96, 0.0],
            "power": [0.80, 0.11, 0.81, 1.0],
        }
    )
    said, table = engine_check(rows)
    assert said.startswith("Under a declared null, 4 of 80 replications (5.0%) gave a false verdict")
    assert "up to 9.9% is chance" in said  # 5% + 2 Monte-Carlo SE at 80
    assert "10 points from the power it computes, on average over 2 designs (at most 15;" in said  # small sizes apart
    assert list(table["false verdicts under the null"]) == ["1 of 20", "2 of 20", "0 of 20", "1 of 20"]
