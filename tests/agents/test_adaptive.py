"""A-ToM (Algorithms 1 and 2) with formal experts, and the episode runner's logging."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import pytest

from tomlib.agents import AdaptiveToMAgent, FormalToMAgent, play_episode
from tomlib.envs import load_game, rng_for
from tomlib.trace import RunLog, load_runs, logging_to, payload_frame

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def score(spec: str, a, b, episode: int = 0) -> float:  # type: ignore[no-untyped-def]
    return asyncio.run(play_episode(load_game(spec), [a, b], seed=42, episode=episode)).score


def test_ftl_aligns_after_one_miss_with_tom1_and_fails_in_self_play() -> None:
    """Table 2, Memory-1, FTL: ToM-0/ToM-2 partners 75; a ToM-1 partner costs the first round (70); self-play 0."""
    spec = "matrix(memory=1)"
    assert score(spec, AdaptiveToMAgent("ftl"), FormalToMAgent(0)) == 75
    assert score(spec, AdaptiveToMAgent("ftl"), FormalToMAgent(1)) == 70
    assert score(spec, FormalToMAgent(1), AdaptiveToMAgent("ftl")) == 70
    assert score(spec, AdaptiveToMAgent("ftl"), FormalToMAgent(2)) == 75
    assert score(spec, AdaptiveToMAgent("ftl"), AdaptiveToMAgent("ftl")) == 0


def test_hedge_self_play_mostly_coordinates() -> None:
    scores = [score("matrix(memory=1)", AdaptiveToMAgent("hedge"), AdaptiveToMAgent("hedge"), ep) for ep in range(10)]
    assert sum(s > 0 for s in scores) >= 8


def test_hedge_weights_follow_algorithm_2() -> None:
    agent = AdaptiveToMAgent("hedge", eta=1.0)
    g = load_game("matrix(memory=1)")
    agent.start_episode(g, 0, rng_for(1, "x"))
    s = g.reset()
    decision = asyncio.run(agent.act(s))
    predictions = agent._pending
    assert predictions is not None and decision.action in ("A", "B")
    agent.observe(s, (decision.action, "A"), g.step(s, (decision.action, "A")))
    expected = [1.0 if p == "A" else math.exp(-1.0) for p in predictions]
    total = sum(expected)
    assert agent.probabilities() == [e / total for e in expected]


def test_episode_events_are_logged_with_expert_weights(isolated: Path) -> None:
    log = RunLog("t", run_id="ep")
    with logging_to(log):
        asyncio.run(
            play_episode(
                load_game("matrix(memory=1)"),
                [AdaptiveToMAgent("hedge"), FormalToMAgent(1)],
                seed=1,
                episode=3,
                condition="m1:A vs 1",
            )
        )
    log.close()
    ev = load_runs(run_ids=["ep"])
    kinds = ev["kind"].value_counts()
    assert kinds["action"] == 30 and kinds["expert_weights"] == 15 and kinds["score"] == 1
    w = payload_frame(ev, "expert_weights")
    assert set(w["agent"]) == {"player1"} and (w["episode"] == 3).all()
    assert list(w["step"]) == list(range(15))
    assert all(abs(sum(p) - 1) < 1e-9 for p in w["probabilities"])


def test_a_sink_that_drops_steps_gets_no_step_events_and_changes_no_play() -> None:
    """A log's episodes past its detail episodes keep no steps: the agents then build no step payloads at all, and
    they play the same actions, with the same weights, as when every step is written."""
    from tomlib.agents import EpisodeResult
    from tomlib.trace import STEP_KINDS

    def played(keeps: bool) -> tuple[EpisodeResult, list[str]]:
        kinds: list[str] = []
        game = load_game("overcooked")
        agents = [AdaptiveToMAgent("hedge"), FormalToMAgent(1)]

        def sink(kind: str, payload: dict) -> None:
            kinds.append(kind)

        sink.keeps_steps = keeps  # type: ignore[attr-defined]
        for p, agent in enumerate(agents):
            agent.start_episode(game, p, rng_for(7, "c", 0, p), sink)
        state = game.reset(7)
        actions = []
        while not game.is_terminal(state):
            joint = tuple([(asyncio.run(a.act(state))).action for a in agents])
            nxt = game.step(state, joint)
            for a in agents:
                a.observe(state, joint, nxt)
            actions.append(joint)
            state = nxt
        return EpisodeResult(game.score(state), len(actions), actions, {"w": ((), agents[0].trajectory)}), kinds

    quiet, dropped = played(False)
    loud, kept = played(True)
    assert quiet == loud
    assert not set(dropped) & STEP_KINDS
    assert {"expert_weights", "prediction", "alignment"} <= set(kept)


def test_an_experts_tie_law_is_the_law_of_its_drawn_prediction() -> None:
    """``action_distribution`` is what ``tom_reasoning`` draws under independent ties, level by level."""
    import random
    from collections import Counter

    from tomlib.tom import action_distribution, tom_reasoning

    game = load_game("overcooked")  # in most kitchen steps several moves are equally good
    state, walk = game.reset(0), random.Random(3)
    while min(len(action_distribution(game, state, 1, k)) for k in (0, 1, 2)) < 2:
        state = game.step(state, (walk.choice(game.legal_actions(state, 0)), walk.choice(game.legal_actions(state, 1))))
    for order in (0, 1, 2):
        law = action_distribution(game, state, 1, order)
        assert abs(sum(law.values()) - 1) < 1e-12 and len(law) > 1
        rng = random.Random(order)
        drawn = Counter(tom_reasoning(game, state, 1, order, rng)[-1].action for _ in range(2000))
        assert set(drawn) <= set(law)
        for action, p in law.items():  # 2000 draws: within 4 binomial SEs
            assert abs(drawn[action] / 2000 - p) <= 4 * math.sqrt(p * (1 - p) / 2000) + 1e-9, (order, action)


def test_experts_predict_flat_or_are_charged_their_expected_miss() -> None:
    import pytest

    from tomlib.agents.llm import LLMPredictor
    from tomlib.tom import action_distribution

    game = load_game("grid(layout=game1,prefer=none)")
    state = game.reset(0)
    for mode in ("flat", "expected"):
        agent = AdaptiveToMAgent("hedge", expert_prediction=mode)
        agent.start_episode(game, 0, rng_for(1, mode))
        decision = asyncio.run(agent.act(state))
        laws = [action_distribution(game, state, 1, k) for k in agent.orders]
        assert all(p in law for p, law in zip(agent._pending, laws, strict=True))  # type: ignore[arg-type]
        actual = next(iter(laws[2]))
        agent.observe(state, (decision.action, actual), game.step(state, (decision.action, actual)))
        if mode == "expected":  # charged the chance of a miss, not a 0/1 loss
            assert agent.losses == [1 - law.get(actual, 0.0) for law in laws]
        else:
            assert set(agent.losses) <= {0.0, 1.0}
    with pytest.raises(ValueError, match="only formal experts have"):
        AdaptiveToMAgent("ftl", expert_prediction="flat", predictor=LLMPredictor(None))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="expert_prediction must be one of draw, flat, expected"):
        AdaptiveToMAgent("ftl", expert_prediction="soft")
