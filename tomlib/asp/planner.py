"""The exact upper bound for the city simulation: a clingo planning encoding that maximizes the final mean
health of the non-supply districts over all rounds, under the same rules as :class:`tomlib.envs.city.City`.

Agents never interact (each moves only its own resource), so the order of the three actions inside a round
does not matter and the encoding lets all three act at once per round.

Both rule sets of :attr:`CityParams.dynamics` are encoded: under the authors' the world advances ``rounds - 1``
times, so the plan covers those rounds (the last round's actions change nothing), health is charged on the level
left after consumption with ``<= 20``, and refills happen at the update, which is when the encoding refills.

Supplied amounts are multiples of ``unit``. ``unit=1`` is exact by construction but slower. ``unit="auto"`` takes
10 when it is exact: under the paper's rule the loss depends only on the tens digit of a level (< 10, < 20),
consumption removes exactly 10, and every initial level, the capacity and the refill are multiples of 10, so
delivering each district's running total rounded down to tens gives the same tens digits at every step (earlier
remainders are wasted by consumption or the floor at 0) with no more resources. The authors' rule (a loss at a
level left of 20, i.e. a delivered level of 30) breaks this (31 differs from 30), so there ``auto`` uses 1.
``benchmarks/bench_tom_ib.py`` prints both units for both rule sets.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import clingo

from tomlib.asp._optima import actions_from_json, actions_to_json, load_optimum, optimum_key, save_optimum
from tomlib.envs.city import AGENTS, RESOURCES, ROLE, Action, City, CityParams

ENCODING = r"""
round(0..N-1) :- rounds(N).
step(0..N) :- rounds(N).
adj(X,Y) :- edge(X,Y).
adj(Y,X) :- edge(X,Y).

% one action per agent and round: move to a neighbour, supply a multiple of unit, or nothing
{ move(A,Y,T) : adj(X,Y) } 1 :- at(A,X,T), round(T).
{ give(A,N,T) : amount(N), N <= C } 1 :- carry(A,C,T), C > 0, at(A,X,T), supply_ok(X), round(T).
:- move(A,_,T), give(A,_,T).
supply_ok(X) :- district(X), not supply(X).
supply_ok(X) :- supply(X), supply_at_supply_node.

moved(A,T) :- move(A,_,T).
gave(A,T) :- give(A,_,T).
at(A,Y,T+1) :- move(A,Y,T).
at(A,X,T+1) :- at(A,X,T), round(T), not moved(A,T).

left(A,C-N,T) :- carry(A,C,T), give(A,N,T).
left(A,C,T) :- carry(A,C,T), round(T), not gave(A,T).
carry(A,C,T+1) :- left(A,C,T), at(A,X,T+1), not supply(X).
carry(A,@max(C,F),T+1) :- left(A,C,T), at(A,X,T+1), supply(X), refill(F).

supplied(D,R,N,T) :- give(A,N,T), role(A,R), at(A,D,T).
after(D,R,L+N,T) :- level(D,R,L,T), supplied(D,R,N,T).
after(D,R,L,T) :- level(D,R,L,T), round(T), not supplied(D,R,_,T).

left_after(D,R,L-C,T) :- after(D,R,L,T), consumption(C), L >= C.
left_after(D,R,0,T) :- after(D,R,L,T), consumption(C), L < C.
level(D,R,L,T+1) :- left_after(D,R,L,T).

% health is charged on the level before consumption (paper) or on what is left (authors, with <= 20)
charged(D,R,L,T) :- after(D,R,L,T), not consume_first.
charged(D,R,L,T) :- left_after(D,R,L,T), consume_first.
dec(D,R,10,T) :- charged(D,R,L,T), regular(D), L < 10.
dec(D,R,5,T) :- charged(D,R,L,T), regular(D), L >= 10, L < 20.
dec(D,R,5,T) :- charged(D,R,20,T), regular(D), inclusive.

lost(D,S,T) :- regular(D), round(T), S = #sum{ X,R : dec(D,R,X,T) }.
health(D,H-S,T+1) :- health(D,H,T), lost(D,S,T), H >= S.
health(D,0,T+1) :- health(D,H,T), lost(D,S,T), H < S.

