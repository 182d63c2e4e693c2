"""The ICLR draft's coalitions (eq. 2 and §5.2), checked by brute force.

A *coalition structure* is a set of disjoint coalitions, each of at least ``min_size`` agents (the draft's
|μ(i)| ≥ n - 1 partners); the other agents are *outside* every coalition. Agent i values the coalition C it is
in by B'_i(C \\ {i}), the mean of its weights w_ij over its partners (eq. 2, with §5.2's abilities folded into
w); lower is preferred. Being outside is worse than any coalition. A structure is stable when no *blocking*
coalition C exists: |C| ≥ min_size and every member strictly prefers C to where it is. An agent without beliefs
never strictly prefers one coalition to another, so it blocks only from outside. Two readings change what blocks
(``AlignmentInstance.trusted_blocking``, ``blocking_min``): Theorem G.2's proof also asks every pair in C to be
trusted (φ ≤ ε), and §4.2 read literally lets coalitions of n - 1 block.

Among stable structures the solvers return one that leaves the fewest agents with beliefs outside, then minimizes
their total B', then leaves the fewest agents outside. The *team selected* (Algorithm 1: "the coalition with the
strongest belief alignment") is its coalition with the lowest mean B' over members with beliefs.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction

from tomlib.coalition._instance import AlignmentInstance, CoalitionInputError

Coalition = tuple[int, ...]


@dataclass(frozen=True)
class CoalitionStructure:
    """Disjoint coalitions (sorted tuples of agent indices); everyone else is outside."""

    coalitions: tuple[Coalition, ...]
    n: int

    @classmethod
    def of(cls, coalitions: Sequence[Sequence[int]], n: int) -> CoalitionStructure:
        """A structure from its coalitions, in a canonical order (ICLR §4.1: disjoint coalitions of the n agents).

        Args:
            coalitions: the coalitions, each a sequence of agent indices; they must be disjoint.
            n: the number of agents (indices 0..n-1); agents in no coalition stay outside.
        """
        cs = tuple(sorted(tuple(sorted(c)) for c in coalitions))
        seen = [i for c in cs for i in c]
        if len(seen) != len(set(seen)) or any(not 0 <= i < n for i in seen):
            raise CoalitionInputError(f"Coalitions must be disjoint sets of agents 0..{n - 1}; got {coalitions}.")
        return cls(cs, n)

    def coalition_of(self, i: int) -> Coalition | None:
        return next((c for c in self.coalitions if i in c), None)

    @property
    def outside(self) -> tuple[int, ...]:
        inside = {i for c in self.coalitions for i in c}
        return tuple(i for i in range(self.n) if i not in inside)

    def label(self, names: Sequence[str]) -> str:
        parts = ["{" + ", ".join(names[i] for i in c) + "}" for c in self.coalitions]
        out = self.outside
        return " ".join(parts) + (f" | outside: {', '.join(names[i] for i in out)}" if out else "")


def partner_sum(inst: AlignmentInstance, i: int, coalition: Sequence[int]) -> tuple[int, int]:
    """(Σ w_ij, number of partners) of i in ``coalition`` (which contains i): B'_i is their ratio."""
    row = inst.weight_rows[i]
    partners = [j for j in coalition if j != i]
    return sum(row[j] for j in partners), len(partners)


def value(inst: AlignmentInstance, i: int, coalition: Sequence[int] | None) -> Fraction | None:
    """B'_i of ``coalition`` (in weight units), or None when i is outside (worse than anything)."""
    if coalition is None:
        return None
    s, k = partner_sum(inst, i, coalition)
    return Fraction(s, k * inst.resolution)


def strictly_prefers(inst: AlignmentInstance, i: int, new: Sequence[int], current: Sequence[int] | None) -> bool:
    """i strictly prefers coalition ``new`` to ``current`` (None: outside). Exact: cross-multiplied integers."""
    if current is None:
        return True
    sn, kn = partner_sum(inst, i, new)
    sc, kc = partner_sum(inst, i, current)
    return sn * kc < sc * kn


def _blocking(inst: AlignmentInstance, structure: CoalitionStructure) -> Iterator[Coalition]:
    """Every blocking coalition of ``structure``, smallest first. Brute force."""
    rows = inst.weight_rows
    # (Σ w_ij, partners) of each agent's own coalition; None outside, where any coalition is preferred
    now = [None if (c := structure.coalition_of(i)) is None else partner_sum(inst, i, c) for i in range(inst.n)]
    for size in range(inst.blocking_size, inst.n + 1):
        k = size - 1
        for cand in itertools.combinations(range(inst.n), size):
            if inst.trusted_blocking and not inst.all_trusted(cand):
                continue  # G.2: a blocking coalition is trusted throughout
            # strictly_prefers, cross-multiplied (w_ii = 0, so the sum over cand is the sum over i's partners)
            if all((cur := now[i]) is None or sum(rows[i][j] for j in cand) * cur[1] < cur[0] * k for i in cand):
                yield cand


def find_blocking(inst: AlignmentInstance, structure: CoalitionStructure) -> Coalition | None:
    """A blocking coalition of ``structure`` (smallest first), or None when it is stable (ICLR §4.2). Brute force.

    Args:
        inst: the alignment instance (scores, ε, the blocking readings ``trusted_blocking`` and ``blocking_size``).
        structure: the coalition structure to test.
    """
    return next(_blocking(inst, structure), None)


