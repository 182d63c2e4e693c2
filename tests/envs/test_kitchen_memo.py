"""The kitchen's next states kept per (state, joint action) are what the library's transition gives, at any step."""

from __future__ import annotations

import random

from tomlib.envs import load_game
from tomlib.envs.overcooked import ACTION_NAMES, lib_key


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
    assert len(g.__dict__["_next"]) > 0


def test_a_state_met_again_later_gets_its_next_state_at_the_later_step() -> None:
    g = load_game("overcooked")
    s = g.reset()
    for _ in range(3):  # the same kitchen at steps 0, 1, 2: the second and third stays come from the memo
        nxt, fresh = g.step(s, ("stay", "stay")), g.transition(s, ("stay", "stay"))[0]
        assert nxt.lib == fresh.lib and nxt.lib.timestep == fresh.lib.timestep == s.lib.timestep + 1 == nxt.t
        assert lib_key(nxt.lib) == lib_key(s.lib)
        s = nxt
    assert len(g.__dict__["_next"]) == 1
    moved = g.step(s, ("left", "right"))
    assert moved.lib == g.transition(s, ("left", "right"))[0].lib and moved.t == 4
