"""The city resource-allocation simulation (``tom-internal-beliefs-asp.txt`` §3.1).

Four districts; d1 is the supply node. Three agents, one per resource (FOOD, MEDICINE, SECURITY), start in d1,
act in turn (FOOD, MEDICAL, SECURITY), and carry at most ``capacity`` units of their own resource, refilled in
d1. Actions: ``MOVE(d)`` to an adjacent district (``MOVE(2)`` as the paper writes it, or ``MOVE(d2)``),
``SUPPLY_RESOURCE(x)`` (x units of the agent's resource into its current district), ``NONE``. Between rounds the
world advances. The metric is the mean health of the non-supply districts at the end.

How the world advances is a named rule set, :attr:`CityParams.dynamics`:

- ``"authors"`` (the default): what the authors' public code does, which produced the paper's Fig. 5. Every
  non-supply district first consumes ``consumption`` of each resource, then loses health on the level left, with
  5 at ``<= 20`` and 10 below 10; agents standing in the supply node are refilled at that moment. The world
  advances after rounds 1 to 6 of 7 only (their loop updates before turns 3, 6, ..., 18 of 21), so the actions of
  the last round never count.
- ``"paper"``: the paper's equations (§3.1). Health is charged on the level before consumption (5 below 20, 10
  below 10), then the district consumes; the world advances after every round; an agent is refilled on
  arriving in the supply node.

Every rule is a parameter of :class:`CityParams`; :data:`PROVENANCE` says which default comes from the paper,
which from the authors' public code (facts only, adopted where the paper is silent), and which is ours.

The authors' rule set is held to ``data/tom_ib_authors/trajectories.json``: scripts played in their ``game.py`` on their
``main.py`` schedule, which ``tests/envs/test_city.py`` replays (any change to :meth:`City.apply` must keep them green).
Make it again with ``python data/tom_ib_authors/make_trajectories.py PATH`` from a checkout of their repository (from a
bare mirror, ``git worktree add`` or ``git show HEAD:game.py`` gives the two files). The optima in ``data/asp_optima/``
are keyed by every :class:`CityParams` field, so a new field means solving both rule sets again (the authors' takes
about 90 s with unit 1)."""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

RESOURCES = ("FOOD", "MEDICINE", "SECURITY")
AGENTS = ("FOOD_AGENT", "MEDICAL_AGENT", "SECURITY_AGENT")
ROLE = dict(zip(AGENTS, RESOURCES, strict=True))

PROVENANCE: dict[str, str] = {
    "districts": "paper (§3.1: four districts d1-d4)",
    "supply_node": "paper (§3.1: d1 is the supply node)",
    "edges": "paper (§3.1: d1-d2, d1-d3, d2-d4, d3-d4)",
    "extra_edges": "authors' code (d2-d3 also linked)",
    "consumption": "paper (§3.1: C = 10 per resource per turn)",
    "start_health": "paper (§3.1: health starts at 100)",
    "dynamics": "authors' code (default: consume, then charge on the level left with <= 20; 6 updates for 7 rounds;"
    " refill at the update); 'paper' is §3.1 (charge on the level with < 20, then consume; an update every round)",
    "initial_levels": "authors' code (d2 F40/M60/S70, d3 F60/M50/S40, d4 F30/M80/S60, d1 empty)",
    "capacity": "authors' code (carry at most 100)",
    "refill_to": "authors' code (refilled to 100 in d1)",
    "supply_at_supply_node": "authors' code (SUPPLY not allowed in d1)",
    "allow_none": "authors' code (a NONE action)",
    "rounds": "paper (§4.1: 7 turns per agent, 21 agent actions)",
}


