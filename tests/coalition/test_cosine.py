"""Appendix A's cosine alignment: known vectors, trajectories of (state, action) pairs, and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from tomlib.coalition import cosine_alignment

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


@pytest.mark.parametrize("embedding", ["tfidf", "hashing"])
def test_cosine_is_one_for_the_same_trajectory_and_zero_for_disjoint_ones(embedding: str) -> None:
    got = cosine_alignment(
        ["compare every pair", "write a parser", ""],
        ["Compare every PAIR!", "sorted the list", "anything"],
        embedding=embedding,  # type: ignore[arg-type]
    )
    assert got[0] == pytest.approx(1.0) and got[1] == 0.0 and got[2] == 0.0  # empty: no direction, scores 0


def test_state_action_pairs_are_the_tokens_of_a_trajectory() -> None:
    believed = [[((0, 0), "up"), ((0, 1), "right")]]
    actual = [[((0, 0), "up"), ((0, 1), "up")]]
    # one shared (state, action) pair of two, counts as unit vectors: cos = 1/2
    assert cosine_alignment(believed, actual, embedding="hashing")[0] == pytest.approx(0.5)
    tf = cosine_alignment(believed, actual)[0]
    assert 0 < tf < 1


def test_partial_overlap_orders_the_engineers() -> None:
    belief = "they will loop over every pair of numbers and compare the distance"
    actions = ["looped over every pair of numbers", "compared the distance", "returned a constant"]
    got = cosine_alignment([belief] * 3, actions)
    assert got[0] > got[1] > got[2] == 0.0 and np.all((got >= 0) & (got <= 1))


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match="one belief per actual"):
        cosine_alignment(["a"], ["b", "c"])
    with pytest.raises(ValueError, match="embedding must be one of tfidf, hashing"):
        cosine_alignment(["a"], ["b"], embedding="bert")  # type: ignore[arg-type]
