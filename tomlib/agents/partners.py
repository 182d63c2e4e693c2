"""Non-LLM partners from other work (``adaptive-tom-aaai2026.txt`` §6.1).

- **Greedy**: overcooked-ai's planning agent (``GreedyHumanModel``): it picks the most obviously useful
  medium-level goal (fetch an onion, fetch a dish, serve) and walks there on the shortest path.
- **PBT** needs a population-based-training policy pretrained on the layout. None is available offline, so
  it cannot be built here; :func:`pbt_partner` raises with that reason and experiments report it. Its labelled
  stand-in, a PPO self-play population trained on our kitchen, is :class:`tomlib.agents.ppo.PPOPartner`.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from tomlib.agents._base import Agent, Decision, Emit, Site, no_emit
from tomlib.envs import Game


class PartnerUnavailable(RuntimeError):
    """A partner we cannot build here; the message says why."""


class GreedyAgent(Agent):
    """overcooked-ai's Greedy planning agent, on any game that exposes an overcooked-ai ``planner``."""

    name = "Greedy"
    immediate = True

    def start_episode(
        self, game: Game, player: int, rng: random.Random, emit: Emit = no_emit, site: Site | None = None
    ) -> None:
        super().start_episode(game, player, rng, emit, site)
        planner = getattr(game, "planner", None)
        if planner is None:
            raise PartnerUnavailable(f"the Greedy partner plays Overcooked only, not {game.info.name}")
        from tomlib.envs.overcooked import _lib

        _lib()
        from overcooked_ai_py.agents.agent import GreedyHumanModel

        self.model = GreedyHumanModel(planner)
        self.model.reset()  # (reset clears the seat, so set it afterwards)
        self.model.set_agent_index(player)

    async def act(self, state: Any) -> Decision:
        np.random.seed(self.rng.randrange(2**32))  # the library's unsticking draws from numpy's global stream
        lib_action, _ = self.model.action(state.lib)
        return Decision(self.game.action_name(lib_action), {"planner": "overcooked-ai GreedyHumanModel"})  # type: ignore[attr-defined]


def pbt_partner() -> Agent:
    """Always raises: no pretrained PBT population is available offline."""
    raise PartnerUnavailable(
        "PBT needs a population-based-training policy pretrained on this layout (Carroll et al. 2019), which is not "
        "available offline; a labelled stand-in, a PPO self-play population trained on our kitchen, plays its seat "
        "with pbt='ppo-selfplay'"
    )
