"""The NeurIPS draft's pairs (eq. 2-3): stable roommates with dichotomous preferences, checked by brute force.

Agent i splits the others into *aligned* (φ_ij ≤ ε) and not, and prefers j to m iff j is aligned and m is not
(eq. 3). With abilities (§5.2 of that draft) i also prefers j to m when their misalignments are equal and
α_j > α_m. Being unmatched is worse than any partner (``unaligned_acceptable=True``, the draft's "robust even
when all pairs exceed ε") or, with ``unaligned_acceptable=False``, no better than an unaligned one. Agents
without beliefs are indifferent between partners. A matching is stable when no pair (i, j) both strictly prefer
each other to their partners (eq. 2): weak stability, the standard notion with ties.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

from tomlib.coalition._instance import AlignmentInstance

Pairs = frozenset[tuple[int, int]]


def pairs_of(matching: Sequence[Sequence[int]]) -> Pairs:
    return frozenset(tuple(sorted(p)) for p in matching)  # type: ignore[misc]


def partner(pairs: Pairs, i: int) -> int | None:
    return next((b if a == i else a for a, b in pairs if i in (a, b)), None)


def aligned(inst: AlignmentInstance, i: int, j: int) -> bool:
    return inst.trusted(i, j)


def pair_prefers(
    inst: AlignmentInstance, i: int, j: int, m: int | None, *, unaligned_acceptable: bool = True, abilities: bool = True
) -> bool:
    """j ≻_i m (m None: unmatched), by eq. (3) plus the ability tie-break."""
    if m == j:
        return False
    if m is None:
        return unaligned_acceptable or not inst.has_beliefs[i] or aligned(inst, i, j)
    if not inst.has_beliefs[i]:
        return False
    if aligned(inst, i, j) and not aligned(inst, i, m):
        return True
    if abilities:  # the draft compares the raw distances here, not the ability-weighted ones: exactly
        return inst.exact_phi(i, j) == inst.exact_phi(i, m) and inst.ability[j] > inst.ability[m]
    return False


def find_blocking_pair(inst: AlignmentInstance, pairs: Pairs, **kw: bool) -> tuple[int, int] | None:
    """A pair that blocks ``pairs``, or None when it is (weakly) stable."""
    for i, j in itertools.combinations(range(inst.n), 2):
        if (i, j) in pairs:
            continue
        if pair_prefers(inst, i, j, partner(pairs, i), **kw) and pair_prefers(inst, j, i, partner(pairs, j), **kw):
            return (i, j)
    return None


def enumerate_matchings(n: int) -> Iterator[Pairs]:
    """Every matching (agents may stay unmatched) on n agents."""

    def rec(rest: tuple[int, ...]) -> Iterator[list[tuple[int, int]]]:
        if not rest:
            yield []
            return
        first, others = rest[0], rest[1:]
        yield from rec(others)
        for k, mate in enumerate(others):
            for tail in rec(others[:k] + others[k + 1 :]):
                yield [(first, mate), *tail]

    for m in rec(tuple(range(n))):
        yield frozenset(m)


def pair_objective(inst: AlignmentInstance, pairs: Pairs) -> tuple[int, int, int]:
    """Lexicographic, lower is better: (unmatched agents with beliefs, total weight w felt by matched agents,
    unmatched agents)."""
    w = inst.weights
    total = sum(int(w[a, b]) + int(w[b, a]) for a, b in pairs)
    matched = {i for p in pairs for i in p}
    alone = [i for i in range(inst.n) if i not in matched]
    return sum(inst.has_beliefs[i] for i in alone), total, len(alone)


def brute_force_stable_pairs(inst: AlignmentInstance, **kw: bool) -> list[Pairs]:
    return [p for p in enumerate_matchings(inst.n) if find_blocking_pair(inst, p, **kw) is None]


def matching_package_pairs(inst: AlignmentInstance) -> Pairs | None:
    """Irving's algorithm from the ``matching`` package on strict lists made by breaking ties (aligned first, then
    lower misalignment, higher ability, index). Any matching stable for the strict lists is weakly stable for the
    dichotomous ones; None when the package finds no complete stable matching (or n is odd: it needs everyone
    matched)."""
    if inst.n % 2:
        return None
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from matching.games import StableRoommates

        prefs = {
            i: sorted(
                (j for j in range(inst.n) if j != i),
                key=lambda j, i=i: (
                    not aligned(inst, i, j),
                    inst.exact_phi(i, j),
                    -inst.ability[j],
                    j,
                ),
            )
            for i in range(inst.n)
        }
        game = StableRoommates.create_from_dictionary(prefs)
        result = game.solve()
    out = []
    for a, b in result.items():
        if b is None:
            return None
        out.append(tuple(sorted((a.name, b.name))))
    return frozenset(out)  # type: ignore[arg-type]
