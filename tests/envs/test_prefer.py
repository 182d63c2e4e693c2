"""What formal agents prefer among equally good joint moves (``prefer``, a named reading): nothing, their own progress,
or their own progress and then staying put; each game's default, and the kitchen's own progress held to its exact
model."""

from __future__ import annotations

import numpy as np
import pytest

from tomlib.envs import load_game
from tomlib.tom._formal import best_responses

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


@pytest.fixture(scope="module")
def kitchens() -> dict:
    return {p: load_game(f"overcooked(prefer={p})") for p in ("none", "own", "own-then-stay")}


def test_each_game_names_its_default_and_refuses_an_unknown_one() -> None:
    assert load_game("overcooked").prefer == "none"  # one shared soup: nothing of a cook's own to prefer
    assert load_game("grid(layout=game1)").prefer == "own"  # each player's own goal
    with pytest.raises(ValueError, match="prefer must be one of none, own, own-then-stay; got 'mine'"):
        load_game("grid(layout=game1,prefer=mine)")


def test_a_cook_alone_is_never_faster_than_the_two_together(kitchens: dict) -> None:
    from tomlib.envs._kitchen import UNREACHABLE

    game = kitchens["own"]
    _, index, together = game.exact
    start = index[game.compact(game.reset(0))]
    for alone in game._solo:
        finite = alone < UNREACHABLE
        assert (together[finite] <= alone[finite]).all()  # one cook with its partner still is one joint policy
        assert alone[start] > together[start]  # at the start two cooks are faster than one
    assert np.isin(game._solo[0], [UNREACHABLE]).any()  # a partner can block a cook's own way to the pot


def test_own_progress_picks_among_the_equally_good_moves_only(kitchens: dict) -> None:
    import random

    none, own, stay = kitchens["none"], kitchens["own"], kitchens["own-then-stay"]
    rng, state, narrowed = random.Random(7), none.reset(0), 0
    for _ in range(60):  # states of a random walk through the kitchen
        for partner in ("stay", "left", "interact"):
            tied = best_responses(none, state, 0, partner)
            mine = best_responses(own, state, 0, partner)
            assert set(mine) <= set(tied)  # the team's value first; own progress only breaks its ties
            keys = {a: own.preference(state, (a, partner), 0) for a in tied}
            assert all(keys[a] == max(keys.values()) for a in mine)
            narrowed += len(mine) < len(tied)
            waits = best_responses(stay, state, 0, partner)
            assert waits == (("stay",) if "stay" in mine else mine)  # staying put only among the equally own
        assert none.preference(state, ("stay", "stay"), 0) == ()
        state = none.step(state, (rng.choice(none.legal_actions(state, 0)), rng.choice(none.legal_actions(state, 1))))
        if none.is_terminal(state):
            state = none.reset(0)
    assert narrowed > 0


def test_in_the_grid_own_progress_is_the_distance_to_ones_own_goal() -> None:
    own, none = load_game("grid(layout=game1)"), load_game("grid(layout=game1,prefer=none)")
    state = own.reset(0)
    closer = {a: own.preference(state, (a, "stay"), 0) for a in own.legal_actions(state, 0)}
    assert len(set(closer.values())) > 1 and none.preference(state, ("stay", "stay"), 0) == ()
