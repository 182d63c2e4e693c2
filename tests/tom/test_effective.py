"""The effective ToM order: the ε-noise likelihood, its posterior, and formal ToM-k players recovering their order."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from tomlib.agents import Decision, FormalToMAgent, play_episode
from tomlib.envs import IllegalAction, MatrixState, RepeatedMatrixGame, load_game
from tomlib.experiments.adaptive_tom import TASKS
from tomlib.tom import (
    EPSILON,
    EpisodeOrders,
    effective_order,
    episode_orders,
    order_choices,
    replay_states,
    step_matches,
)

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def _episodes(spec: str, order: int, partner: int, n: int, seed: int = 7) -> tuple[Any, list[list[tuple[str, str]]]]:
    game = load_game(spec)
    runs = [
        asyncio.run(play_episode(game, [FormalToMAgent(order), FormalToMAgent(partner)], seed=seed, episode=e))
        for e in range(n)
    ]
    return game, [r.actions for r in runs]


@pytest.mark.parametrize("order", [0, 1, 2])
def test_formal_players_recover_their_order_where_the_orders_disagree(order: int) -> None:
    """Grid game2 against a ToM-1 partner: every order's choices differ at some step, and the exact ToM-k player's
    pooled posterior puts its mass on k."""
    game, joints = _episodes("grid(layout=game2)", order, 1, 6)
    found = effective_order([episode_orders(game, 7, j, 0) for j in joints])
    assert found.distinguishable and found.informative > 0
    assert found.map_order == order, found.statement
    assert found.posterior[order] > 0.99
    assert found.decided >= 1 and found.agree >= 1


def test_tom1_is_told_from_the_others_in_memory_1_and_its_lead_is_positive() -> None:
    game, joints = _episodes("matrix(memory=1)", 1, 0, 4)
    eps = [episode_orders(game, 7, j, 0) for j in joints]
    assert effective_order(eps).map_order == 1
    assert all(e.lead(1) > 0 for e in eps)
    assert all(e.matches[1] == e.steps for e in eps)  # an exact player's every action is in its order's choices


def test_tom0_and_tom2_tie_in_the_two_action_game_and_no_order_is_named() -> None:
    """2 actions: ToM-2 plays against the partner's last choice as ToM-0 does, so no log tells them apart."""
    game, joints = _episodes("matrix(memory=1)", 2, 2, 3)
    found = effective_order([episode_orders(game, 7, j, 0) for j in joints])
    assert found.distinguishable and found.map_order is None
    assert math.isclose(found.posterior[0], found.posterior[2])
    assert "ToM-0 and ToM-2 cannot be told apart" in found.statement
    assert found.to_row()["order"] == ""


class _AgreedStart(RepeatedMatrixGame):
    """Memory-1 starting where the players' last choices differ: every order then plays its own last choice."""

    def reset(self, seed: int | None = None) -> MatrixState:
        return MatrixState(round=1, last=("A", "B"), counts=((1, 0), (0, 1)), points=5, history=(("A", "B"),))


def test_a_state_where_all_orders_agree_is_not_informative() -> None:
    game = _AgreedStart(memory="1")
    state = game.reset()
    choices = order_choices(game, state, 0)
    assert choices == {0: {"A": 1.0}, 1: {"A": 1.0}, 2: {"A": 1.0}}
    ep = episode_orders(game, 0, [("A", "B"), ("A", "B")], 0)
    assert ep.informative == 0 and ep.steps == 2 and ep.map_order is None
    assert ep.loglik[0] == ep.loglik[1] == ep.loglik[2]
    found = effective_order([ep])
    assert not found.distinguishable and found.map_order is None
    assert found.statement.startswith("the orders cannot be told apart here")
    assert step_matches(game, 0, [("A", "B")], 1) == [((0, 1, 2), False)]


