"""The iterative-programming team against the fake server: the round loop, FTM, the coalition, re-matches, the team
answer, Pass@1 through the sandbox, the results contract and the explorer's panels."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from tomlib.coalition import misalignment
from tomlib.datasets import humaneval
from tomlib.experiments import coalition_programming as cp
from tomlib.programming import TeamConfig, check_episodes, parse_engineer, pm_schema, run_episode
from tomlib.report import validate_results
from tomlib.trace import load_runs
from tomlib.widgets import Trace, step_html

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

GOOD = (
    "def has_close_elements(numbers, threshold):\n"
    "    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n"
)
WRONG = "def has_close_elements(numbers, threshold):\n    return False\n"
SCORES = {"Engineer1": 0.9, "Engineer2": 0.6, "Engineer3": -0.5, "Engineer4": 0.2}


def responder(request: dict) -> str:  # type: ignore[type-arg]
    system, user = request["messages"][0]["content"], request["messages"][-1]["content"]
    if "evaluating your own beliefs" in system:
        scores = dict(SCORES)
        if "rewrote it differently" in user:  # Engineer2 drifts from round 2 on
            scores["Engineer2"] = -0.8
        return json.dumps({n: {"score": s, "explanation": "ok", "justification": "because"} for n, s in scores.items()})
    if "project manager of a team" in system:
        keys = re.search(r"with the key\(s\) ([\w, ]+)\.", user).group(1).split(", ")  # type: ignore[union-attr]
        block = {"belief": "they will compare pairs", "explanation": "simple", "action": "The Engineer should loop."}
        return json.dumps(
            {k: block if k != "ToM_level0" else {"belief": "no belief", "action": "Do it."} for k in keys}
        )
    name = re.search(r"You are (Engineer\d)", system).group(1)  # type: ignore[union-attr]
    later = "Your code from the last round" in user
    if name == "Engineer4":
        return "Action: thought about it\nI could not finish."
    code = WRONG if name == "Engineer3" else GOOD
    action = "rewrote it differently" if (name == "Engineer2" and later) else "compared every pair"
    return f"Belief: they compare pairs\nAction: {action}\n```python\n{code}```"


def play(make_model, server, cfg: TeamConfig):  # type: ignore[no-untyped-def]
    server.responder = responder
    chat = make_model(json_mode="json_object")
    ep = asyncio.run(run_episode(chat, humaneval()[0], cfg))
    check_episodes([ep], workers=2)
    return ep


def run_humaneval(chat, configs, tasks: int = 1):  # type: ignore[no-untyped-def]
    """The notebooks' entry point on the first ``tasks`` HumanEval tasks, quietly."""
    return asyncio.run(
        cp.run_programming(
            configs,
            model="fake",
            chat=chat,
            benchmarks=["humaneval"],
            humaneval_tasks=tasks,
            progress=False,
            on_sandbox=None,
        )
    )


def test_without_matching_the_team_is_everyone(make_model, server) -> None:  # type: ignore[no-untyped-def]
    ep = play(make_model, server, TeamConfig(pm_tom=1, matching=False))
    assert len(ep.rounds) == 5 and ep.matching_rounds == []
    r1 = ep.rounds[0]
    assert r1.team == ["Engineer1", "Engineer2", "Engineer3", "Engineer4"]
    assert r1.ftm_team == r1.ftm_all == 0.5  # 0.9 and 0.6 are trusted (φ ≤ 0.25), -0.5 and 0.2 are not
    assert r1.answer == "Engineer1" and r1.answer_passed is True
    assert [t.passed for t in r1.turns] == [True, True, False, False]
    assert r1.turn("Engineer4").status == "no code"
    assert ep.rounds[1].ftm_all == 0.25  # Engineer2 drifted
    # 6 calls a round: instruction, four engineers, one self-evaluation
    assert len(server.requests) == 5 * 6


def test_matching_forms_a_coalition_and_rematches_after_adaptation(make_model, server) -> None:  # type: ignore[no-untyped-def]
    ep = play(make_model, server, TeamConfig(pm_tom=2, matching=True))
    teams = [r.team for r in ep.rounds]
    # round 1: the PM's best stable coalition of ⌈5/2⌉ = 3 is itself and its two best-aligned engineers
    assert teams[0] == ["Engineer1", "Engineer2"] and ep.rounds[0].ftm_team == 1.0
    # round 2: Engineer2 drifts (φ > ε), a re-match signal; ICLR's adaptation round 3; re-match in round 4
    assert ep.rounds[1].rematch_signal and teams[2] == teams[1] == teams[0]
    assert ep.matching_rounds == [1, 4] and teams[3] == ["Engineer1", "Engineer4"]
    assert ep.lifetimes() == [3, 2] and ep.coalition_lifetime == 2.5
    assert all(r.answer == "Engineer1" and r.answer_passed for r in ep.rounds)
    assert misalignment(SCORES["Engineer4"]) > 0.25 and ep.rounds[3].ftm_team == 0.5


