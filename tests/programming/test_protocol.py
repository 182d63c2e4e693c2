"""The programming protocol's readings against the fake server: re-match timing, the first coalition, what the
PM's prompt shows, whose preferences enter the matching, and their replay on recorded scores."""

from __future__ import annotations

import asyncio
import json

import pytest

from tomlib.coalition import run_algorithm1
from tomlib.datasets import humaneval
from tomlib.experiments import coalition_programming as cp
from tomlib.experiments import coalition_protocol as protocol
from tomlib.programming import TeamConfig, run_episode, team_instance

from .test_team import play, responder

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def pm_prompts(server) -> list[str]:  # type: ignore[no-untyped-def]
    pm = "project manager of a team"
    return [r["messages"][-1]["content"] for r in server.requests if pm in r["messages"][0]["content"]]


def test_a_signal_rematches_the_next_round_under_algorithm_1s_lines(make_model, server) -> None:  # type: ignore[no-untyped-def]
    cfg = TeamConfig(pm_tom=2, matching=True, rematch="next")
    assert cfg.label == "pm2-eng0-matching-rematchnext"
    ep = play(make_model, server, cfg)
    # Engineer2 drifts in round 2 (a signal): without the adaptation round, round 3 re-matches; its new partner
    # Engineer4 (φ = 0.4) then signals every round, and every next round re-matches
    assert ep.matching_rounds == [1, 3, 4, 5] and ep.lifetimes() == [2, 1, 1, 1]
    assert [r.team for r in ep.rounds][2] == ["Engineer1", "Engineer4"]


def test_the_initial_coalition_of_all_agents_counts_as_the_first(make_model, server) -> None:  # type: ignore[no-untyped-def]
    cfg = TeamConfig(pm_tom=2, matching=True, initial="all")
    ep = play(make_model, server, cfg)
    teams = [r.team for r in ep.rounds]
    # round 1: everyone; Engineer3 (-0.5) and Engineer4 (0.2) miss ε, a signal; after the adaptation round 2, round 3
    # matches; Engineer4 (φ = 0.4) signals again in round 3, so round 5 matches once more
    assert teams[0] == teams[1] == ["Engineer1", "Engineer2", "Engineer3", "Engineer4"]
    assert ep.rounds[0].structure == "all agents (the initial coalition)" and ep.rounds[0].rematch_signal
    assert ep.matching_rounds == [1, 3, 5] and ep.lifetimes() == [2, 2, 1]
    with pytest.raises(ValueError, match="initial must be one of match, all"):
        TeamConfig(initial="everyone")
    scores = [[[0, 1, 1], [1, 0, 1], [1, 1, 0]]] * 3  # always aligned: the all-agents coalition lasts the run
    run = run_algorithm1(team_instance(TeamConfig(engineers=2)), scores, initial="all")
    assert run.matching_rounds == [1] and run.lifetimes() == [3]


def test_the_pms_history_shows_scores_and_cites_its_team_only_by_our_reading(make_model, server) -> None:  # type: ignore[no-untyped-def]
    play(make_model, server, TeamConfig(pm_tom=1, matching=True, rounds=2))
    ours = pm_prompts(server)[1]
    assert "score +0.90" in ours and "- Engineer3" not in ours
    server.requests.clear()
    cfg = TeamConfig(pm_tom=1, matching=True, rounds=2, pm_feedback="actions", pm_cites="all")
    assert cfg.label == "pm1-eng0-matching-actions-citeall"
    play(make_model, server, cfg)
    appendix_c = pm_prompts(server)[1]
    assert "score" not in appendix_c and "- Engineer3: compared every pair" in appendix_c
    assert "What the engineers did:" in appendix_c
    with pytest.raises(ValueError, match="pm_cites must be one of team, all"):
        cp.check_parameters(
            "local", llm_mode="replay", humaneval_tasks=1, mbpp_tasks=1, seeds=1, protocol={"pm_cites": "teem"}
        )
    with pytest.raises(ValueError, match="unknown protocol reading 'pm_feedbak'"):
        cp.check_protocol({"pm_feedbak": "scores"})


