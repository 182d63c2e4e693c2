"""The city simulation's rules (tom-internal-beliefs-asp.txt §3.1) and its exact optimum."""

from __future__ import annotations

from pathlib import Path

import pytest

from tomlib.agents.city import HeuristicTeam, run_heuristic
from tomlib.asp import exact_unit, optimal_plan, replay_plan
from tomlib.envs.city import PROVENANCE, Action, City, CityParams, IllegalCityAction


def test_every_parameter_has_a_documented_source() -> None:
    assert set(PROVENANCE) == set(CityParams.model_fields)
    assert all(src.split()[0] in {"paper", "authors'", "ours"} for src in PROVENANCE.values())


def test_health_decrease_paper_and_code_rules() -> None:
    paper, code = CityParams(), CityParams(decrease_rule="code")
    assert [paper.health_decrease(x) for x in (0, 9, 10, 19, 20, 50)] == [10, 10, 5, 5, 0, 0]
    assert code.health_decrease(20) == 5 and code.health_decrease(21) == 0


def test_turn_order_feedback_and_world_update() -> None:
    city = City()
    s = city.reset()
    assert city.current_agent(s) == "FOOD_AGENT" and s.carry["FOOD_AGENT"] == 100
    with pytest.raises(IllegalCityAction, match="not connected"):
        city.apply(s, "FOOD_AGENT", Action("MOVE", "d4"))
    with pytest.raises(IllegalCityAction, match="supply node"):
        city.apply(s, "FOOD_AGENT", Action("SUPPLY_RESOURCE", 10))
    with pytest.raises(IllegalCityAction, match="MEDICAL_AGENT"):
        city.apply(s, "MEDICAL_AGENT", Action("NONE"))
    s = city.apply(s, "FOOD_AGENT", Action("MOVE", "d2"))
    s = city.apply(s, "MEDICAL_AGENT", Action("NONE"))
    before = {d: dict(v) for d, v in s.levels.items()}
    s = city.apply(s, "SECURITY_AGENT", Action("NONE"))
    assert s.round == 1 and s.turn == 0
    # d4 FOOD was 30: no loss this round (>= 20), then 10 consumed
    assert s.levels["d4"]["FOOD"] == before["d4"]["FOOD"] - 10 and s.health["d4"] == 100
    s = city.apply(s, "FOOD_AGENT", Action("SUPPLY_RESOURCE", 30))
    assert s.carry["FOOD_AGENT"] == 70 and s.levels["d2"]["FOOD"] == 30 + 30
    with pytest.raises(IllegalCityAction, match="only 70"):
        city.check(s, "FOOD_AGENT", Action("SUPPLY_RESOURCE", 80))


def test_parse_action_and_its_feedback() -> None:
    city = City()
    assert city.parse_action("I will MOVE(d3) now") == Action("MOVE", "d3")
    assert city.parse_action("supply_resource( 25 )") == Action("SUPPLY_RESOURCE", 25)
    assert city.parse_action("NONE") == Action("NONE")
    for bad in ["go to d3", "SUPPLY_RESOURCE(lots)", "MOVE()"]:
        with pytest.raises(IllegalCityAction):
            city.parse_action(bad)


def test_an_optimum_is_solved_once_and_kept_for_the_same_rules(isolated: Path) -> None:
    short = CityParams(rounds=3)  # not among the committed optima
    first = optimal_plan(short)
    kept = list((isolated / "store" / "asp_optima").glob("*.json"))
    assert first.proven_optimal and not first.cached and len(kept) == 1
    again = optimal_plan(short)
    assert again.cached and again.mean_health == first.mean_health and again.actions == first.actions
    assert replay_plan(again, short) == pytest.approx(again.mean_health)
    assert not optimal_plan(CityParams(rounds=3, consumption=20)).cached  # other rules: solved, not reused
    kept[0].write_text("{ damaged")
    assert not optimal_plan(short).cached and optimal_plan(short).cached  # a damaged file is solved again


def test_optimum_is_proven_replays_in_the_simulation_and_beats_the_heuristic() -> None:
    plan = optimal_plan(cache=False)
    assert plan.proven_optimal
    assert replay_plan(plan) == pytest.approx(plan.mean_health)
    assert plan.mean_health >= run_heuristic().mean_health
    assert plan.unit == 10  # exact for the paper's rule (see tomlib.asp.planner)
    finer = optimal_plan(unit=5)
    assert finer.mean_health == pytest.approx(plan.mean_health)
    assert exact_unit(CityParams(decrease_rule="code")) == 1  # 21 and 20 differ there: whole units needed
    assert (
        exact_unit(
            CityParams(
                initial_levels={**CityParams().initial_levels, "d2": {"FOOD": 45, "MEDICINE": 60, "SECURITY": 70}}
            )
        )
        == 1
    )


def test_heuristic_team_is_deterministic_and_legal() -> None:
    a, b = run_heuristic(), run_heuristic(team=HeuristicTeam())
    assert a.mean_health == b.mean_health and len(a.actions) == 21
