"""The kitchen's next states kept per (state, time step, joint action) are what the library's transition gives."""

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