def test_every_believer_scores_its_partners_when_all_agents_have_preferences(make_model, server) -> None:  # type: ignore[no-untyped-def]
    def with_peers(request: dict) -> str:  # type: ignore[type-arg]
        system = request["messages"][0]["content"]
        if "evaluating your own beliefs about your teammates" in system:
            me = system.split("You are ")[1].split(",")[0]
            peers = ["PM", *(f"Engineer{i}" for i in range(1, 5) if f"Engineer{i}" != me)]
            score = -0.9 if me == "Engineer1" else 0.9  # Engineer1 trusts nobody
            return json.dumps({n: {"score": score, "explanation": "ok", "justification": "because"} for n in peers})
        return responder(request)

    cfg = TeamConfig(pm_tom=1, eng_tom=1, matching=True, preferences="all")
    assert cfg.label == "pm1-eng1-matching-prefsall" and TeamConfig(matching=True, preferences="all").label == (
        "pm1-eng0-matching"  # ToM-0 engineers have no beliefs: the same run as the PM's preferences alone
    )
    server.responder = with_peers
    ep = asyncio.run(run_episode(make_model(json_mode="json_object"), humaneval()[0], cfg))
    assert len(server.requests) == 5 * (1 + 4 + 1 + 4) == cp.estimate("local", [cfg], 1, 1).calls
    r1 = ep.coalition.rounds[0]  # type: ignore[union-attr]
    assert set(r1.ftm) == {"PM", "Engineer1", "Engineer2", "Engineer3", "Engineer4"} and r1.ftm["Engineer1"] == 0
    # the PM alone would take Engineer1 (0.9) and Engineer2 (0.6); Engineer1 distrusts everyone, so it stays out
    assert ep.rounds[0].team != ["Engineer1", "Engineer2"] and "Engineer1" not in ep.rounds[0].team


def test_a_replay_keeps_the_recorded_teams_and_matches_a_run_whose_scores_do_not_move(make_model, server) -> None:  # type: ignore[no-untyped-def]
    ours = play(make_model, server, TeamConfig(pm_tom=2, matching=True))
    same = protocol.replay_episode(ours, {})
    assert same["same_teams"] and same["coalition_lifetime"] == ours.coalition_lifetime == 2.5
    for variant in ({"rematch": "next"}, {"initial": "all"}):
        exact = play(make_model, server, TeamConfig(pm_tom=2, matching=True, **variant))
        # the fake model's scores do not depend on the team, so replaying ours under the reading is that run
        got = protocol.replay_episode(ours, variant)
        assert got["teams"] == [r.team for r in exact.rounds] and not got["same_teams"]
        assert got["coalition_lifetime"] == exact.coalition_lifetime and got["rematches"] == len(exact.lifetimes()) - 1
    runs = cp.Runs("fake", [ours], "run", None)
    summary = protocol.replay_summary(protocol.replay([runs]))
    assert list(summary["reading"]) == list(protocol.VARIANTS)
    by = summary.set_index("reading")
    assert by.loc["rematch=next", "coalition_lifetime"] == 1.25 and by.loc["initial=all", "coalition_lifetime"] == 1.667
    assert by.loc["as run", "teams_differ"] == 0 and by.loc["rematch=next", "teams_differ"] == 1
    wide = protocol.replay_wide(summary)
    assert list(wide.columns) == list(protocol.VARIANTS) and wide["as run"].iloc[0] == 2.5
    assert protocol.plot_replay(summary) is not None


def test_the_prompt_readings_run_again_and_sit_beside_ours(make_model, server, isolated) -> None:  # type: ignore[no-untyped-def]
    from .test_team import run_humaneval

    server.responder = responder
    chat = make_model(json_mode="json_object")
    configs = [TeamConfig(pm_tom=0), TeamConfig(pm_tom=1, matching=True)]
    ours = cp.table3(run_humaneval(chat, configs))
    before = len(server.requests)
    kw = {"model": "fake", "chat": chat, "benchmarks": ["humaneval"], "humaneval_tasks": 1, "progress": False}
    others = asyncio.run(protocol.run_prompt_readings(configs, cp.table3, protocol={}, on_sandbox=None, **kw))
    # pm_feedback=actions reruns both conditions, pm_cites=all the matching one: 3 episodes of 5 rounds, 6 calls each
    assert len(server.requests) - before == 3 * 5 * 6
    assert set(others["reading"]) == set(protocol.PROMPT_READINGS)
    wide = protocol.prompt_wide(ours, others)
    assert list(wide.columns) == ["paper", "ours", "pm_feedback=actions", "pm_cites=all"]
    # the fake model's replies do not read the history, so the readings leave its Table 3 as it was
    assert (wide["ours"] == wide["pm_feedback=actions"]).all()
    units = (isolated / "results" / "units" / "coalition.table3.csv").read_text()
    assert ",actions," in units and ",all," in units
    # a notebook already under a reading does not run it again
    again = asyncio.run(
        protocol.run_prompt_readings(
            configs, cp.table3, protocol={"pm_feedback": "actions", "pm_cites": "all"}, on_sandbox=None, **kw
        )
    )
    assert again.empty
