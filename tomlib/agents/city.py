"""Teams for the city simulation (``tom-internal-beliefs-asp.txt`` §3): the non-LLM heuristic baseline and
the episode loop shared with the LLM BDI agents."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tomlib.envs.city import AGENTS, ROLE, Action, City, CityState


@dataclass
class HeuristicTeam:
    """Greedy resupply: each agent heads for the district whose level of its own resource is lowest (ties:
    nearer, then by name), tops it up to ``fill_to`` (at least ``unit``), and returns to the supply node when
    empty. A baseline of ours, not the paper's."""

    fill_to: int = 40
    unit: int = 10

    def act(self, city: City, state: CityState, agent: str) -> Action:
        resource, here, carry = ROLE[agent], state.position[agent], state.carry[agent]
        if carry == 0:
            return self._toward(city, here, city.params.supply_node)
        target = min(city.regular, key=lambda d: (state.levels[d][resource], city.distance(here, d), d))
        if here == target:
            need = max(self.unit, self.fill_to - state.levels[here][resource])
            return Action("SUPPLY_RESOURCE", min(carry, need))
        return self._toward(city, here, target)

    @staticmethod
    def _toward(city: City, here: str, goal: str) -> Action:
        if here == goal:
            return Action("NONE")
        step = min(city.adjacency[here], key=lambda n: (city.distance(n, goal), n))
        return Action("MOVE", step)


@dataclass
class CityRun:
    """One simulation: final state, final mean health, and what every agent did."""

    state: CityState
    mean_health: float
    actions: list[dict[str, Any]] = field(default_factory=list)


def run_heuristic(city: City | None = None, team: HeuristicTeam | None = None) -> CityRun:
    """Play the heuristic team through every round."""
    city = city or City()
    team = team or HeuristicTeam()
    state = city.reset()
    actions = []
    while not city.is_over(state):
        agent = city.current_agent(state)
        action = team.act(city, state, agent)
        actions.append({"round": state.round, "agent": agent, "action": str(action)})
        state = city.apply(state, agent, action)
    return CityRun(state=state, mean_health=city.final_health(state), actions=actions)


__all__ = ["AGENTS", "CityRun", "HeuristicTeam", "run_heuristic"]
