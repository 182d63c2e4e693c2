"""Notebook 07's functions: the worked example, the live widget, Algorithm 1 runs and the Appendix G table."""

from __future__ import annotations

from pathlib import Path

import pytest

from tomlib.experiments import coalition_mechanism as cm
from tomlib.report import validate_results


def test_the_worked_example_picks_the_two_engineers_appendix_a_scores_best() -> None:
    view = cm.mechanism_view(cm.worked_instance())
    assert [view.inst.names[i] for i in view.team] == ["PM", "Engineer1", "Engineer2"]
    assert view.ftm == {"PM": 0.5} and not view.signal
    assert "Engineer3, Engineer4" in view.html()  # outside every coalition


def test_abilities_pull_an_engineer_in_only_with_the_sign_the_text_intends() -> None:
    able = {"Engineer3": 1.0}
    intent = cm.mechanism_view(cm.worked_instance(ability=able))
    printed = cm.mechanism_view(cm.worked_instance(ability=able, ability_sign="printed"))
    assert 3 in intent.team and 3 not in printed.team


def test_the_widget_redraws_when_a_slider_moves() -> None:
    box = cm.mechanism_widget(cm.worked_instance())
    out = box.children[1]
    before = out.value
    sliders = {c.description: c for c in box.children[0].children[-1].children[0].children}
    sliders["s Engineer4"].value = 1.0  # the PM's belief about Engineer4 now matches perfectly
    assert out.value != before and "Engineer4" in out.value.split("Team selected")[1].split("</tr>")[0]


def test_algorithm1_runs_log_every_round_and_appendix_g_follows_the_contract(isolated: Path) -> None:
    runs, run_id = cm.algorithm1(rounds=4, seed=1)
    assert set(runs) == {"iclr", "neurips"} and all(len(r.rounds) == 4 for r in runs.values())
    assert (isolated / "results" / "runs" / run_id / "events.jsonl").exists()
    table, per = cm.appendix_g(trials=3, seed=0)
    validate_results(table)
    assert set(table["metric"]) == {"stable_exists_rate", "dynamics_converged_rate", "dynamics_cycle_rate"}
    assert len(per) == 3 * 6


def test_check_hints_holds_each_parameter_to_its_type_hint() -> None:
    from tomlib.experiments import check_hints

    ns = {"__annotations__": {"trials": int, "lam": float, "name": str}, "trials": 3, "lam": 1, "name": "x"}
    check_hints(ns)  # an int is a fine float
    for bad in ({"trials": "five"}, {"trials": True}, {"lam": "1.0"}, {"name": 3}):
        with pytest.raises(TypeError, match=f"parameter {next(iter(bad))} must be"):
            check_hints({**ns, **bad})
