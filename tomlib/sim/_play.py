"""The simulated model as a player: ToM-k game agents and city agents, each a declared policy read off the prompt.

- Matrix games (adaptive-ToM §4.1): a decision asked "as part of the environment" is ToM-0's (eq. 3): the partner
  repeats its last choice (Memory-1) or plays its most frequent one (Memory-N, the first of equal counts); a
  decision given a prediction is the best response to it (eq. 9). Both pick the first of equal replies. tomlib
  builds the ToM-k chain from these calls (eq. 8), so the simulated chain is exactly a formal ToM-k player; with
  probability ``tom_error`` the reply is another legal action instead.
- Grid and kitchen decisions: a legal action drawn at random (the simulation carries no planner).
- City agents (ToM+IB §3): :func:`city_policy` on what the agent sees (its district, what it carries, the roads);
  internal beliefs are plain statements of that view, which the translator rule turns back into true facts.
"""

from __future__ import annotations

import random
import re
from collections import deque
from dataclasses import dataclass
from typing import Any

from tomlib.sim._spec import SimSpec

# -- matrix games --------------------------------------------------------------------------------------------------

_OPTIONS = re.compile(r"choose one of ([A-H](?:, [A-H])*) at the same time")
_LAST = re.compile(r"Last round you chose ([A-H]) and your partner chose ([A-H])\.")
_COUNTS = re.compile(r"So far your partner chose ([^;]+);")
_PREDICTED = re.compile(r"You expect your partner to play '([^']+)'")


def matrix_intent(user: str) -> tuple[str, tuple[str, ...]] | None:
    """The action a declared ToM player takes in a matrix-game prompt and the legal actions, or None when the
    prompt is not a matrix game."""
    opts = _OPTIONS.search(user)
    if opts is None:
        return None
    options = tuple(opts[1].split(", "))
    if m := _PREDICTED.search(user):
        partner = m[1]
    elif m := _LAST.search(user):
        partner = m[2]
    elif m := _COUNTS.search(user):
        counts = {o: int(c) for o, c in re.findall(r"([A-H]): (\d+)", m[1])}
        partner = max(options, key=lambda o: (counts.get(o, 0), -options.index(o)))
    else:
        return None
    return next(o for o in options if o != partner), options  # anti-coordination: the first choice that differs


def game_action(spec: SimSpec, user: str, legal: list[str], rng: random.Random) -> str:
    """A matrix decision of the declared order with error ``tom_error``; elsewhere a random legal action."""
    got = matrix_intent(user)
    if got is None or got[0] not in legal:
        return rng.choice(legal)
    intended = got[0]
    if rng.random() < spec.tom_error:
        return rng.choice([a for a in legal if a != intended] or legal)
    return intended


# -- the city ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CityView:
    """What a city agent is told of the state: enough for :func:`city_policy`."""

    agent: str
    resource: str
    here: str
    carry: int
    supply: str
    roads: dict[str, tuple[str, ...]]
    level_here: int | None  # its own resource where it stands (None at the supply node)


FILL_TO = 40  # the policy tops a district up to this level of its resource
UNIT = 10  # and supplies at least this much


def _step_toward(roads: dict[str, tuple[str, ...]], here: str, goal: str) -> str:
    """The first district on a shortest road path (ties: by name)."""
    dist = {goal: 0}
    todo = deque([goal])
    while todo:
        d = todo.popleft()
        for n in roads.get(d, ()):
            if n not in dist:
                dist[n] = dist[d] + 1
                todo.append(n)
    return min(roads[here], key=lambda n: (dist.get(n, 99), n))


def city_policy(view: CityView) -> str:
    """The declared policy: empty → back to the supply node (wait there to be refilled); in a district whose level
    of its resource is under :data:`FILL_TO` → supply up to it (at least :data:`UNIT`); else on to the next
    district in name order, round the regular ones."""
    regular = sorted(d for d in view.roads if d != view.supply)
    if view.carry == 0:
        return "NONE" if view.here == view.supply else f"MOVE({_step_toward(view.roads, view.here, view.supply)[1:]})"
    if view.here != view.supply and view.level_here is not None and view.level_here < FILL_TO:
        return f"SUPPLY_RESOURCE({min(view.carry, max(UNIT, FILL_TO - view.level_here))})"
    goal = regular[(regular.index(view.here) + 1) % len(regular)] if view.here in regular else regular[0]
    return f"MOVE({_step_toward(view.roads, view.here, goal)[1:]})"


_WHO = re.compile(r"You are (\w+); you deliver (\w+)\.")
_WHERE = re.compile(r"You are in (\w+) carrying (\d+) units of \w+ \(capacity \d+; (\w+) is the supply node")
_ROADS = re.compile(r"^Roads: (.+)\.$", re.M)


def city_view(user: str) -> CityView | None:
    """The agent's view from the last state description in a city prompt."""
    at = user.rfind("\nNow:\n")
    now = user[at:] if at >= 0 else user
    who, where, roads = _WHO.search(now), _WHERE.search(now), _ROADS.search(now)
    if not (who and where and roads):
        return None
    graph = {
        d.strip(): tuple(n.strip() for n in ns.split(","))
        for d, ns in (part.split(" to ", 1) for part in roads[1].split("; "))
    }
    here = where[1]
    level = re.search(rf"^\s+{here}: health \d+,.*\b{who[2]} (\d+)", now, flags=re.M)
    return CityView(
        agent=who[1],
        resource=who[2],
        here=here,
        carry=int(where[2]),
        supply=where[3],
        roads=graph,
        level_here=int(level[1]) if level else None,
    )


def city_reply(view: CityView, fields: dict[str, Any]) -> dict[str, Any]:
    """A city agent's sections: the policy's action, a response saying what it sees and does, and internal beliefs
    as plain statements the translator rule reads back."""
    action = city_policy(view)
    resource = view.resource.lower()
    seen = f"{view.resource} here is {view.level_here}" if view.level_here is not None else "this is the supply node"
    out = dict(fields)
    out["action"] = action
    out["response"] = f"{view.agent}: I am in {view.here} carrying {view.carry} {resource}; {seen}; next {action}."
    if "internal_beliefs" in out:
        lines = [f"I am in {view.here}.", f"I carry {view.carry} {resource}."]
        if view.level_here is not None:
            lines.append(f"{resource} in {view.here} is {view.level_here}.")
        out["internal_beliefs"] = " ".join(lines)
    if "beliefs_about_others" in out:
        out["beliefs_about_others"] = "My teammates serve their own resources where those are lowest."
    return out


_STATEMENT = re.compile(r"I am in (\w+)\.|I carry (\d+) (\w+)\.|(\w+) in (\w+) is (\d+)\.")


def city_translation(user: str, grounded: bool) -> dict[str, Any]:
    """The translator's reply: each statement of :func:`city_reply`'s beliefs as a fact (the vocabulary's
    ``at``/``carries``/``level`` when ``grounded``, the same facts as a program otherwise)."""
    m = re.match(r"Statements by (\w+):\n(.*)", user, flags=re.S)
    if m is None:
        return {"facts": []} if grounded else {"statements": []}
    agent, beliefs = m[1], m[2]
    facts = []
    resource = "food"
    for here, amount, res, res2, district, level in _STATEMENT.findall(beliefs):
        if here:
            facts.append(f"at({agent}, {here}).")
        elif amount:
            resource = res
            facts.append(f"carries({agent}, {res}, {amount}).")
        elif level:
            facts.append(f"level({district}, {res2 or resource}, {level}).")
    return {"facts": facts} if grounded else {"statements": facts}
