"""The DyLAN-style team against the fake server: consensus early stop, the ranker, importance propagation."""

from __future__ import annotations

import asyncio
import re

import pytest

from tomlib.datasets import ChoiceQuestion
from tomlib.reasoning import MMLU_ROLES, normalised, parse_ratings, run_dylan

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

Q = ChoiceQuestion(
    "t/1", "mmlu", "abstract_algebra", "2 + 2 = ?", (("A", "3"), ("B", "4"), ("C", "5"), ("D", "6")), "B"
)


def role(request: dict) -> str:  # type: ignore[type-arg]
    return re.search(r"You are a (\w+)\.", request["messages"][0]["content"]).group(1)  # type: ignore[union-attr]


def test_consensus_stops_the_first_step_and_credits_the_agreeing_agents(make_model, server) -> None:  # type: ignore[no-untyped-def]
    server.responder = lambda request: "Four.\nAnswer: B"
    res = asyncio.run(run_dylan(make_model(), Q))
    assert res.stopped_early and res.answer == "B" and res.correct
    assert len(server.requests) == 5  # more than 2/3 of 7 agents agree after the fifth answer
    imp = res.importance("per-task")
    assert sorted(imp.values()) == pytest.approx([0, 0, 0.2, 0.2, 0.2, 0.2, 0.2])
    # DyLAN's scale: only step 0 of the three ran, so the roles' importance sums to 1/3
    assert sorted(res.importance().values()) == pytest.approx([0, 0, *[0.2 / 3] * 5])


def split(request: dict) -> str:  # type: ignore[type-arg]
    """No consensus: three roles say B, two say A, two say C, always; everyone rates solution 1 highest."""
    user = request["messages"][-1]["content"]
    if "Choose the best 2 solutions" in user:
        return "[2, 3]"
    letter = {"Economist": "B", "Doctor": "B", "Lawyer": "B", "Mathematician": "A", "Psychologist": "A"}.get(
        role(request), "C"
    )
    n = len(re.findall(r"Solution \d+:", user))
    ratings = f"\n[[{', '.join(['5'] + ['1'] * (n - 1))}]]" if n else ""
    return f"My view.{ratings}\nAnswer: {letter}"


def test_three_steps_the_ranker_and_conserved_importance(make_model, server) -> None:  # type: ignore[no-untyped-def]
    server.responder = split
    res = asyncio.run(run_dylan(make_model(), Q, seed=3))
    assert not res.stopped_early
    steps = [sum(1 for n in res.nodes if n.step == s) for s in range(3)]
    assert steps == [7, 7, 2] and len(server.requests) == 7 + 7 + 1 + 2
    assert len(res.ranked) == 2 and {n.agent for n in res.nodes if n.step == 2} == set(res.ranked)
    # importance is conserved from step to step (each rater's weights sum to 1)
    for s in range(3):
        assert sum(n.importance for n in res.nodes if n.step == s) == pytest.approx(1.0 if res.answer else 0.0)
    assert sum(res.importance().values()) == pytest.approx(1.0)
    assert set(res.importance()) == set(MMLU_ROLES)


def test_ratings_parse_and_normalise() -> None:
    assert parse_ratings("a [[1, 2]] then [[5, 5, 0]]", 3) == [5, 5, 0]
    assert parse_ratings("[[1, 2]]", 3) is None and parse_ratings("none", 2) is None
    assert normalised([5, 5, 0], 3) == [0.5, 0.5, 0.0]
    assert normalised(None, 4) == [0.25] * 4 and normalised([0, 0], 2) == [0.5, 0.5]
    assert normalised([9, 5], 2) == [0.5, 0.5]  # above 5 counts as 5
