"""LLM ToM-k agents and LLM-backed A-ToM against the fake OpenAI server (real HTTP)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tomlib.agents import AdaptiveToMAgent, play_episode
from tomlib.agents.llm import LLMPredictor, LLMResponder, LLMToM, LLMToMAgent
from tomlib.envs import load_game
from tomlib.trace import RunLog, load_runs, logging_to, payload_frame

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def always(action: str):  # type: ignore[no-untyped-def]
    return lambda request: json.dumps({"thought": "keep it simple", "action": action})


def test_tom_k_asks_k_plus_one_times_per_step_with_distinct_sample_keys(make_model, server, isolated: Path) -> None:  # type: ignore[no-untyped-def]
    server.responder = always("B")
    chat = make_model(json_mode="json_object_schema")
    log = RunLog("adaptive_tom.test", run_id="llm")
    log.observe(chat)
    game = load_game("matrix(memory=1,rounds=3)")
    agents = [LLMToMAgent(2, LLMToM(chat)), LLMToMAgent(0, LLMToM(chat))]
    with logging_to(log):
        result = asyncio.run(play_episode(game, agents, seed=1, episode=0, condition="m1:ToM-2 vs ToM-0"))
    log.close()
    assert result.actions == [("B", "B")] * 3
    assert server.n_requests == 3 * (3 + 1)
    calls = payload_frame(load_runs(run_ids=["llm"]), "llm_call")
    keys = set(calls["sample_key"])
    assert len(keys) == 12
    assert "adaptive_tom.test/m1:ToM-2 vs ToM-0/ep0/t1/player1/order1@player2" in keys
    beliefs = payload_frame(load_runs(run_ids=["llm"]), "belief")
    top = beliefs[(beliefs["agent"] == "player1") & (beliefs["order"] == 2)]
    assert list(top["prediction"]) == ["B", "B", "B"]  # what its hypothetical ToM-1 partner played


def test_action_controller_reasks_then_falls_back_and_logs_it(make_model, server, isolated: Path) -> None:  # type: ignore[no-untyped-def]
    server.script('{"thought": "x", "action": "C"}', "I pick A", '{"thought": "ok", "action": "A"}')
    server.responder = lambda request: "no idea"
    chat = make_model(json_mode="json_object")
    log = RunLog("t", run_id="ctl")
    game = load_game("matrix(memory=1,rounds=2)")
    agents = [LLMToMAgent(0, LLMToM(chat, max_attempts=3)), LLMToMAgent(0, LLMToM(chat, max_attempts=2))]
    with logging_to(log):
        result = asyncio.run(play_episode(game, agents, seed=1, episode=0, condition="c"))
    log.close()
    assert all(a in ("A", "B") for joint in result.actions for a in joint)
    beliefs = payload_frame(load_runs(run_ids=["ctl"]), "belief")
    assert beliefs["controller_fallback"].notna().sum() >= 1
    assert "no valid ActionReply" in beliefs["controller_fallback"].dropna().iloc[0]


def test_llm_atom_asks_each_hypothetical_level_once_per_step(make_model, server, isolated: Path) -> None:  # type: ignore[no-untyped-def]
    server.responder = always("A")
    chat = make_model(json_mode="json_object_schema")
    llm = LLMToM(chat)
    atom = AdaptiveToMAgent("hedge", predictor=LLMPredictor(llm), responder=LLMResponder(llm))
    partner = LLMToMAgent(0, LLMToM(chat))
    asyncio.run(play_episode(load_game("matrix(memory=1,rounds=2)"), [atom, partner], seed=1, episode=0))
    # per step: partner L0, me L0, partner L1, me L1, partner L2 (5 hypothetical decisions) + the response,
    # plus the ToM-0 partner's own call
    assert server.n_requests == 2 * (6 + 1)


def test_prompts_carry_the_last_joint_actions_where_the_game_allows(make_model, server, isolated: Path) -> None:  # type: ignore[no-untyped-def]
    def users(history_steps: int, spec: str) -> list[str]:
        server.requests.clear()
        chat = make_model(json_mode="json_object_schema")
        llm = LLMToM(chat, history_steps=history_steps)
        agents = [LLMToMAgent(0, llm), LLMToMAgent(0, llm)]
        asyncio.run(play_episode(load_game(spec), agents, seed=1, episode=0, condition=f"{spec}:{history_steps}"))
        return [r["messages"][-1]["content"] for r in server.requests]

    server.responder = always("stay")
    grid = users(2, "grid(layout=game1,max_steps=4)")
    seat1 = [u for u in grid if "You are Player 1" in u]
    assert "last steps" not in seat1[0]  # nothing played yet
    assert "- step 2: you stay, partner stay\n- step 3: you stay, partner stay" in seat1[3]  # the last two of three
    assert "step 1:" not in seat1[3]
    assert not any("last steps" in u for u in users(0, "grid(layout=game1,max_steps=4)"))  # the option to leave it out
    server.responder = always("A")
    # the matrix game's memory is the setting itself: no history there, whatever the window
    assert not any("last steps" in u for u in users(5, "matrix(memory=1,rounds=3)"))
