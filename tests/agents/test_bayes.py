"""The Bayesian ToM agent (notebook 15's default): its posterior follows Bayes' rule on the partner's actions, and it
best-responds to the partner it believes in."""

from __future__ import annotations

import asyncio
import math

import pytest

from tomlib.agents import FormalToMAgent, play_episode
from tomlib.agents.bayes import BayesToMAgent
from tomlib.envs import load_game
from tomlib.tom import action_distribution

pytestmark = pytest.mark.tier("fast")


def play(spec: str, agent: BayesToMAgent, partner_order: int, episode: int = 0) -> float:
    game = load_game(spec)
    return asyncio.run(play_episode(game, [agent, FormalToMAgent(partner_order)], seed=42, episode=episode)).score


def test_it_learns_a_tom1_partner_and_cannot_tell_tom0_from_tom2_where_they_choose_alike() -> None:
    """Memory-1: a ToM-1 partner keeps its first choice while ToM-0 and ToM-2 would switch, so one round tells it;
    ToM-0 and ToM-2 choose alike at every step, so their posteriors stay equal."""
    agent = BayesToMAgent(epsilon=0.1)
    assert play("matrix(memory=1)", agent, 1) == 70  # the first round is lost, then it coordinates
    assert max(range(3), key=lambda k: agent.posterior[k]) == 1 and agent.posterior[1] > 0.99
    agent = BayesToMAgent(epsilon=0.1)
    assert play("matrix(memory=1)", agent, 2) == 75
    assert math.isclose(agent.posterior[0], agent.posterior[2]) and agent.posterior[1] < 0.05


def test_the_update_is_bayes_rule_under_epsilon_noise() -> None:
    """One step by hand: P(k | a) ∝ P(k) ((1 - ε) p_k(a) + ε / |legal|)."""
    game = load_game("matrix(memory=1)")
    agent = BayesToMAgent(epsilon=0.2, prior=(0.5, 0.3, 0.2))
    import random

    agent.start_episode(game, 0, random.Random(0))
    state = game.reset(42)
    asyncio.run(agent.act(state))
    nxt = game.step(state, ("A", "A"))
    agent.observe(state, ("A", "A"), nxt)
    laws = [action_distribution(game, state, 1, k) for k in range(3)]
    raw = [p * (0.8 * law.get("A", 0.0) + 0.2 / 2) for p, law in zip((0.5, 0.3, 0.2), laws, strict=True)]
    assert agent.posterior == pytest.approx([r / sum(raw) for r in raw])


def test_it_starts_afresh_each_episode_unless_told_to_carry() -> None:
    agent = BayesToMAgent()
    play("matrix(memory=1)", agent, 1)
    play("matrix(memory=1)", agent, 1, episode=1)
    fresh = BayesToMAgent()
    play("matrix(memory=1)", fresh, 1, episode=1)
    assert agent.posterior == pytest.approx(fresh.posterior)
    carrying = BayesToMAgent(carry=True)
    play("matrix(memory=1)", carrying, 1)
    first = carrying.posterior
    play("matrix(memory=1)", carrying, 1, episode=1)
    assert carrying.posterior[1] >= first[1]


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"epsilon": 0}, "epsilon is a probability"),
        ({"orders": (0, 3)}, "orders must be a non-empty subset"),
        ({"prior": (1, 1)}, "prior needs one non-negative weight per order"),
    ],
)
def test_bad_arguments_say_what_is_wrong(kwargs: dict[str, object], says: str) -> None:
    with pytest.raises(ValueError, match=says):
        BayesToMAgent(**kwargs)  # type: ignore[arg-type]


def test_it_plays_every_task_with_each_partner() -> None:
    """The grids and the kitchen too (exact joint values): an aligned score with each fixed order in Game 1."""
    for k in range(3):
        assert play("grid(layout=game1)", BayesToMAgent(), k) < 30  # reaches both goals before the step limit
