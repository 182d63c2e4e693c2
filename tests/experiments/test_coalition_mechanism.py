"""Notebook 07's functions: the worked example, the live widget, Algorithm 1 runs and the Appendix G table."""

from __future__ import annotations

from pathlib import Path

import pytest

from tomlib.experiments import coalition_mechanism as cm
from tomlib.report import validate_results

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


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


def test_the_widget_redraws_the_instance_it_was_given_not_the_worked_one() -> None:
    from tomlib.coalition import make_instance

    mine = make_instance({"PM": {"Ada": 0.9, "Bo": -0.8, "Cy": 0.6}}, names=["PM", "Ada", "Bo", "Cy"], min_size=2)
    box = cm.mechanism_widget(mine)
    out = box.children[1]
    first = out.value
    sliders = {c.description: c for c in box.children[0].children[-1].children[0].children}
    sliders["s Bo"].value = 1.0  # the PM's belief about Bo now matches perfectly
    assert out.value != first and "Bo" in out.value.split("Team selected")[1].split("</tr>")[0]
    assert "Engineer" not in first + out.value  # the worked example's agents never appear


def test_algorithm1_runs_log_every_round_and_appendix_g_follows_the_contract(isolated: Path) -> None:
    runs, run_id = cm.algorithm1(rounds=4, seed=1)
    assert set(runs) == {"iclr", "neurips"} and all(len(r.rounds) == 4 for r in runs.values())
    assert (isolated / "results" / "runs" / run_id / "events.jsonl").exists()
    table, per = cm.appendix_g(trials=3, seed=0)
    validate_results(table)
    assert set(table["metric"]) == {
        "stable_exists_rate",
        "dynamics_converged_rate",
        "dynamics_cycle_rate",
        "blocking_at_start_rate",
        "mean_steps_when_blocked",
    }
    # three readings of what may block on the same instances (80% of the pairs trusted), and G.2's on uniform ones
    assert len(per) == 3 * 6 * 4
    assert per.groupby(["trust", "blocking"]).size().to_dict() == {
        ("0.8", "G.2"): 18,
        ("0.8", "§4.2"): 18,
        ("0.8", "§4.2, |C| ≥ n - 1"): 18,
        ("uniform", "G.2"): 18,
    }


def test_check_hints_holds_each_parameter_to_its_type_hint() -> None:
    from tomlib.experiments import check_hints

    ns = {"__annotations__": {"trials": int, "lam": float, "name": str}, "trials": 3, "lam": 1, "name": "x"}
    check_hints(ns)  # an int is a fine float
    for bad in ({"trials": "five"}, {"trials": True}, {"lam": "1.0"}, {"name": 3}):
        with pytest.raises(TypeError, match=f"parameter {next(iter(bad))} must be"):
            check_hints({**ns, **bad})


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        ({"trials": 0}, "parameter trials must be at least 1; got 0"),  # was a KeyError 'cycle_length' in cell 7
        ({"rounds": -1}, "parameter rounds must be at least 1; got -1"),  # was a zip() ValueError in cell 6
        ({"selection_draws": 0}, "parameter selection_draws must be at least 1"),
        ({"min_size": -2}, "parameter min_size must be at least 0"),
    ],
)
def test_07s_counts_are_checked_before_any_work(bad: dict[str, int], said: str) -> None:
    counts = {"rounds": 6, "trials": 100, "selection_draws": 300, "min_size": 0}
    cm.check_parameters(**counts)
    with pytest.raises(ValueError, match=said):
        cm.check_parameters(**{**counts, **bad})


def test_one_to_many_matchings_fill_up_where_pairs_leave_agents_out() -> None:
    t = cm.one_to_many_comparison(trials=20, seed=1, sizes=(3, 5), quotas=(1, 2))
    assert list(t.index) == [(3, 1), (3, 2), (5, 1), (5, 2)]
    # three agents: pairs leave one out; with two places each the triangle is stable whatever the scores
    assert t.loc[(3, 1), "agents matched (mean)"] == 2.0
    assert t.loc[(3, 2), "a stable matching exists %"] == 100.0 and t.loc[(3, 2), "agents matched (mean)"] == 3.0
    assert t.loc[(5, 1), "partners per matched agent (mean)"] == 1.0
    assert 1.0 < t.loc[(5, 2), "partners per matched agent (mean)"] <= 2.0


def test_c1_roles_enter_the_team_by_ability_only_with_the_ability_term() -> None:
    t = cm.c1_case_study(draws=60, seed=2, frontend_weights=(0.0, 1.0)).set_index(["frontend share w", "ability term"])
    plain, intended = "no ability term (λ = 0)", "λ·α, intended sign"
    # without the term, who joins does not depend on the task; with it, the backend-heavy task favours Backend and
    # the frontend-heavy one UI, and the printed sign does the opposite
    shares = ["UI in team %", "Backend in team %", "Full-Stack in team %"]
    assert list(t.loc[(0.0, plain), shares]) == list(t.loc[(1.0, plain), shares])
    assert t.loc[(0.0, intended), "Backend in team %"] > t.loc[(0.0, plain), "Backend in team %"]
    assert t.loc[(1.0, intended), "UI in team %"] > t.loc[(1.0, plain), "UI in team %"]
    assert t.loc[(1.0, "λ·α, sign as printed"), "UI in team %"] < t.loc[(1.0, plain), "UI in team %"]
    assert len(cm.C1_NOT_GIVEN) == 5


def test_appendix_gs_instances_trust_as_often_as_asked_and_uniform_ones_are_as_before() -> None:
    import numpy as np

    from tomlib.coalition._appendix_g import random_instance

    rng = np.random.default_rng(3)
    scores = np.concatenate([random_instance(rng, 7, trust=0.8).scores[~np.eye(7, dtype=bool)] for _ in range(200)])
    trusted = scores >= 0.5  # φ = (1 - s) / 2 <= 0.25
    assert abs(trusted.mean() - 0.8) < 0.02 and scores.min() >= -1 and scores.max() <= 1
    # a uniform instance is the draw it always was: the same scores from the same generator state
    a, b = np.random.default_rng(4), np.random.default_rng(4)
    assert (random_instance(a, 5).scores == b.uniform(-1, 1, (5, 5)).round(2)).all()
    with pytest.raises(ValueError, match="trust is a share of pairs"):
        cm.appendix_g(trials=1, trust=(1.5,))
