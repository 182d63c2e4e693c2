"""Greedy with its answers remembered plays exactly as overcooked-ai's own GreedyHumanModel."""

from __future__ import annotations

import asyncio
import random

import numpy as np
import pytest

from tomlib.agents.partners import GreedyAgent, _recalling
from tomlib.envs import load_game

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def _library_greedy(game, player):  # type: ignore[no-untyped-def]
    from overcooked_ai_py.agents.agent import GreedyHumanModel

    model = GreedyHumanModel(game.planner)
    model.reset()
    model.set_agent_index(player)
    return model


def test_remembering_greedy_chooses_what_the_library_model_chooses() -> None:
    game = load_game("overcooked")
    known = len(_recalling(game.planner).goals)  # the kitchen's planner is shared: earlier tests may have filled it
    stuck = steps = 0
    for episode in range(4):  # later episodes meet states the first ones put in memory
        ours = [GreedyAgent(), GreedyAgent()]
        theirs = [_library_greedy(game, p) for p in (0, 1)]
        streams = [random.Random(episode * 2 + p) for p in (0, 1)]
        mirror = [random.Random(episode * 2 + p) for p in (0, 1)]
        for p, agent in enumerate(ours):
            agent.start_episode(game, p, streams[p])
        state, previous = game.reset(), None
        while not game.is_terminal(state):
            joint = []
            for p in (0, 1):
                mine = asyncio.run(ours[p].act(state)).action
                np.random.seed(mirror[p].randrange(2**32))  # what GreedyAgent.act seeds numpy's stream with
                lib_action, _ = theirs[p].action(state.lib)
                assert mine == game.action_name(lib_action), (episode, state.t, p)
                joint.append(mine)
            if previous is not None and previous.lib.players_pos_and_or == state.lib.players_pos_and_or:
                stuck += 1  # both unstick: the remembered transitions are in play
            previous, state = state, game.step(state, tuple(joint))
            steps += 1
    view = _recalling(game.planner)
    assert stuck > 0 and view.mdp.moved and view.goals
    assert len(view.goals) - known < steps  # answers were reused
