"""The explorer's per-step order matches: which formal orders' choices each adaptive-ToM player's action held."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from tomlib.agents import Agent, Decision, play_episode
from tomlib.envs import NoExactModel, RepeatedMatrixGame, load_game, register_game
from tomlib.experiments import adaptive_tom as at
from tomlib.tom import step_matches
from tomlib.trace import RunLog, joint_actions, logging_to
from tomlib.widgets import Trace, explore, step_html
from tomlib.widgets._orders import matched_text

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def visible_text(html: str) -> str:
    return re.sub(r"<style>.*?</style>|<[^>]+>", " ", html, flags=re.S)


def test_each_step_shows_the_orders_each_players_action_matched(isolated: Path) -> None:
    run = asyncio.run(at.table1(tasks=["game2"], pairs=[("ToM-0", "ToM-1")], episodes=2, progress=False))
    trace = Trace.from_runs([run])
    ref = trace.refs(run.run_id, "game2:ToM-0 vs ToM-1")[0]
    game = load_game(trace.step(ref, 0).before["game"])
    joints = joint_actions(trace.episode_events(ref), ref.condition, ref.episode)
    truth = {seat: step_matches(game, 42, joints, p) for p, seat in enumerate(("player1", "player2"))}
    shown = set()
    for step in trace.steps(ref):
        view = trace.step(ref, step)
        html = visible_text(step_html(view))
        for agent in view.agents:
            want = truth[agent.agent][step]
            assert agent.matched_orders == list(want.orders) and agent.orders_disagree == want.disagree
            order = 0 if agent.agent == "player1" else 1
            assert order in agent.matched_orders  # an exact ToM-k player's action is among ToM-k's choices
            line = matched_text(want.orders, want.disagree)
            assert line.replace("·", "") in html.replace("·", "")
            shown.add(want.disagree)
    assert shown == {True, False}  # game2 has steps where the orders disagree and steps where they all agree
    assert "matched: ToM-0, ToM-1, ToM-2 · all orders agree" in matched_text((0, 1, 2), False)
    assert matched_text((), True) == "matched: no order's choice · orders disagree"


def test_the_static_page_fallback_carries_the_matches(isolated: Path) -> None:
    run = asyncio.run(at.table1(tasks=["memory_1"], pairs=[("ToM-1", "ToM-0")], episodes=1, progress=False))
    box = explore([run], prerender=1)
    fallback = visible_text(box.fallback_html())
    assert "matched: ToM-1 · orders disagree" in fallback  # ToM-1 at the start: A, where ToM-0 and ToM-2 play B


class _Fixed(Agent):
    immediate = True

    def __init__(self, action: str):
        self.action, self.name = action, f"always {action}"

    async def act(self, state: Any) -> Decision:
        return Decision(self.action)


class _Blind(RepeatedMatrixGame):
    """A matrix game declared without exact values."""

    has_exact_values = False

    def __init__(self, **params: Any):
        super().__init__(**params)
        self.info = dataclasses.replace(self.info, name="blind_matrix")


class _NoModel(RepeatedMatrixGame):
    """A matrix game whose ToM-0 assumption has no exact model."""

    def __init__(self, **params: Any):
        super().__init__(**params)
        self.info = dataclasses.replace(self.info, name="nomodel_matrix")

    def environment_actions(self, state: Any, player: int) -> tuple[str, ...]:
        raise NoExactModel("no exact model of this partner")


@pytest.mark.parametrize(
    ("name", "make", "experiment"),
    [
        ("blind_matrix", _Blind, "adaptive_tom.t"),
        ("nomodel_matrix", _NoModel, "adaptive_tom.t"),
        ("matrix", RepeatedMatrixGame, "coalition.t"),
    ],
)
def test_no_matches_without_exact_values_or_outside_adaptive_tom(
    isolated: Path, name: str, make: Any, experiment: str
) -> None:
    register_game(name, make)
    game = load_game(f"{name}(memory=1)")
    with RunLog(experiment, run_id="r") as log, logging_to(log):
        asyncio.run(play_episode(game, [_Fixed("A"), _Fixed("B")], seed=0, episode=0, condition="c"))
    trace = Trace.from_runs(["r"])
    ref = trace.refs("r", "c")[0]
    assert trace.order_matches(ref) is None
    view = trace.step(ref, 0)
    assert all(a.matched_orders is None for a in view.agents) and len(view.agents) == 2
    assert "matched:" not in step_html(view)