class CityParams(BaseModel):
    """The simulation's rules; defaults and their sources in :data:`PROVENANCE`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    districts: tuple[str, ...] = ("d1", "d2", "d3", "d4")
    """The districts (§3.1: four, d1-d4)."""
    supply_node: str = "d1"
    """Where agents refill (§3.1: d1)."""
    edges: tuple[tuple[str, str], ...] = (("d1", "d2"), ("d1", "d3"), ("d2", "d4"), ("d3", "d4"))
    """The roads a ``MOVE`` may take (§3.1: d1-d2, d1-d3, d2-d4, d3-d4)."""
    extra_edges: tuple[tuple[str, str], ...] = (("d2", "d3"),)
    """Roads the authors' code adds (d2-d3); ``()`` for §3.1's map alone."""
    consumption: int = Field(default=10, ge=0)
    """C, what a district consumes of each resource per update (§3.1: 10)."""
    start_health: int = Field(default=100, ge=1)
    """Every district's health at the start (§3.1: 100)."""
    dynamics: Literal["authors", "paper"] = "authors"
    """How the world advances: ``authors`` (their code, which made Fig. 5) or ``paper`` (§3.1's equations); see the
    module docstring."""
    initial_levels: dict[str, dict[str, int]] = Field(
        default_factory=lambda: {
            "d1": {"FOOD": 0, "MEDICINE": 0, "SECURITY": 0},
            "d2": {"FOOD": 40, "MEDICINE": 60, "SECURITY": 70},
            "d3": {"FOOD": 60, "MEDICINE": 50, "SECURITY": 40},
            "d4": {"FOOD": 30, "MEDICINE": 80, "SECURITY": 60},
        }
    )
    """Each district's resource levels at the start (the authors' code; the paper gives none)."""
    capacity: int = Field(default=100, ge=1)
    """The most units an agent carries (the authors' code: 100)."""
    refill_to: int = Field(default=100, ge=0)
    """What an agent holds after a refill in the supply node (the authors' code: 100)."""
    supply_at_supply_node: bool = False
    """Whether ``SUPPLY_RESOURCE`` is allowed in the supply node (the authors' code: no)."""
    allow_none: bool = True
    """Whether ``NONE`` is an action (the authors' code: yes)."""
    rounds: int = Field(default=7, ge=1)
    """Rounds, one turn of each agent a round (§4.1: 7 turns per agent, 21 actions)."""

    def health_decrease(self, level: int) -> int:
        """Health lost for one resource at ``level``: §3.1's function (5 below 20), or 5 at ``<= 20`` under the
        authors' dynamics; 10 below 10 in both."""
        if level < 10:
            return 10
        if level < 20 or (self.dynamics == "authors" and level == 20):
            return 5
        return 0

    @property
    def updates(self) -> int:
        """How many times the world advances: after every round (paper), or after all but the last (authors)."""
        return self.rounds - 1 if self.dynamics == "authors" else self.rounds

    def advance(self, levels: dict[str, int]) -> tuple[dict[str, int], int]:
        """One district's levels after a world update and the health it loses (the rule set's order)."""
        consumed = {r: max(0, v - self.consumption) for r, v in levels.items()}
        charged = consumed if self.dynamics == "authors" else levels
        return consumed, sum(self.health_decrease(v) for v in charged.values())


@dataclass(frozen=True)
class Action:
    """``MOVE(d)``, ``SUPPLY_RESOURCE(x)`` or ``NONE``."""

    kind: Literal["MOVE", "SUPPLY_RESOURCE", "NONE"]
    arg: str | int | None = None

    def __str__(self) -> str:
        return self.kind if self.arg is None else f"{self.kind}({self.arg})"


@dataclass(frozen=True)
class CityState:
    """Whose turn it is, where everyone is, what they carry, and the districts' levels and health."""

    round: int
    turn: int
    position: dict[str, str]
    carry: dict[str, int]
    levels: dict[str, dict[str, int]]
    health: dict[str, int]
    log: tuple[str, ...] = field(default=(), repr=False)


class IllegalCityAction(ValueError):
    """An action the rules forbid; the message is the feedback the agent sees."""


_ACTION_RE = re.compile(r"\b(MOVE|SUPPLY_RESOURCE|NONE)\b\s*(?:\(\s*([A-Za-z0-9_ ]*?)\s*\))?", re.I)
_DISTRICT_RE = re.compile(r"^(?:district[ _]?|d)?(\d+)$", re.I)