def all_blocking(inst: AlignmentInstance, structure: CoalitionStructure) -> list[Coalition]:
    return list(_blocking(inst, structure))


def enumerate_structures(n: int, min_size: int, everyone_in: bool = False) -> Iterator[CoalitionStructure]:
    """Every coalition structure on n agents (coalitions of at least ``min_size``, the rest outside; with
    ``everyone_in``, nobody outside)."""

    def rec(rest: tuple[int, ...]) -> Iterator[list[Coalition]]:
        if not rest:
            yield []
            return
        first, others = rest[0], rest[1:]
        if not everyone_in:
            yield from rec(others)  # `first` stays outside
        for k in range(min_size - 1, len(others) + 1):
            for mates in itertools.combinations(others, k):
                remaining = tuple(x for x in others if x not in mates)
                for tail in rec(remaining):
                    yield [(first, *mates), *tail]

    for cs in rec(tuple(range(n))):
        yield CoalitionStructure.of(cs, n)


def lcm_upto(n: int) -> int:
    return math.lcm(*range(1, max(n, 2)))


def objective(inst: AlignmentInstance, structure: CoalitionStructure) -> tuple[int, int, int]:
    """Lexicographic, lower is better: (agents with beliefs left outside, Σ of B'_i over agents with beliefs in a
    coalition, scaled by lcm(1..n-1) to stay an integer, all agents left outside)."""
    scale = lcm_upto(inst.n)
    total = 0
    for c in structure.coalitions:
        for i in c:
            if inst.has_beliefs[i]:
                s, k = partner_sum(inst, i, c)
                total += s * (scale // k)
    out = structure.outside
    return sum(inst.has_beliefs[i] for i in out), total, len(out)


def brute_force_stable(inst: AlignmentInstance) -> list[CoalitionStructure]:
    """Every stable structure, by enumeration (small n only): the independent check of the clingo solver (§4.2).

    Args:
        inst: the instance (scores, ε, λ, abilities, minimum size and the blocking readings); every partition of its
            agents is enumerated, so keep n small.
    """
    structures = enumerate_structures(inst.n, inst.min_size, inst.everyone_in)
    return [s for s in structures if find_blocking(inst, s) is None]


def selected_team(inst: AlignmentInstance, structure: CoalitionStructure) -> Coalition | None:
    """Algorithm 1's team: the coalition with the lowest mean B' over its members with beliefs."""

    def key(c: Coalition) -> tuple[int, Fraction, int, Coalition]:
        vals = [value(inst, i, c) for i in c if inst.has_beliefs[i]]
        mean = sum(vals, Fraction(0)) / len(vals) if vals else Fraction(0)
        return (0 if vals else 1, mean, -len(c), c)

    return min(structure.coalitions, key=key) if structure.coalitions else None


def apply_blocking(structure: CoalitionStructure, blocking: Sequence[int], min_size: int) -> CoalitionStructure:
    """The members of ``blocking`` leave their coalitions and form it; a coalition left below ``min_size``
    dissolves and its remaining members are outside (one step of Appendix G's blocking dynamics).

    Args:
        structure: the coalition structure before the move.
        blocking: the agent indices of the blocking coalition C.
        min_size: the fewest members a coalition keeps (the instance's ``min_size``).
    """
    b = set(blocking)
    kept = []
    for c in structure.coalitions:
        rest = tuple(i for i in c if i not in b)
        if len(rest) >= min_size:
            kept.append(rest)
    return CoalitionStructure.of([*kept, tuple(sorted(b))], structure.n)


@dataclass
class DynamicsRun:
    """One run of blocking-coalition improvement dynamics (Appendix G's "iterative coalition formation")."""

    converged: bool
    steps: int
    final: CoalitionStructure
    cycle: list[CoalitionStructure] | None = None
    potential_rises: int = 0


def potential(inst: AlignmentInstance, structure: CoalitionStructure) -> Fraction:
    """Appendix G's Φ(μ) = Σ_i B'_i(μ(i)) over agents in a coalition (outside agents have no value to add)."""
    return sum((value(inst, i, c) or Fraction(0) for c in structure.coalitions for i in c), Fraction(0))


def improvement_dynamics(
    inst: AlignmentInstance,
    start: CoalitionStructure | None = None,
    *,
    rng: random.Random | None = None,
    max_steps: int = 500,
) -> DynamicsRun:
    """From ``start`` (default: everyone outside), repeatedly let a random blocking coalition form, until none
    blocks (converged), a structure repeats (a cycle: Φ cannot have decreased at every step), or ``max_steps``."""
    rng = rng or random.Random(0)
    state = start or CoalitionStructure.of([], inst.n)
    path = [state]
    seen = {state: 0}
    rises = 0
    for step in range(1, max_steps + 1):
        blocking = all_blocking(inst, state)
        if not blocking:
            return DynamicsRun(True, step - 1, state, None, rises)
        nxt = apply_blocking(state, rng.choice(blocking), inst.min_size)
        rises += potential(inst, nxt) > potential(inst, state)
        if nxt in seen:
            return DynamicsRun(False, step, nxt, [*path[seen[nxt] :], nxt], rises)
        seen[nxt] = len(path)
        path.append(nxt)
        state = nxt
    return DynamicsRun(False, max_steps, state, None, rises)
