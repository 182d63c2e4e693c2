"""The NeurIPS draft's matchings (§4.2, eq. 2-3): pairs, or its one-to-many μ, checked by brute force.

Agent i splits the others into *aligned* (φ_ij ≤ ε) and not, and prefers j to m iff j is aligned and m is not (eq.
3), indifferent within each class: the complete weak order eq. 3 defines (``pair_order="eq3"``). With
``pair_order="phi"`` it ranks partners strictly by φ instead, a reading that leaves far fewer stable matchings. With
abilities (§5.2 of that draft) i also prefers j to m when their misalignments are equal and α_j > α_m. Being
unmatched is worse than any partner (``unaligned_acceptable=True``, the draft's "robust even when all pairs exceed
ε") or, with ``unaligned_acceptable=False``, no better than an unaligned one. Agents without beliefs are indifferent
between partners. A matching is stable when no pair (i, j) both strictly prefer each other to their partners (eq.
2): weak stability, the standard notion with ties.

§4.2 defines μ as "a one-to-many correspondence that assigns each agent to at least one other agent or leaves them
unmatched", and eq. 2 compares a partner j with the set μ(i). With ``inst.quota`` = q > 1 an agent may hold up to q
partners, and i prefers j to μ(i) when it has a free place and would take j over being alone, or when it prefers j to
one of its partners (preferences over sets responsive to those over individuals, as in the many-to-many matchings the
draft cites [1]; Irving and Scott's stable fixtures). q = 1 is the pairs. The draft gives no q: it is ours to set.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

from tomlib.coalition._instance import AlignmentInstance

Pairs = frozenset[tuple[int, int]]


def pairs_of(matching: Sequence[Sequence[int]]) -> Pairs:
    return frozenset(tuple(sorted(p)) for p in matching)  # type: ignore[misc]


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
    if inst.pair_order == "phi":  # a strict order by misalignment (ties only where φ is equal)
        if inst.exact_phi(i, j) != inst.exact_phi(i, m):
            return inst.exact_phi(i, j) < inst.exact_phi(i, m)
    elif aligned(inst, i, j) and not aligned(inst, i, m):
        return True
    if abilities:  # the draft compares the raw distances here, not the ability-weighted ones: exactly
        return inst.exact_phi(i, j) == inst.exact_phi(i, m) and inst.ability[j] > inst.ability[m]
    return False


def partners(pairs: Pairs, i: int) -> list[int]:
    """μ(i): every partner of i."""
    return [b if a == i else a for a, b in pairs if i in (a, b)]


def wants(inst: AlignmentInstance, i: int, j: int, pairs: Pairs, **kw: bool) -> bool:
    """j ≻_i μ(i) (eq. 2): i has a free place (``inst.quota``) and would take j over being alone, or prefers j to one
    of its partners."""
    mine = partners(pairs, i)
    if len(mine) < inst.quota and pair_prefers(inst, i, j, None, **kw):
        return True
    return any(pair_prefers(inst, i, j, m, **kw) for m in mine)  # a free place does not stop i trading m for j


def find_blocking_pair(inst: AlignmentInstance, pairs: Pairs, **kw: bool) -> tuple[int, int] | None:
    """A pair that blocks ``pairs``, or None when it is (weakly) stable."""
    for i, j in itertools.combinations(range(inst.n), 2):
        if (i, j) not in pairs and wants(inst, i, j, pairs, **kw) and wants(inst, j, i, pairs, **kw):
            return (i, j)
    return None


def enumerate_matchings(n: int, quota: int = 1) -> Iterator[Pairs]:
    """Every matching on n agents in which nobody has more than ``quota`` partners (agents may stay unmatched)."""
    edges = list(itertools.combinations(range(n), 2))

    def rec(k: int, degree: list[int], chosen: list[tuple[int, int]]) -> Iterator[frozenset[tuple[int, int]]]:
        if k == len(edges):
            yield frozenset(chosen)
            return
        yield from rec(k + 1, degree, chosen)
        a, b = edges[k]
        if degree[a] < quota and degree[b] < quota:
            degree[a] += 1
            degree[b] += 1
            yield from rec(k + 1, degree, [*chosen, edges[k]])
            degree[a] -= 1
            degree[b] -= 1

    yield from rec(0, [0] * n, [])


def pair_objective(inst: AlignmentInstance, pairs: Pairs) -> tuple[int, int, int]:
    """Lexicographic, lower is better: (unmatched agents with beliefs, total weight w felt by matched agents,
    unmatched agents)."""
    w = inst.weights
    total = sum(int(w[a, b]) + int(w[b, a]) for a, b in pairs)
    matched = {i for p in pairs for i in p}
    alone = [i for i in range(inst.n) if i not in matched]
    return sum(inst.has_beliefs[i] for i in alone), total, len(alone)


def brute_force_stable_pairs(inst: AlignmentInstance, **kw: bool) -> list[Pairs]:
    """Every weakly stable matching (each agent at most ``inst.quota`` partners), by enumeration."""
    return [p for p in enumerate_matchings(inst.n, inst.quota) if find_blocking_pair(inst, p, **kw) is None]


def matching_package_pairs(inst: AlignmentInstance) -> Pairs | None:
    """Irving's algorithm from the ``matching`` package on strict lists made by breaking ties (aligned first, then
    lower misalignment, higher ability, index). Any matching stable for the strict lists is weakly stable for the
    dichotomous ones; None when the package finds no complete stable matching (or n is odd: it needs everyone
    matched), and for quotas above 1 (the package has no one-to-many roommates)."""
    if inst.n % 2 or inst.quota != 1:
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
