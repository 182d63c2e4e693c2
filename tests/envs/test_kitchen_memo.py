"""The kitchen's next states kept per (state, joint action) are what the library's transition gives, at any step."""

from __future__ import annotations

import random

import pytest

from tomlib.envs import load_game
from tomlib.envs.overcooked import ACTION_NAMES, lib_key

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def test_kept_next_states_equal_fresh_transitions() -> None:
    g = load_game("overcooked")
    for episode in (0, 1, 0, 1):  # the repeats are answered from the memo
        rng, s = random.Random(episode), g.reset()
        while not g.is_terminal(s):
            j = (rng.choice(ACTION_NAMES), rng.choice(ACTION_NAMES))
            nxt, fresh = g.step(s, j), g.transition(s, j)[0]
            assert nxt == fresh and nxt.lib == fresh.lib and (nxt.t, nxt.delivered) == (fresh.t, fresh.delivered)
            assert lib_key(nxt.lib) == lib_key(fresh.lib) and g.compact(nxt) == g.compact(fresh)
            s = nxt
    assert len(g._kitchen.next_states) > 0


def test_a_state_met_again_later_gets_its_next_state_at_the_later_step() -> None:
    g = load_game("overcooked")
    g._kitchen.next_states.clear()  # the process's memo for this layout: other tests may have filled it
    s = g.reset()
    for _ in range(3):  # the same kitchen at steps 0, 1, 2: the second and third stays come from the memo
        nxt, fresh = g.step(s, ("stay", "stay")), g.transition(s, ("stay", "stay"))[0]
        assert nxt.lib == fresh.lib and nxt.lib.timestep == fresh.lib.timestep == s.lib.timestep + 1 == nxt.t
        assert lib_key(nxt.lib) == lib_key(s.lib)
        s = nxt
    assert len(g._kitchen.next_states) == 1
    moved = g.step(s, ("left", "right"))
    assert moved.lib == g.transition(s, ("left", "right"))[0].lib and moved.t == 4


def test_games_of_one_layout_share_the_planner_and_the_next_states_whatever_they_prefer() -> None:
    a, b = load_game("overcooked"), load_game("overcooked", prefer="own")
    assert a.prefer != b.prefer and a.planner is b.planner and a.mdp is b.mdp
    s = a.reset()
    a.step(s, ("left", "right"))
    memo = a._kitchen.next_states
    assert b._kitchen.next_states is memo and (lib_key(s.lib), "left", "right") in memo
    assert b.step(s, ("left", "right")).lib is not a.step(s, ("left", "right")).lib  # each step gets its own state
    assert load_game("overcooked", cook_time=5).planner is not a.planner  # another cook time is another kitchen


def test_each_game_sets_the_librarys_cook_time_again_as_making_its_gridworld_did() -> None:
    from overcooked_ai_py.mdp.overcooked_mdp import Recipe

    load_game("overcooked")
    load_game("overcooked", cook_time=10)
    assert Recipe.configuration["cook_time"] == 10
    load_game("overcooked")  # its kitchen is kept from the first, but the library's class is set again
    assert Recipe.configuration["cook_time"] == 20
