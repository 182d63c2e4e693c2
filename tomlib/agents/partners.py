"""Non-LLM partners from other work (``adaptive-tom-aaai2026.txt`` §6.1).

- **Greedy**: overcooked-ai's planning agent (``GreedyHumanModel``): it picks the most obviously useful
  medium-level goal (fetch an onion, fetch a dish, serve) and walks there on the shortest path.
- **PBT** needs a population-based-training policy pretrained on the layout. None is available offline, so
  it cannot be built here; :func:`pbt_partner` raises with that reason and experiments report it. Its labelled
  stand-in, a PPO self-play population trained on our kitchen, is :class:`tomlib.agents.ppo.PPOPartner`.
"""

from __future__ import annotations

import random
import weakref
from functools import cache
from typing import Any, NamedTuple

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
        from tomlib.envs.overcooked import overcooked_lib

        overcooked_lib()
        self.model = _greedy_class()(_recalling(planner))
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


# -- Greedy's pure lookups, remembered ------------------------------------------------------------------------
# GreedyHumanModel asks the same questions of the same kitchen states over and over: which goals its greedy rule
# picks (``ml_action``: a function of the state), and, when both cooks stood still, where each of its moves would
# leave the cooks (six full library transitions, of which it reads the cooks' cells). The answers are kept per
# planner, so Greedy plays exactly as the library's model does, a few times faster.

_RECALL_LIMIT = 200_000  # answers kept per planner and kind before that memo starts over


class _Moved(NamedTuple):
    """What Greedy's unsticking reads of a next state: the cooks' cells."""

    player_positions: tuple[Any, ...]


class _RecallingMdp:
    """The planner's gridworld, with ``get_state_transition`` answered from memory (for Greedy's unsticking only)."""

    def __init__(self, mdp: Any) -> None:
        self._mdp = mdp
        self.moved: dict[Any, tuple[_Moved, None]] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._mdp, name)

    def get_state_transition(self, state: Any, joint_action: Any) -> tuple[_Moved, None]:
        from tomlib.envs.overcooked import lib_key

        key = (lib_key(state), joint_action)
        got = self.moved.get(key)
        if got is None:
            if len(self.moved) >= _RECALL_LIMIT:
                self.moved.clear()
            nxt, _ = self._mdp.get_state_transition(state, joint_action)
            got = self.moved[key] = (_Moved(nxt.player_positions), None)
        return got


class _RecallingPlanner:
    """The planner as Greedy sees it: its own gridworld is a :class:`_RecallingMdp`; the rest is the planner's."""

    def __init__(self, planner: Any) -> None:
        self._planner = planner
        self.mdp = _RecallingMdp(planner.mdp)
        self.goals: dict[Any, Any] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._planner, name)


_VIEWS: weakref.WeakKeyDictionary[Any, _RecallingPlanner] = weakref.WeakKeyDictionary()


def _recalling(planner: Any) -> _RecallingPlanner:
    view = _VIEWS.get(planner)
    if view is None:
        view = _VIEWS[planner] = _RecallingPlanner(planner)
    return view


@cache
def _greedy_class() -> type:
    """overcooked-ai's GreedyHumanModel whose ``ml_action`` (the goals its greedy rule picks in a state) is kept per
    seat and state in its planner view."""
    from overcooked_ai_py.agents.agent import GreedyHumanModel

    from tomlib.envs.overcooked import lib_key

    class RecallingGreedy(GreedyHumanModel):  # type: ignore[misc,valid-type]
        def ml_action(self, state: Any) -> Any:
            goals = self.mlam.goals
            key = (self.agent_index, lib_key(state))
            got = goals.get(key)
            if got is None:
                if len(goals) >= _RECALL_LIMIT:
                    goals.clear()
                got = goals[key] = tuple(super().ml_action(state))
            return got

    return RecallingGreedy
