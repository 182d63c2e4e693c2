"""Self-play kitchens for training the PPO stand-in (``scripts/train_ppo_partner.py``; see :mod:`tomlib.agents.ppo`).

``n`` copies of the one-soup task on tomlib's own Overcooked game (so training sees the dynamics the experiments
play: the pot cooks by itself at three onions, a partial pot does not start), each giving two cook slots: slot
``2g + p`` is cook ``p`` of game ``g``. Both cooks of a game get the team reward: 20 when the soup is delivered
(which ends the episode, as in the paper's task) plus ``shaping`` times overcooked-ai's own shaped rewards (3 per
onion into the pot, 3 per useful dish pickup, 5 per soup pickup), which the trainer anneals to 0. An episode cut
by the step limit is marked truncated, so the value function bootstraps from the last observation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tomlib.agents.ppo import action_names, features
from tomlib.envs.overcooked import OvercookedGame

DELIVERY_REWARD = 20.0


class SelfPlayKitchens:
    """``n`` one-soup kitchens as a batch of ``2n`` cook slots with a vectorised reset/step."""

    def __init__(self, n: int, layout: str = "overcooked_symmetric", horizon: int = 100, shaping: float = 1.0):
        if n < 1:
            raise ValueError("n must be at least 1")
        self.game = OvercookedGame(layout, horizon=horizon)
        self.n, self.shaping = n, float(shaping)
        self.names = action_names(self.game)
        self.states = [self.game.reset(0) for _ in range(n)]
        self.obs_dim = int(features(self.game, self.states[0]).shape[1])
        self.n_actions = len(self.names)
        self.finished: list[dict[str, float]] = []
        """One record per ended episode: ``time`` (the task's score), ``delivered`` and ``shaped`` (its shaping)."""
        self._shaped = np.zeros(n)

    def _obs(self) -> np.ndarray:
        return np.concatenate([features(self.game, s) for s in self.states])

    def reset(self) -> np.ndarray:
        self.states = [self.game.reset(0) for _ in range(self.n)]
        self._shaped[:] = 0
        return self._obs()

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Advance every game one step; an ended game restarts and its slots report the last observation."""
        rewards = np.zeros(2 * self.n, dtype=np.float32)
        dones = np.zeros(2 * self.n, dtype=bool)
        infos: list[dict[str, Any]] = [{} for _ in range(2 * self.n)]
        for g, state in enumerate(self.states):
            joint = (self.names[int(actions[2 * g])], self.names[int(actions[2 * g + 1])])
            nxt, info = self.game.transition(state, joint)
            shaped = float(sum(info["shaped_reward_by_agent"]))
            sparse = DELIVERY_REWARD if nxt.delivered else 0.0  # the delivery ends the episode: at most once
            self._shaped[g] += shaped
            rewards[2 * g] = rewards[2 * g + 1] = sparse + self.shaping * shaped
            if self.game.is_terminal(nxt):
                last = features(self.game, nxt)
                self.finished.append(
                    {
                        "time": self.game.score(nxt),
                        "delivered": float(nxt.delivered),
                        "shaped": float(self._shaped[g]),
                    }
                )
                for p in range(2):
                    dones[2 * g + p] = True
                    infos[2 * g + p] = {
                        "terminal_observation": last[p],
                        "TimeLimit.truncated": not nxt.delivered,
                        "time": self.game.score(nxt),
                    }
                self._shaped[g] = 0
                nxt = self.game.reset(0)
            self.states[g] = nxt
        return self._obs(), rewards, dones, infos
