"""A-ToM (Algorithms 1 and 2) with formal experts, and the episode runner's logging."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

from tomlib.agents import AdaptiveToMAgent, FormalToMAgent, play_episode
from tomlib.envs import load_game, rng_for
from tomlib.trace import RunLog, load_runs, payload_frame


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
    asyncio.run(
        play_episode(
            load_game("matrix(memory=1)"),
            [AdaptiveToMAgent("hedge"), FormalToMAgent(1)],
            seed=1,
            episode=3,
            condition="m1:A vs 1",
            log=log,
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