def test_tables_follow_the_contract_and_use_the_human_eval_estimator(make_model, server, isolated) -> None:  # type: ignore[no-untyped-def]
    server.responder = responder
    chat = make_model(json_mode="json_object")
    configs = cp.table3_configs() + cp.table1_configs()
    runs = run_humaneval(chat, configs)
    t1, t3 = cp.table1(runs), cp.table3(runs)
    for t in (t1, t3):
        validate_results(t)
    ftm = t1[(t1["metric"] == "ftm") & (t1["round"] == "1")]
    assert set(ftm["value"]) == {50.0}
    stab = t3[t3["metric"] == "coalition_stability"]["value"].tolist()
    assert stab == [2.5, 2.5]
    assert set(t3[t3["metric"] == "pass_at_1_pct"]["value"]) == {100.0}
    assert "MetaGPT itself is not run" in t3[t3["method"] == "metagpt"]["note"].iloc[0]
    frame = cp.episode_frame(runs)
    assert cp.engineer_pass_at_1(list(zip(frame["engineers"], frame["engineers_passed"], strict=True))) == 0.5
    # the explorer shows the PM's levels, the alignment table, each engineer's code and test, and the coalition
    trace = Trace(load_runs(run_ids=[runs.run_id]))
    ref = next(r for r in trace.refs(runs.run_id, "humaneval:HumanEval/0:pm2-eng0-matching"))
    html = step_html(trace.step(ref, 2))
    for needle in ("ToM-1", "ToM-2", "belief-action alignment", "passes the tests", "re-match signal", "coalition"):
        assert needle in html, needle
    assert "Engineer3" in html and "not trusted" in html


def test_estimate_counts_calls_and_prices() -> None:
    est = cp.estimate("gpt-4o-mini", cp.table1_configs(), n_tasks=164, seeds=1)
    assert est.calls == 2 * 5 * 6 * 164 and est.usd is not None and est.usd > 0
    assert cp.estimate("local", cp.table1_configs(), 1, 1).usd == 0.0


def test_parameters_are_checked_before_work() -> None:
    with pytest.raises(TypeError, match="humaneval_tasks"):
        cp.check_parameters("local", llm_mode="replay", humaneval_tasks="two", mbpp_tasks=1, seeds=1)
    with pytest.raises(ValueError, match="seeds"):
        cp.check_parameters("local", llm_mode="replay", humaneval_tasks=1, mbpp_tasks=1, seeds=0)
    with pytest.raises(Exception, match="gpt-5-typo"):
        cp.check_parameters("local,gpt-5-typo", llm_mode="replay", humaneval_tasks=1, mbpp_tasks=1, seeds=1)
    assert cp.check_parameters(" local ", llm_mode="auto", humaneval_tasks=0, mbpp_tasks=2, seeds=3) == ["local"]


def test_pm_schema_has_appendix_c_levels() -> None:
    assert list(pm_schema(0).model_fields) == ["ToM_level0"]
    assert list(pm_schema(2).model_fields) == ["ToM_level1", "ToM_level2"]
    with pytest.raises(ValueError, match="pm_tom"):
        TeamConfig(pm_tom=3)


@pytest.mark.parametrize(
    ("reply", "code", "action"),
    [
        ("Action: sorted it\n```python\ndef f():\n    return 1\n```", "def f():\n    return 1", "sorted it"),
        (
            "**Action:** used a set\n```\nimport os\ndef f(): pass\n```\ntrailing",
            "import os\ndef f(): pass",
            "used a set",
        ),
        ("Here you go:\ndef f(x):\n    return x\n", "def f(x):\n    return x", "Here you go:"),
        ("```py\ndef g(): pass", "def g(): pass", "(no description given)"),
        ("no code at all", "", "no code at all"),
    ],
)
def test_engineer_replies_are_parsed_tolerantly(reply: str, code: str, action: str) -> None:
    got = parse_engineer(reply)
    assert got.code == code and got.action == action
    assert (got.problem == "") == ("Action" in reply and bool(code))


def test_a_replay_miss_stops_every_episode_with_a_clear_error(make_model, server) -> None:  # type: ignore[no-untyped-def]
    from tomlib.llm import ReplayMiss

    chat = make_model(mode="replay")
    with pytest.raises(ReplayMiss, match=r"coalition\.programming"):
        run_humaneval(chat, cp.table2_configs(), tasks=2)
    assert server.requests == []  # replay never reaches the network