def test_the_noise_model_by_hand() -> None:
    """Memory-1, start (both last chose A), seat 0: ToM-0 plays B, ToM-1 plays A, ToM-2 plays B.
    P(a | k) = (1 - ε)·p_k(a) + ε/|legal|."""
    game = load_game("matrix(memory=1)")
    ep = episode_orders(game, 0, [("A", "B")], 0, epsilon=0.1)
    assert ep.loglik == pytest.approx((math.log(0.05), math.log(0.95), math.log(0.05)))
    assert ep.matches == (0, 1, 0) and ep.informative == 1
    assert ep.lead(1) == pytest.approx(math.log(0.95) - math.log(0.05))
    # 3 actions: ToM-0 draws B or C evenly, so B has (1 - ε)/2 + ε/3
    three = load_game("matrix(memory=1,actions=3)")
    got = episode_orders(three, 0, [("B", "A")], 0, epsilon=0.1)
    assert got.loglik[0] == pytest.approx(math.log(0.9 * 0.5 + 0.1 / 3))


def test_the_posterior_sums_to_one_and_follows_the_prior() -> None:
    game, joints = _episodes("grid(layout=game2)", 2, 1, 2)
    ep = episode_orders(game, 7, joints[0], 0)
    for prior in (None, (1, 1, 1), (0.2, 0.3, 0.5), {0: 1.0, 1: 0.0, 2: 3.0}):
        post = ep.posterior(prior)
        assert set(post) == {0, 1, 2} and math.isclose(sum(post.values()), 1.0)
    assert ep.posterior({0: 1.0, 1: 0.0, 2: 0.0})[0] == pytest.approx(1.0)
    pooled = effective_order([ep, ep], prior=(1, 2, 3))
    assert math.isclose(sum(pooled.posterior.values()), 1.0)
    with pytest.raises(ValueError, match="prior gives each of the orders"):
        ep.posterior((1, -1, 1))
    with pytest.raises(ValueError, match="in \\(0, 1\\]"):
        episode_orders(game, 7, joints[0], 0, epsilon=0)
    with pytest.raises(ValueError, match="player is a seat"):
        episode_orders(game, 7, joints[0], 2)
    with pytest.raises(ValueError, match="at least one episode"):
        effective_order([])


class _Seeing(FormalToMAgent):
    """A ToM-k player that notes the picture of every state it acts in."""

    seen: list[str]

    async def act(self, state: Any) -> Decision:
        self.seen.append(self.game.render(state))
        return await super().act(state)


@pytest.mark.parametrize("task", ["memory_n", "game1", "game2"])
def test_replay_states_are_the_states_play_episode_went_through(task: str) -> None:
    game = load_game(TASKS[task])
    agent = _Seeing(1)
    agent.seen = []
    result = asyncio.run(play_episode(game, [agent, FormalToMAgent(0)], seed=3, episode=1))
    assert [game.render(s) for s in replay_states(game, 3, result.actions)] == agent.seen
    assert len(agent.seen) == result.steps > 0


def test_an_action_the_game_does_not_allow_names_the_step() -> None:
    game = load_game("matrix(memory=1)")
    with pytest.raises(IllegalAction, match="step 2 of the episode cannot be replayed"):
        replay_states(game, 0, [("A", "B"), ("A", "Z")])


def test_an_episode_without_steps_has_no_order_and_no_lead() -> None:
    ep = EpisodeOrders((0.0, 0.0, 0.0), 0, 0, (0, 0, 0))
    assert ep.map_order is None and math.isnan(ep.lead(0))
    assert EPSILON == 0.1


def test_an_order_that_chooses_alike_is_no_rival_in_the_lead() -> None:
    """Memory-1: a ToM-0 player's every move is also ToM-2's, so ToM-2 is no rival; ToM-1, which chooses otherwise at
    every step, is: a faithful ToM-0 (or ToM-2) leads, where comparing with ToM-2 too would give 0 at best."""
    game = load_game("matrix(memory=1)")
    result = asyncio.run(play_episode(game, [FormalToMAgent(0), FormalToMAgent(0)], seed=42, episode=0))
    ep = episode_orders(game, 42, result.actions, 0)
    assert ep.loglik[0] == pytest.approx(ep.loglik[2]) and ep.lead(0) > 0 and ep.lead(2) > 0 and ep.lead(1) < 0
