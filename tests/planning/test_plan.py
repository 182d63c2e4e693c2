"""``python -m tomlib plan`` (issue 34): units for the target power from the engine's own design and solver, sizes
scaled from a pilot run, the spread's source named, unpriced models refused, and a profile that runs the plan."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from statsmodels.stats.power import TTestPower

from tests.planning.pilots import CLAIM, STEM
from tests.planning.pilots import pilot as _pilot
from tomlib.__main__ import main
from tomlib.claims import load_claims
from tomlib.claims._verdict import paper_distance
from tomlib.planning import make_plan, select_claims
from tomlib.planning._plan import family_sizes

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def _line(plan, claim_id: str = CLAIM):
    return next(c for c in plan.claims if c.claim.claim_id == claim_id)


def test_the_units_are_the_engines_power_solve_and_the_sizes_scale_from_the_pilot(isolated: Path) -> None:
    _pilot(isolated / "pilot", "llm:local", tasks=2, sd=3.0)
    claim = select_claims(CLAIM)[0]
    plan = make_plan("gpt-4o-mini", [claim], pilots=[isolated / "pilot"])
    line = _line(plan)
    m = family_sizes([claim], "gpt-4o-mini", {STEM})["coalition"]
    assert m == sum(c.units == "coalition.table1" and c.test != "all" for c in load_claims("coalition"))
    # no SD printed, no run of gpt-4o-mini or of the sim: the calibration's assumed SD, twice the paper's effect
    assert line.sd_from.startswith("assumed") and line.sd == pytest.approx(2 * abs(claim.paper_effect))
    d = paper_distance(claim) / line.sd
    want = math.ceil(TTestPower().solve_power(effect_size=d, alpha=0.05 / m, power=0.8))
    assert line.units == want
    assert line.pilot is not None and line.pilot.n_units == 4  # 2 tasks x 2 benchmarks, one model
    assert plan.notebooks[STEM]["humaneval_tasks"] == math.ceil(2 * want / 4)
    assert plan.notebooks[STEM]["models"] == "gpt-4o-mini"
    assert plan.estimates[STEM].calls > 0 and plan.estimates[STEM].usd > 0


def test_a_sim_run_gives_the_spread_when_the_paper_prints_none(isolated: Path) -> None:
    _pilot(isolated / "pilot", "llm:local", tasks=2, sd=3.0)
    _pilot(isolated / "sim", "sim:sim", tasks=12, sd=20.0, seed=1, ran="sim")
    claim = select_claims(CLAIM)[0]
    plan = make_plan("gpt-4o-mini", [claim], pilots=[isolated / "pilot", isolated / "sim"])
    line = _line(plan)
    units = pd.read_csv(isolated / "sim" / "units" / "coalition.table1.csv")
    per = units.groupby(["benchmark", "task_id", "tom_order"])["value"].mean().unstack("tom_order")
    assert line.sd_from.startswith("the sim") and line.sd == pytest.approx((per[2] - per[1]).std(ddof=1))
    assert line.pilot.source == "llm:local"  # the structure from the first pilot that ran the claim's notebook


def test_a_paper_that_prints_sds_plans_with_them(isolated: Path) -> None:
    _pilot(isolated / "pilot", "llm:local", tasks=2, sd=3.0)
    claims = [c for c in select_claims("adaptive_tom") if c.paper_effect_sd]
    plan = make_plan("llama-3.3-70b", claims, pilots=[isolated / "pilot"])
    for line in plan.claims:
        assert line.status == "no pilot"  # no run of Tables 1-4 in this pilot: said (the fix is printed once)
        assert "shows its conditions" in line.why


def test_claims_about_other_models_and_formal_theorems_are_not_planned(isolated: Path) -> None:
    plan = make_plan("gpt-4o-mini", select_claims("tom_ib,coalition.g1_convergence"), pilots=[isolated])
    status = {c.claim.claim_id: c.status for c in plan.claims}
    assert status["coalition.g1_convergence"] == "decided without calls"
    assert status["tom_ib.gpt4o_no_loss"] == "not for this model"
    assert status["tom_ib.gpt35_below_gpt4o"] == "not for this model"


def test_an_unpriced_model_and_a_typo_are_refused_with_the_fix(isolated: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["plan", "--model", "glm-4", "--claims", "coalition", "--no-write"]) == 2
    assert "no prices" in capsys.readouterr().err
    assert main(["plan", "--model", "gpt-4o-mini", "--claims", "coalition.higher_tom_no_gian", "--no-write"]) == 2
    assert "did you mean 'coalition.higher_tom_no_gain'" in capsys.readouterr().err
    assert main(["plan", "--model", "gpt-4o-mini", "--claims", "coalitions", "--no-write"]) == 2
    err = capsys.readouterr().err
    assert "(did you mean 'coalition'?)" in err and "the papers are" in err


@pytest.mark.series
def test_the_written_profile_runs_the_plan_and_nothing_else(isolated: Path, capsys: pytest.CaptureFixture) -> None:
    """A plan for the sim model, whose pilot shows a spread small enough that 1 task per benchmark decides the
    claim: the written profile runs notebook 08 at those sizes (and skips every other notebook)."""
    from tomlib.runner import load_profile, run_notebooks

    _pilot(isolated / "pilot", "sim:sim", tasks=3, sd=0.5, ran="sim")
    out = isolated / "plan.yaml"
    assert (
        main(["plan", "--model", "sim", "--claims", CLAIM, "--pilot", str(isolated / "pilot"), "--out", str(out)]) == 0
    )
    printed = capsys.readouterr().out
    assert f"Profile: {out}" in printed and "Total:" in printed
    profile = load_profile(out)
    assert list(profile.notebooks) == [STEM] and STEM not in profile.skip and "09_coalition_table2_fig2" in profile.skip
    assert profile.notebooks[STEM]["humaneval_tasks"] == 1
    outcomes = run_notebooks(profile, [], results=isolated / "results", html=False)
    ran = {o.name: o.status for o in outcomes if o.status != "skipped"}
    assert ran == {STEM: "ok"}, ran
    units = pd.read_csv(isolated / "results" / "units" / "coalition.table1.csv")
    assert set(units["source"]) >= {"sim:sim"} and units.loc[units["source"] == "sim:sim", "task_id"].nunique() == 2


def test_the_plans_profile_is_written_where_no_stamp_looks(
    isolated: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`plan` wrote into configs/profiles/, which every notebook's stamp hashes, so the next ./reproduce.sh reran all
    15 notebooks (520 s). Its profile now goes to .tomlib/profiles/ (here TOMLIB_PROFILES), the series' inputs hash is
    what it was, and `run --profile NAME` finds it. On a copy of configs/ (TOMLIB_CONFIGS): fails on main without
    writing into the checkout."""
    import shutil

    from tomlib.paths import project_root
    from tomlib.runner import _execute, available_profiles, load_profile

    shutil.copytree(project_root() / "configs", isolated / "configs")
    monkeypatch.setenv("TOMLIB_CONFIGS", str(isolated / "configs"))
    monkeypatch.setenv("TOMLIB_PROFILES", str(isolated / "state" / "profiles"))
    monkeypatch.setattr(_execute, "_inputs_cache", {})
    before = _execute.shared_inputs_hash()
    _pilot(isolated / "pilot", "llm:local", tasks=2, sd=3.0)
    assert main(["plan", "--model", "gpt-4o-mini", "--claims", CLAIM, "--pilot", str(isolated / "pilot")]) == 0
    name = f"plan-gpt-4o-mini-{CLAIM}"
    assert f"Profile: {isolated / 'state' / 'profiles' / name}.yaml" in capsys.readouterr().out
    assert sorted(p.name for p in (isolated / "configs" / "profiles").iterdir()) == sorted(
        p.name for p in (project_root() / "configs" / "profiles").iterdir()
    )
    monkeypatch.setattr(_execute, "_inputs_cache", {})
    assert _execute.shared_inputs_hash() == before
    assert name in available_profiles() and load_profile(name).notebooks[STEM]