def test_ftm_free_of_the_selection_effect_and_against_epsilon(make_model, server, isolated) -> None:  # type: ignore[no-untyped-def]
    server.responder = responder
    chat = make_model(json_mode="json_object")
    runs = run_humaneval(chat, cp.table2_configs())
    t2 = cp.table2(runs)
    validate_results(t2)
    cell = t2[(t2["matching"] == "matching") & (t2["tom_order"] == "2")].set_index(["metric", "round"])["value"]
    # round 1's coalition {Engineer1, Engineer2} is chosen from round 1's scores, so the team's measure counts
    # them all as trusted; on round 2's scores (Engineer2 drifted) the same team is half trusted; over all four (§6.2)
    # half are
    assert cell[("ftm_team", "1")] == 100.0 and cell[("ftm_next", "1")] == 50.0 and cell[("ftm", "1")] == 50.0
    assert "5" not in {r for m, r in cell.index if m == "ftm_next"}  # no round after the last
    curve = cp.ftm_vs_epsilon([runs])
    r = curve[(curve["matching"] == "no_matching") & (curve["pm_tom"] == 1)].set_index("epsilon")
    # round 1 trusts s ≥ 1 - 2ε: at ε = 0.5 three of four (0.9, 0.6, 0.2), at 0.05 one (0.9); later rounds too
    assert r.loc[0.5, "ftm"] > r.loc[0.25, "ftm"] > r.loc[0.05, "ftm"]
    assert (curve["ftm"] >= 0).all() and set(curve["epsilon"]) == set(cp.EPSILONS)
    assert cp.plot_ftm_epsilon(curve, "humaneval") is not None
    assert cp.plot_fig2(t2, "humaneval", metric="ftm_team") is not None


@pytest.mark.parametrize("pm_history", ["full", "last"])
def test_the_pm_sees_the_history_and_the_engineers_beliefs_its_draft_names(make_model, server, pm_history: str) -> None:  # type: ignore[no-untyped-def]
    ep = play(make_model, server, TeamConfig(pm_tom=2, eng_tom=1, pm_history=pm_history))  # type: ignore[arg-type]
    pm = [
        r["messages"][-1]["content"]
        for r in server.requests
        if "project manager of a team" in r["messages"][0]["content"]
    ]
    assert len(pm) == 5 and "first round" in pm[0]
    fifth = pm[4]
    # ICLR Alg. 1 line 4 conditions on a^{1:R-1}; NeurIPS eq. 1 on the last actions a_{-i}
    assert ("(round 1)" in fifth) == (pm_history == "full") and "Last round (round 4)" in fifth
    # both drafts condition on the others' beliefs b^{k-1}_{-i}: the engineers' "Belief:" lines reach the PM
    assert "Engineer1's stated belief: they compare pairs" in fifth
    assert ep.config.label == ("pm2-eng1-no_matching" if pm_history == "full" else "pm2-eng1-no_matching-last")
    with pytest.raises(ValueError, match="pm_history"):
        TeamConfig(pm_history="all")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="pm_history must be one of full, last"):
        cp.check_parameters("local", llm_mode="replay", humaneval_tasks=1, mbpp_tasks=1, seeds=1, pm_history="al")


def test_abilities_pull_an_able_engineer_into_the_pms_coalition(make_model, server) -> None:  # type: ignore[no-untyped-def]
    # without abilities the PM's coalition is its two best-aligned engineers (0.9, 0.6); §5.2 with λ = 1 and a high α
    # for Engineer4 (scored 0.2, φ = 0.4) makes it the PM's partner instead of Engineer2 (φ = 0.2)
    able = TeamConfig(pm_tom=1, matching=True, rounds=1, abilities=(0.0, 0.0, 0.0, 0.5))
    assert able.label == "pm1-eng0-matching-alpha0,0,0,0.5"
    assert play(make_model, server, able).rounds[0].team == ["Engineer1", "Engineer4"]
    plain = TeamConfig(pm_tom=1, matching=True, rounds=1)
    assert play(make_model, server, plain).rounds[0].team == ["Engineer1", "Engineer2"]
    with pytest.raises(ValueError, match="one finite α per engineer"):
        TeamConfig(abilities=(1.0,))


def test_cosine_alignment_scores_without_the_pms_self_evaluation(make_model, server, isolated) -> None:  # type: ignore[no-untyped-def]
    cfg = TeamConfig(pm_tom=1, alignment="cosine")
    server.responder = lambda req: responder(req).replace("they will compare pairs", "they compared pairs")
    ep = asyncio.run(run_episode(make_model(json_mode="json_object"), humaneval()[0], cfg))
    assert cfg.label == "pm1-eng0-no_matching-cosine"
    assert len(server.requests) == 5 * 5  # the instruction and four engineers: no evaluation call
    r1 = ep.rounds[0]
    # the belief "they compared pairs" against "compared every pair" (one shared word of a bag) and "thought about it"
    assert 0 < r1.scores["Engineer1"] < 1 and r1.scores["Engineer4"] == 0.0
    assert cp.estimate("local", [cfg], 1, 1).calls == 25
    with pytest.raises(ValueError, match="alignment must be one of"):
        TeamConfig(alignment="cos")

    # the same beliefs and actions, both measures, from a self-evaluated run (no new calls)
    server.requests.clear()
    runs = run_humaneval(make_model(json_mode="json_object"), [TeamConfig(pm_tom=1)])
    calls = len(server.requests)
    f = cp.ftm_by_alignment([runs])
    assert len(server.requests) == calls and list(f["round"]) == [1, 2, 3, 4, 5]
    assert f.loc[0, "ftm (self-evaluation)"] == 50.0  # 0.9 and 0.6 trusted
    assert f.loc[0, "ftm (cosine, tfidf)"] == 0.0  # "they will compare pairs" shares no word with any action
    assert -1 <= f.loc[0, "score correlation"] <= 1