class City:
    """The simulation: sequential turns, legality feedback, world updates."""

    def __init__(self, params: CityParams | None = None, **overrides: object) -> None:
        base = params or CityParams()
        self.params = base.model_copy(update=overrides) if overrides else base
        p = self.params
        missing = set(p.districts) - set(p.initial_levels)
        if missing:
            raise ValueError(f"initial_levels lacks district(s) {sorted(missing)}")
        if p.supply_node not in p.districts:
            raise ValueError(f"supply_node {p.supply_node!r} is not one of {p.districts}")

    @cached_property
    def adjacency(self) -> dict[str, tuple[str, ...]]:
        adj: dict[str, set[str]] = {d: set() for d in self.params.districts}
        for a, b in (*self.params.edges, *self.params.extra_edges):
            adj[a].add(b)
            adj[b].add(a)
        return {d: tuple(sorted(n)) for d, n in adj.items()}

    @property
    def regular(self) -> tuple[str, ...]:
        return tuple(d for d in self.params.districts if d != self.params.supply_node)

    def distance(self, a: str, b: str) -> int:
        """Moves needed from ``a`` to ``b``."""
        seen, queue = {a: 0}, deque([a])
        while queue:
            cur = queue.popleft()
            for n in self.adjacency[cur]:
                if n not in seen:
                    seen[n] = seen[cur] + 1
                    queue.append(n)
        return seen[b]

    # -- dynamics ------------------------------------------------------------------------------------
    def reset(self) -> CityState:
        p = self.params
        return CityState(
            round=0,
            turn=0,
            position={a: p.supply_node for a in AGENTS},
            carry={a: p.refill_to for a in AGENTS},
            levels={d: dict(p.initial_levels[d]) for d in p.districts},
            health={d: p.start_health for d in self.regular},
        )

    def current_agent(self, state: CityState) -> str:
        return AGENTS[state.turn]

    def is_over(self, state: CityState) -> bool:
        return state.round >= self.params.rounds

    def parse_action(self, text: str) -> Action:
        """The action named in ``text``; IllegalCityAction with feedback when there is none."""
        m = _ACTION_RE.search(text or "")
        if not m:
            raise IllegalCityAction(
                f"'{text}' is not an action. Write MOVE(district_number), SUPPLY_RESOURCE(amount) or NONE."
            )
        kind, arg = m.group(1).upper(), m.group(2)
        if kind == "NONE":
            return Action("NONE")
        if not arg:
            raise IllegalCityAction(f"{kind} needs an argument, e.g. MOVE(2) or SUPPLY_RESOURCE(30).")
        if kind == "MOVE":
            number = _DISTRICT_RE.match(arg)  # MOVE(2) as the paper writes it, MOVE(d2), MOVE(district_2)
            return Action("MOVE", f"d{number.group(1)}" if number else arg.lower())
        if not arg.isdigit():
            raise IllegalCityAction(f"SUPPLY_RESOURCE takes a whole number of units, not '{arg}'.")
        return Action("SUPPLY_RESOURCE", int(arg))

    def check(self, state: CityState, agent: str, action: Action) -> None:
        """Raise IllegalCityAction (with the feedback the paper's system gives) if ``action`` is illegal."""
        p, here = self.params, state.position[agent]
        if action.kind == "NONE":
            if not p.allow_none:
                raise IllegalCityAction("NONE is not allowed; move or supply.")
            return
        if action.kind == "MOVE":
            if action.arg not in self.adjacency:
                raise IllegalCityAction(f"There is no district '{action.arg}'. Districts: {', '.join(p.districts)}.")
            if action.arg not in self.adjacency[here]:
                raise IllegalCityAction(
                    f"You are in {here}; {action.arg} is not connected to it. "
                    f"From {here} you can move to: {', '.join(self.adjacency[here])}."
                )
            return
        amount = int(action.arg or 0)
        if here == p.supply_node and not p.supply_at_supply_node:
            raise IllegalCityAction(f"{here} is the supply node; resources cannot be supplied there.")
        if amount <= 0:
            raise IllegalCityAction("SUPPLY_RESOURCE needs a positive amount.")
        if amount > state.carry[agent]:
            raise IllegalCityAction(
                f"You carry only {state.carry[agent]} units of {ROLE[agent]}; cannot supply {amount}."
            )

    def apply(self, state: CityState, agent: str, action: Action) -> CityState:
        """The state after a legal action of the agent whose turn it is (advancing the world after a round)."""
        if self.is_over(state):
            raise IllegalCityAction("the simulation is over")
        if agent != self.current_agent(state):
            raise IllegalCityAction(f"it is {self.current_agent(state)}'s turn, not {agent}'s")
        self.check(state, agent, action)
        p = self.params
        position, carry = dict(state.position), dict(state.carry)
        levels = {d: dict(v) for d, v in state.levels.items()}
        if action.kind == "MOVE":
            position[agent] = str(action.arg)
        elif action.kind == "SUPPLY_RESOURCE":
            amount = int(action.arg or 0)
            levels[position[agent]][ROLE[agent]] += amount
            carry[agent] -= amount
        if p.dynamics == "paper" and position[agent] == p.supply_node:
            carry[agent] = self._refilled(carry[agent])
        turn, rnd, health = state.turn + 1, state.round, dict(state.health)
        note = f"round {state.round + 1}: {agent} {action}"
        if turn == len(AGENTS):
            turn, rnd = 0, rnd + 1
            if rnd <= p.updates:
                for d in self.regular:
                    levels[d], lost = p.advance(levels[d])
                    health[d] = max(0, health[d] - lost)
                if p.dynamics == "authors":
                    carry = {a: self._refilled(c) if position[a] == p.supply_node else c for a, c in carry.items()}
        return CityState(rnd, turn, position, carry, levels, health, (*state.log, note))

    def _refilled(self, carry: int) -> int:
        return max(carry, min(self.params.refill_to, self.params.capacity))

    def final_health(self, state: CityState) -> float:
        """Mean health of the non-supply districts (the paper's metric)."""
        return sum(state.health.values()) / len(state.health)

    # -- text -----------------------------------------------------------------------------------------
    def describe(self, state: CityState, agent: str, observation: Literal["partial", "full"] = "partial") -> str:
        """What the agent is told at the start of its turn. ``partial`` (the paper's "non-observable districts", as
        the authors' code does it): its own district's levels and health, what it carries, and the roads; the rest
        it learns from teammates' responses. ``full`` (an ablation of ours): every district and every agent."""
        p, here = self.params, state.position[agent]
        roads = "; ".join(f"{d} to {', '.join(self.adjacency[d])}" for d in p.districts)
        refill = (
            "at the end of any round you finish there" if p.dynamics == "authors" else "as soon as you arrive there"
        )
        shown = p.districts if observation == "full" else (here,)
        rows = [self._district_line(state, d) for d in shown]
        lines = [
            f"Round {state.round + 1} of {p.rounds}. You are {agent}; you deliver {ROLE[agent]}.",
            f"You are in {here} carrying {state.carry[agent]} units of {ROLE[agent]} (capacity {p.capacity}; "
            f"{p.supply_node} is the supply node, which refills you to {min(p.refill_to, p.capacity)} {refill}).",
            f"Roads: {roads}.",
            ("Districts:" if observation == "full" else "What you see here:"),
            *rows,
        ]
        if observation == "full":
            lines.append(
                "Other agents: " + ", ".join(f"{a} in {state.position[a]}" for a in AGENTS if a != agent) + "."
            )
        else:
            lines.append("You cannot see other districts or where the other agents are; their responses tell you.")
        lines.append(
            f"Actions: MOVE(district_number) to a connected district (e.g. MOVE(2)), SUPPLY_RESOURCE(amount) of your "
            f"{ROLE[agent]} where you are (not in {p.supply_node})" + (", or NONE." if p.allow_none else ".")
        )
        return "\n".join(lines)

    def _district_line(self, state: CityState, d: str) -> str:
        if d == self.params.supply_node:
            return f"  {d}: the supply node (no health; resources cannot be supplied here)"
        levels = ", ".join(f"{r} {state.levels[d][r]}" for r in RESOURCES)
        return f"  {d}: health {state.health[d]}, {levels}"
