"""Exact stable coalitions and pairs with clingo.

**Coalitions (ICLR draft).** Core stability is a two-level problem, solved by a guess-and-check loop: a
*partition program* guesses a coalition structure (optimizing the objective of :func:`objective`); a *blocking
program* searches for a coalition C whose members all strictly prefer it. When one is found, a cut is added to
the partition program that excludes every structure C would block, and the partition program is solved again.
The loop ends with a structure no coalition blocks (stable, and optimal among stable ones since cuts only
remove unstable structures), or with an unsatisfiable partition program: a proof that no stable structure
exists. Every comparison of means is cross-multiplied, so the programs use exact integers.

**Pairs (NeurIPS draft).** One program: guess a matching (each agent at most ``quota`` partners, 1 for pairs),
forbid every blocking pair.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import clingo

from tomlib.coalition._core import CoalitionStructure, find_blocking, lcm_upto, objective
from tomlib.coalition._instance import AlignmentInstance
from tomlib.coalition._pairs import Pairs, pair_objective, pair_prefers

PARTITION = """
agent(0..N-1) :- n(N).
{ in(I,C) : agent(C), C <= I } 1 :- agent(I).
:- in(I,C), C != I, not in(C,C).
size(C,S) :- in(C,C), S = #count{ I : in(I,C) }.
:- size(C,S), min_size(M), S < M.
assigned(I) :- in(I,_).
mate(I,J) :- in(I,C), in(J,C), I != J.
#show in/2.
"""
OBJECTIVE = """
#minimize { 1@3,I : believer(I), not assigned(I) }.
#minimize { V@2,I,J : mate(I,J), in(I,C), size(C,S), obj(I,J,S,V) }.
#minimize { 1@1,I : agent(I), not assigned(I) }.
"""

BLOCKING = """
agent(0..N-1) :- n(N).
{ c(I) : agent(I) }.
:- #count{ I : c(I) } < M, min_size(M).
% an agent in a coalition joins C only if it strictly prefers C: sum_j in C\\{i} (p_i*w_ij - T_i) < 0
:- c(I), assigned(I), #sum{ V,J : c(J), J != I, coef(I,J,V) } >= 0.
#show c/1.
"""

PAIRS = """
agent(0..N-1) :- n(N).
{ pair(I,J) : agent(J), I < J } :- agent(I).
matched(I,J) :- pair(I,J).
matched(J,I) :- pair(I,J).
:- agent(I), quota(Q), #count{ J : matched(I,J) } > Q.
has(I) :- matched(I,_).
free(I) :- agent(I), quota(Q), #count{ J : matched(I,J) } < Q.
better(I,J) :- free(I), pref_none(I,J).
better(I,J) :- matched(I,M), pref(I,J,M).
:- better(I,J), better(J,I), I < J, not matched(I,J).
#minimize { 1@3,I : believer(I), not has(I) }.
#minimize { V@2,I,J : matched(I,J), w(I,J,V) }.
#minimize { 1@1,I : agent(I), not has(I) }.
#show pair/2.
"""


@dataclass
class Solution:
    """What an exact solver found: a stable outcome (or proof that none exists) and the work it took."""

    stable_exists: bool
    structure: CoalitionStructure | None = None
    pairs: Pairs | None = None
    objective: tuple[int, ...] | None = None
    iterations: int = 0
    cuts: int = 0
    seconds: float = 0.0


def _control() -> clingo.Control:
    return clingo.Control(["--warn=none", "--opt-mode=opt"])


def _last_model(ctl: clingo.Control) -> list[clingo.Symbol] | None:
    """The shown atoms of the last model found (the optimum, in optimization mode), or None if unsatisfiable."""
    best: list[clingo.Symbol] | None = None

    def on_model(model: clingo.Model) -> None:
        nonlocal best
        best = model.symbols(shown=True)

    result = ctl.solve(on_model=on_model)
    return None if result.unsatisfiable else best


def _partition_facts(inst: AlignmentInstance) -> str:
    w, scale = inst.weights, lcm_upto(inst.n)
    facts = [f"n({inst.n}).", f"min_size({inst.min_size})."]
    if inst.everyone_in:
        facts.append(":- agent(I), not assigned(I).")  # the literal reading: nobody outside
    for i in range(inst.n):
        if not inst.has_beliefs[i]:
            continue
        facts.append(f"believer({i}).")
        for j in range(inst.n):
            if i != j and w[i, j]:
                for s in range(inst.min_size, inst.n + 1):
                    facts.append(f"obj({i},{j},{s},{int(w[i, j]) * (scale // (s - 1))}).")
    return "\n".join(facts)


def _structure(model: list[clingo.Symbol], n: int) -> CoalitionStructure:
    groups: dict[int, list[int]] = {}
    for sym in model:
        i, c = (a.number for a in sym.arguments)
        groups.setdefault(c, []).append(i)
    return CoalitionStructure.of(list(groups.values()), n)


def _blocking_coalition(inst: AlignmentInstance, structure: CoalitionStructure) -> tuple[int, ...] | None:
    w = inst.weights
    facts = [f"n({inst.n}).", f"min_size({inst.blocking_size})."]
    if inst.trusted_blocking:  # G.2: no untrusted pair inside a blocking coalition
        facts += [
            f":- c({i}), c({j})."
            for i in range(inst.n)
            if inst.has_beliefs[i]
            for j in range(inst.n)
            if j != i and not inst.trusted(i, j)
        ]
    for i in range(inst.n):
        c = structure.coalition_of(i)
        if c is None:
            continue
        facts.append(f"assigned({i}).")
        partners = [j for j in c if j != i]
        p, t = len(partners), int(sum(int(w[i, j]) for j in partners))
        facts += [f"coef({i},{j},{p * int(w[i, j]) - t})." for j in range(inst.n) if j != i]
    ctl = clingo.Control(["--warn=none"])
    ctl.add("base", [], BLOCKING + "\n".join(facts))
    ctl.ground([("base", [])])
    found: list[int] = []
    with ctl.solve(yield_=True) as handle:
        for model in handle:
            found = sorted(s.arguments[0].number for s in model.symbols(shown=True))
            break
    return tuple(found) if found else None


BRUTE_FORCE_CHECK_MAX = 8
"""Up to this many agents a guess is checked by brute force (a few hundred subsets, faster than starting clingo)."""


def _blocking_check(
    inst: AlignmentInstance, structure: CoalitionStructure, clingo_cuts: bool
) -> tuple[int, ...] | None:
    """A blocking coalition of ``structure``, or None when it is stable. With ``clingo_cuts`` it is the one clingo
    finds, whatever the size: the cuts, and so which of equally good optima the search ends on, stay what they
    were. Without, up to :data:`BRUTE_FORCE_CHECK_MAX` agents it is brute force's smallest: every cut still forbids
    only structures that coalition blocks, so whether a stable structure exists cannot change."""
    if inst.n <= BRUTE_FORCE_CHECK_MAX:
        found = find_blocking(inst, structure)
        if found is None or not clingo_cuts:
            return found
    return _blocking_coalition(inst, structure)


def _cut(inst: AlignmentInstance, blocking: tuple[int, ...], k: int) -> str:
    """Forbid every structure in which every member of ``blocking`` strictly prefers it."""
    w = inst.weights
    d = len(blocking) - 1
    rules = []
    for i in blocking:
        s_ic = int(sum(int(w[i, j]) for j in blocking if j != i))
        rules.append(f"pc{k}({i}) :- agent({i}), not assigned({i}).")
        terms = "; ".join(f"{d * int(w[i, j]) - s_ic},{j} : mate({i},{j})" for j in range(inst.n) if j != i)
        rules.append(f"pc{k}({i}) :- assigned({i}), #sum{{ {terms} }} > 0.")
    rules.append(":- " + ", ".join(f"pc{k}({i})" for i in blocking) + ".")
    return "\n".join(rules)


def solve_coalitions(inst: AlignmentInstance, *, optimize: bool = True, max_iterations: int = 10_000) -> Solution:
    """A stable coalition structure (the ICLR draft's core stability, §4.2), or a proof that none exists.

    Args:
        inst: the instance to solve (at most ``MAX_AGENTS`` agents).
        optimize: the stable structure minimizing :func:`objective` (each guess is then an optimum, which costs
            seconds at n = 12); otherwise any stable structure (a fraction of a second at n = 12), the right call
            when only ``stable_exists`` is read.
        max_iterations: the most guess-and-check rounds (each adds one cut) before a RuntimeError.
    """
    t0 = time.perf_counter()
    ctl = _control() if optimize else clingo.Control(["--warn=none"])
    ctl.add("base", [], PARTITION + (OBJECTIVE if optimize else "") + _partition_facts(inst))
    ctl.ground([("base", [])])
    cuts = 0
    for it in range(1, max_iterations + 1):
        best = _last_model(ctl)
        if best is None:
            return Solution(False, iterations=it, cuts=cuts, seconds=time.perf_counter() - t0)
        structure = _structure(best, inst.n)
        blocking = _blocking_check(inst, structure, clingo_cuts=optimize)
        if blocking is None:
            return Solution(True, structure, None, objective(inst, structure), it, cuts, time.perf_counter() - t0)
        cuts = it
        ctl.add(f"cut{cuts}", [], _cut(inst, blocking, cuts))
        ctl.ground([(f"cut{cuts}", [])])
    raise RuntimeError(f"no answer after {max_iterations} guess-and-check iterations")


def solve_pairs(inst: AlignmentInstance, *, unaligned_acceptable: bool = True, abilities: bool = True) -> Solution:
    """A weakly stable matching (fewest unmatched, then lowest total misalignment; each agent at most
    ``inst.quota`` partners), or a proof that none exists."""
    t0 = time.perf_counter()
    kw = {"unaligned_acceptable": unaligned_acceptable, "abilities": abilities}
    w = inst.weights
    facts = [f"n({inst.n}).", f"quota({inst.quota})."]
    facts += [f"believer({i})." for i in range(inst.n) if inst.has_beliefs[i]]
    for i in range(inst.n):
        for j in range(inst.n):
            if i == j:
                continue
            if pair_prefers(inst, i, j, None, **kw):
                facts.append(f"pref_none({i},{j}).")
            if inst.has_beliefs[i]:
                facts.append(f"w({i},{j},{int(w[i, j])}).")
            facts += [
                f"pref({i},{j},{m})." for m in range(inst.n) if m not in (i, j) and pair_prefers(inst, i, j, m, **kw)
            ]
    ctl = _control()
    ctl.add("base", [], PAIRS + "\n".join(facts))
    ctl.ground([("base", [])])
    best = _last_model(ctl)
    if best is None:
        return Solution(False, iterations=1, seconds=time.perf_counter() - t0)
    pairs: Pairs = frozenset((s.arguments[0].number, s.arguments[1].number) for s in best)
    return Solution(
        True, pairs=pairs, objective=pair_objective(inst, pairs), iterations=1, seconds=time.perf_counter() - t0
    )
