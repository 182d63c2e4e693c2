"""Formal ToM-k (eq. 3-9): the recursion, tie-breaking, and the Memory-1 column of Table 1."""

from __future__ import annotations

import random

import pytest

from tomlib.envs import load_game, rng_for
from tomlib.tom import best_responses, tom_action, tom_reasoning

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def play(spec: str, k0: int, k1: int, episode: int = 0) -> float:
    g = load_game(spec)
    s = g.reset()
    r0, r1 = rng_for(42, "p0", episode), rng_for(42, "p1", episode)
    while not g.is_terminal(s):
        s = g.step(s, (tom_action(g, s, 0, k0, r0), tom_action(g, s, 1, k1, r1)))
    return g.score(s)


@pytest.mark.parametrize("k0", [0, 1, 2])
@pytest.mark.parametrize("k1", [0, 1, 2])
def test_memory1_aligned_pairs_score_75_and_misaligned_0(k0: int, k1: int) -> None:
    """adaptive-tom-aaai2026.txt Table 1, Memory-1 column: 75 iff |k0 - k1| = 1, else 0."""
    expected = 75.0 if abs(k0 - k1) == 1 else 0.0
    assert [play("matrix(memory=1)", k0, k1, ep) for ep in range(3)] == [expected] * 3


def test_recursion_alternates_seats_and_passes_beliefs_up() -> None:
    g = load_game("matrix(memory=1)")
    s = g.reset()  # both previously chose A
    chain = tom_reasoning(g, s, 0, 2, random.Random(0))
    assert [(lv.order, lv.player) for lv in chain] == [(0, 0), (1, 1), (2, 0)]
    # ToM-0 (seat 1) assumes its partner repeats A -> plays B; ToM-1 (seat 2) predicts B -> plays A;
    # ToM-2 (seat 1) predicts A -> plays B.
    assert [(lv.belief, lv.action) for lv in chain] == [("A", "B"), ("B", "A"), ("A", "B")]


def test_best_responses_lists_every_maximizer_and_ties_use_the_agents_stream() -> None:
    g = load_game("matrix(memory=1,actions=3)")
    s = g.reset()
    assert best_responses(g, s, 0, "A") == ("B", "C")
    picks = {tom_action(g, s, 0, 0, random.Random(seed)) for seed in range(20)}
    assert picks == {"B", "C"}
    assert tom_action(g, s, 0, 1, random.Random(3)) == tom_action(g, s, 0, 1, random.Random(3))


def test_grid_tom1_waits_for_a_tom0_partner_at_the_crossing() -> None:
    g = load_game("grid(layout=game1)")
    s = g.step(g.step(g.reset(), ("right", "down")), ("right", "down"))
    rng = random.Random(0)
    assert tom_action(g, s, 0, 0, rng) == "right"  # ToM-0 assumes the partner stays, so it goes
    assert tom_action(g, s, 1, 1, rng) == "stay"  # ToM-1 predicts that and lets it pass


def test_order_out_of_range_is_refused() -> None:
    g = load_game("matrix(memory=1)")
    with pytest.raises(ValueError, match="between 0 and"):
        tom_action(g, g.reset(), 0, 9, random.Random(0))


@pytest.mark.parametrize(
    "spec", ["overcooked(prefer=own-then-stay)", "grid(layout=game2)", "matrix(memory=n,actions=3)"]
)
def test_best_responses_kept_per_decision_key_are_a_fresh_computation(spec: str) -> None:
    from tomlib.tom import joint

    g, rng = load_game(spec), random.Random(0)
    for _ in range(3):  # the later episodes meet states the earlier ones left in the memo
        s = g.reset()
        while not g.is_terminal(s):
            for player in (0, 1):
                legal = g.legal_actions(s, player)
                for partner in g.legal_actions(s, 1 - player):
                    joints = [joint(player, a, partner) for a in legal]
                    keyed = [(g.joint_value(s, j), g.preference(s, j, player)) for j in joints]
                    want = tuple(a for a, k in zip(legal, keyed, strict=True) if k == max(keyed))
                    assert best_responses(g, s, player, partner) == want
            s = g.step(s, (rng.choice(g.legal_actions(s, 0)), rng.choice(g.legal_actions(s, 1))))