#maximize { H,D : health(D,H,N), rounds(N) }.
#show move/3. #show give/3. #show health/3.
"""


class _Max:
    """The ``@max`` helper the encoding calls while grounding."""

    @staticmethod
    def max(a: clingo.Symbol, b: clingo.Symbol) -> clingo.Symbol:
        return clingo.Number(max(a.number, b.number))


def instance(params: CityParams, unit: int) -> str:
    """The facts for ``params``; atoms use lower-case names (d1, food_agent, food)."""
    p, facts = params, []
    facts += [f"district({d})." for d in p.districts]
    facts += [
        f"supply({p.supply_node}).",
        f"rounds({p.updates}).",  # rounds whose actions count: the last one does not under the authors' dynamics
        f"consumption({p.consumption}).",
        f"refill({min(p.refill_to, p.capacity)}).",
    ]
    facts += [f"regular({d})." for d in p.districts if d != p.supply_node]
    facts += [f"edge({a},{b})." for a, b in (*p.edges, *p.extra_edges)]
    facts += [f"amount({n})." for n in range(unit, p.capacity + 1, unit)]
    for a in AGENTS:
        facts += [
            f"role({a.lower()},{ROLE[a].lower()}).",
            f"at({a.lower()},{p.supply_node},0).",
            f"carry({a.lower()},{min(p.refill_to, p.capacity)},0).",
        ]
    for d in p.districts:
        facts += [f"level({d},{r.lower()},{p.initial_levels[d][r]},0)." for r in RESOURCES]
        if d != p.supply_node:
            facts.append(f"health({d},{p.start_health},0).")
    if p.supply_at_supply_node:
        facts.append("supply_at_supply_node.")
    if p.dynamics == "authors":
        facts += ["consume_first.", "inclusive."]
    return "\n".join(facts)


@dataclass
class OptimalPlan:
    """The best plan found, its final mean health, and whether clingo proved it optimal."""

    mean_health: float
    health: dict[str, int]
    actions: dict[int, dict[str, Action]]
    proven_optimal: bool
    solve_seconds: float
    unit: int
    cached: bool = False  # answered from a kept optimum rather than solved now


def exact_unit(params: CityParams) -> int:
    """The coarsest supply unit that keeps the optimum exact (see the module docstring)."""
    p = params
    amounts = [p.consumption, p.capacity, p.refill_to, *(v for d in p.initial_levels.values() for v in d.values())]
    return 10 if p.dynamics == "paper" and p.consumption == 10 and all(a % 10 == 0 for a in amounts) else 1


def optimal_plan(
    params: CityParams | None = None, *, unit: int | str = "auto", time_limit_s: float = 300.0, cache: bool = True
) -> OptimalPlan:
    """Maximize the final mean health; ``proven_optimal`` is False if the time limit cut the search short.

    A proven optimum is kept (:mod:`tomlib.asp._optima`): the same rules, unit and encoding later return it at
    once, with ``solve_seconds`` of the original computation and ``cached`` True."""
    p = params or CityParams()
    unit = exact_unit(p) if unit == "auto" else int(unit)
    if unit <= 0 or p.capacity % unit:
        raise ValueError(f"unit must divide the capacity ({p.capacity}); got {unit}")
    key = optimum_key(p, unit, ENCODING)
    if cache and (hit := load_optimum(key)) is not None:
        return OptimalPlan(
            mean_health=hit["mean_health"],
            health=hit["health"],
            actions=actions_from_json(hit["actions"]),
            proven_optimal=True,
            solve_seconds=hit["solve_seconds"],
            unit=unit,
            cached=True,
        )
    plan = _solve(p, unit, time_limit_s)
    if cache and plan.proven_optimal:
        record = {
            "mean_health": plan.mean_health,
            "health": plan.health,
            "actions": actions_to_json(plan.actions),
            "solve_seconds": round(plan.solve_seconds, 2),
            "unit": unit,
            "clingo": clingo.__version__,
            "params": p.model_dump(mode="json"),
        }
        save_optimum(key, record)
    return plan


def _solve(p: CityParams, unit: int, time_limit_s: float) -> OptimalPlan:
    ctl = clingo.Control(["--opt-mode=opt", "--warn=none"])
    ctl.add("base", [], ENCODING + "\n" + instance(p, unit))
    t0 = time.perf_counter()
    ctl.ground([("base", [])], context=_Max())
    best: list[clingo.Symbol] = []

    def on_model(model: clingo.Model) -> None:
        best[:] = model.symbols(shown=True)

    with ctl.solve(on_model=on_model, async_=True) as handle:
        finished = handle.wait(time_limit_s)
        if not finished:
            handle.cancel()
        result = handle.get()
    seconds = time.perf_counter() - t0
    if not best:
        raise RuntimeError(f"no plan found within {time_limit_s:.0f} s; raise time_limit_s or the unit")
    health = {
        str(s.arguments[0]): s.arguments[1].number
        for s in best
        if s.name == "health" and s.arguments[2].number == p.updates
    }
    actions: dict[int, dict[str, Action]] = {}
    for s in best:
        if s.name in ("move", "give"):
            agent = str(s.arguments[0]).upper()
            t = s.arguments[2].number
            act = (
                Action("MOVE", str(s.arguments[1]))
                if s.name == "move"
                else Action("SUPPLY_RESOURCE", s.arguments[1].number)
            )
            actions.setdefault(t, {})[agent] = act
    return OptimalPlan(
        mean_health=sum(health.values()) / len(health),
        health=health,
        actions=actions,
        proven_optimal=bool(finished and result.satisfiable and result.exhausted),
        solve_seconds=seconds,
        unit=unit,
    )


def replay_plan(plan: OptimalPlan, params: CityParams | None = None) -> float:
    """Play the plan in the simulation (NONE where it has no action) and return the final mean health;
    a check that the encoding and the simulation agree."""
    city = City(params or CityParams())
    state = city.reset()
    while not city.is_over(state):
        agent = city.current_agent(state)
        action = plan.actions.get(state.round, {}).get(agent, Action("NONE"))
        state = city.apply(state, agent, action)
    return city.final_health(state)
