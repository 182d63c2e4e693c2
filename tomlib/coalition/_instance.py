"""Belief-action alignment between agents, and the conventions both drafts force on us.

Appendix A of the coalition paper (both drafts) has the agent score how well its belief about another agent
matched that agent's action: a **score** s in [-1, 1], higher = better aligned. Eq. (2), FTM (§6.2) and
Algorithm 1 treat the same quantity as a *misalignment* φ (lower is better; trusted iff φ ≤ ε; re-match iff
φ > ε). We keep the raw score and use one misalignment everywhere: ``φ = (1 - s) / 2`` in [0, 1]
(s = 1 → 0, s = 0 → 0.5, s = -1 → 1). ε is on that scale: ε = 0.25 trusts scores of 0.5 and above.

An agent with no beliefs (ToM-0: it models nobody) has no alignment scores. It is indifferent between any two
coalitions, but prefers being in one to being in none.

Preferences compare means exactly: every score, ability and λ is read as the decimal it prints as (0.85 is 17/20),
the weights φ ∓ λ·α are exact fractions, and ``resolution`` is their common denominator, so the integer weights are
exact and two means that are equal (3/16 and 3/16) compare equal. Every solver and checker compares
cross-multiplied integer sums, so clingo and brute force agree to the last digit. Only when that denominator would
overflow clingo's 32-bit sums is a finer grid than 1/1,000 not possible, and the weights are rounded to the largest
power of ten that fits (``exact`` is then False).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import cached_property
from typing import Literal

import numpy as np

from tomlib.errors import UsageError

AbilitySign = Literal["intent", "printed"]
MAX_AGENTS = 14
"""Largest instance the exact solvers take (coalition objectives scale by lcm(1..n-1), which must fit clingo)."""


class CoalitionInputError(UsageError):
    """An alignment instance that cannot be used (bad scores, sizes or agent names)."""


def misalignment(score: float | np.ndarray) -> float | np.ndarray:
    """φ = (1 - s) / 2: Appendix A's score s in [-1, 1] (higher = aligned) as eq. (2)'s misalignment in [0, 1]."""
    return (1.0 - score) / 2.0


PAIR_ORDERS = ("eq3", "phi")
"""How an agent ranks partners in a NeurIPS matching (``AlignmentInstance.pair_order``)."""


@dataclass(frozen=True)
class AlignmentInstance:
    """Who believes what about whom: raw Appendix A scores, abilities (§5.2), ε, λ and the minimum coalition size.

    ``scores[i][j]`` is agent i's score of its belief about j against j's action; rows of agents without beliefs
    are ignored. The ICLR draft assigns every agent a coalition with |μ(i)| ≥ n - 1 partners; read literally, no
    agent may stay outside (``everyone_in=True``). We allow outsiders by default (``False``): with three agents and
    coalitions of at least two, the literal reading forbids every structure but "all three".

    ``ability_sign="intent"`` makes higher ability *more* preferred (the text's intent: B'_i(S) = B_i(S) - λ·mean α);
    ``"printed"`` is the formula as printed (B_i(S) + λ·mean α, lower preferred), under which able agents are *less*
    wanted.
    """

    names: tuple[str, ...]
    scores: np.ndarray = field(repr=False)
    has_beliefs: tuple[bool, ...]
    ability: tuple[float, ...]
    epsilon: float = 0.25
    lam: float = 1.0
    min_size: int = 2
    ability_sign: AbilitySign = "intent"
    fixed_resolution: int | None = None  # None: exact (see the module docstring); an int: quantize on that grid
    everyone_in: bool = False  # True: every agent in a coalition of ≥ min_size (the ICLR text read literally)
    quota: int = 1  # NeurIPS matchings: the most partners an agent may have (1: pairs; more: its one-to-many μ)
    trusted_blocking: bool = False
    """A blocking coalition must be trusted throughout, φ_ij ≤ ε for every i with beliefs and j in it (Theorem G.2's
    proof, ``coalition-matching-iclr-draft.txt`` l.1379); §4.2's stability (l.159) has no such condition, and "the
    stability conditions ... remain valid even when this constraint is relaxed" (l.161)."""
    pair_order: str = "eq3"
    """How an agent ranks partners in a NeurIPS matching: ``eq3``, the draft's eq. (3), aligned (φ ≤ ε) over not
    aligned and indifferent within each (ours: the complete weak order eq. 3 defines); ``phi``, strictly by φ."""
    blocking_min: int | None = None
    """The fewest members a blocking coalition needs; None: ``min_size``, as every coalition (G.2's |C| ≥ k). §4.2
    read literally asks |C| ≥ n - 1 (l.159), one fewer than a coalition's own minimum."""

    @property
    def blocking_size(self) -> int:
        return self.min_size if self.blocking_min is None else self.blocking_min

    def all_trusted(self, members: Sequence[int]) -> bool:
        """Every member with beliefs trusts every other member (φ ≤ ε): G.2's condition on a blocking coalition."""
        trust = self.trust
        return all(trust[i][j] for i in members if self.has_beliefs[i] for j in members if j != i)

    @property
    def n(self) -> int:
        return len(self.names)

    @cached_property
    def phi(self) -> np.ndarray:
        """Misalignment matrix φ_ij = (1 - s_ij) / 2 (diagonal 0; rows without beliefs 0)."""
        out = misalignment(np.asarray(self.scores, dtype=float))
        np.fill_diagonal(out, 0.0)
        out[~np.asarray(self.has_beliefs)] = 0.0
        return out

    @cached_property
    def exact_weights(self) -> list[list[Fraction]]:
        """w_ij = φ_ij ∓ λ·α_j as exact fractions of the printed decimals (0 on the diagonal and for non-believers)."""
        dec = lambda x: Fraction(repr(float(x)))  # noqa: E731  the decimal a float prints as
        sign = -1 if self.ability_sign == "intent" else 1
        lam, alpha = dec(self.lam), [dec(a) for a in self.ability]
        out = [[Fraction(0)] * self.n for _ in range(self.n)]
        for i in range(self.n):
            if self.has_beliefs[i]:
                for j in range(self.n):
                    if j != i:
                        out[i][j] = self.exact_phi(i, j) + sign * lam * alpha[j]
        return out

    @cached_property
    def _grid(self) -> tuple[int, bool]:
        """(resolution, exact): the weights' common denominator when clingo's sums can hold it, else a power of ten."""
        if self.fixed_resolution is not None:
            return self.fixed_resolution, False
        w = [x for row in self.exact_weights for x in row]
        common = math.lcm(*(x.denominator for x in w)) if w else 1
        biggest = max((abs(x) for x in w), default=Fraction(0)) + 1
        # every clingo term (w·lcm(1..n-1) in the objective, sums of up to n weights in the checks) within 2^31
        cap = int((2**31 - 1) / (float(biggest) * math.lcm(*range(1, max(self.n, 2))) * self.n))
        if common <= cap:
            return common, True
        return 10 ** max(0, int(math.log10(max(cap, 1)))), False

    @property
    def resolution(self) -> int:
        """Integer steps per unit of the weights: their common denominator when ``exact``."""
        return self._grid[0]

    @property
    def exact(self) -> bool:
        """Whether the integer weights are the exact weights (else they are rounded to 1/``resolution``)."""
        return self._grid[1]

    @cached_property
    def weights(self) -> np.ndarray:
        """Integer preference weights w_ij = (φ_ij ∓ λ·α_j) · resolution: B'_i(S) is the mean of w_ij over S."""
        res = self.resolution
        return np.array([[round(x * res) for x in row] for row in self.exact_weights], dtype=np.int64)

    @cached_property
    def weight_rows(self) -> tuple[tuple[int, ...], ...]:
        """:attr:`weights` as rows of Python ints, for the brute-force checks' inner loops."""
        return tuple(tuple(row) for row in self.weights.tolist())

    @cached_property
    def trust(self) -> tuple[tuple[bool, ...], ...]:
        """``trust[i][j]`` is :meth:`trusted` (i, j), computed once (the diagonal is False)."""
        return tuple(tuple(j != i and self.trusted(i, j) for j in range(self.n)) for i in range(self.n))

    @cached_property
    def _exact_phis(self) -> dict[tuple[int, int], Fraction]:
        return {}  # (i, j) -> φ_ij, filled as asked (a matrix of Fractions costs more than the checks that read it)

    def exact_phi(self, i: int, j: int) -> Fraction:
        """φ_ij = (1 - s_ij)/2 of the printed decimal score, exactly."""
        known = self._exact_phis
        phi = known.get((i, j))
        if phi is None:
            phi = known[i, j] = (1 - Fraction(repr(float(self.scores[i, j])))) / 2
        return phi

    @cached_property
    def exact_epsilon(self) -> Fraction:
        """ε as the decimal it prints as."""
        return Fraction(repr(float(self.epsilon)))

    def trusted(self, i: int, j: int) -> bool:
        """j is a trusted member for i (FTM, §6.2): φ_ij ≤ ε, compared exactly."""
        return bool(self.has_beliefs[i]) and self.exact_phi(i, j) <= self.exact_epsilon

    def with_scores(self, scores: Sequence[Sequence[float]] | np.ndarray) -> AlignmentInstance:
        """The same agents and parameters with new scores (one round of Algorithm 1)."""
        arr = _check_scores(scores, self.n, self.has_beliefs)
        return replace(self, scores=arr)

    def index(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            raise CoalitionInputError(f"Unknown agent '{name}'; the agents are {', '.join(self.names)}.") from None


def _check_scores(scores: Sequence[Sequence[float]] | np.ndarray, n: int, has_beliefs: Sequence[bool]) -> np.ndarray:
    arr = np.array(scores, dtype=float)
    if arr.shape != (n, n):
        raise CoalitionInputError(f"Scores must be an {n}×{n} matrix (one row per agent); got shape {arr.shape}.")
    rows = [i for i in range(n) if has_beliefs[i]]
    off = ~np.eye(n, dtype=bool)
    sub = arr[rows][:, :][off[rows]] if rows else np.array([])
    if np.isnan(sub).any():
        raise CoalitionInputError(
            "Alignment scores contain NaN; give every agent with beliefs a score for every other agent, or mark "
            "the agent as having no beliefs (ToM-0)."
        )
    if ((sub < -1) | (sub > 1)).any():
        bad = sub[(sub < -1) | (sub > 1)][0]
        raise CoalitionInputError(
            f"Alignment score {bad:g} is outside [-1, 1], the range of Appendix A's self-evaluation; clip or "
            "rescale the scores."
        )
    return np.nan_to_num(arr, nan=0.0)


def make_instance(
    scores: Sequence[Sequence[float | None]] | Mapping[str, Mapping[str, float]] | np.ndarray,
    *,
    names: Sequence[str] | None = None,
    ability: Mapping[str, float] | Sequence[float] | None = None,
    no_beliefs: Sequence[str] = (),
    epsilon: float = 0.25,
    lam: float = 1.0,
    min_size: int | None = None,
    ability_sign: AbilitySign = "intent",
    resolution: int | None = None,
    everyone_in: bool = False,
    quota: int = 1,
    trusted_blocking: bool = False,
    blocking_size: int | None = None,
    pair_order: str = "eq3",
) -> AlignmentInstance:
    """Build and check an alignment instance: Appendix A's scores, §5.2's abilities and the parameters of eq. (2),
    FTM (§6.2) and the stability conditions (§4.2), each read as the module docstring says.

    Args:
        scores: Appendix A's belief-action alignment scores s_ij in [-1, 1]: a matrix (one row per agent; ``None`` or
            NaN where there is none), or ``{believer: {other: score}}`` (agents missing as believers have no beliefs).
        names: the agents' names in the matrix's order; default ``a0``, ``a1``, ... (a mapping's keys, sorted).
        ability: §5.2's ability α_j per agent, by name or in order; default 0 for every agent.
        no_beliefs: agents that model nobody (ToM-0): their rows are ignored and they are indifferent between
            coalitions.
        epsilon: ε, the misalignment threshold on φ = (1 - s)/2 (eq. 2, FTM §6.2): trusted iff φ ≤ ε; 0.25 trusts
            scores of 0.5 and above.
        lam: λ, the weight of the mean ability in B'_i(S) (§5.2); 1 weighs ability as much as misalignment.
        min_size: the fewest members of a coalition; default ⌈n/2⌉ (at least 2), the ICLR draft's setting.
        ability_sign: ``"intent"`` prefers able partners (B_i(S) - λ·mean α, the text's intent); ``"printed"`` is the
            formula as printed (B_i(S) + λ·mean α).
        resolution: integer steps per unit of the weights; default None: exact (their common denominator).
        everyone_in: every agent must be in a coalition of at least ``min_size`` (the ICLR text read literally);
            default False allows outsiders.
        quota: the most partners an agent may have in a NeurIPS matching: 1 gives pairs, more its one-to-many
            correspondence (§4.2).
        trusted_blocking: a blocking coalition must be trusted throughout (Theorem G.2's proof); default False, as
            §4.2's stability.
        blocking_size: the fewest members of a blocking coalition; default ``min_size`` (G.2's |C| ≥ k).
        pair_order: how an agent ranks partners in a NeurIPS matching: ``"eq3"`` (the draft's eq. 3) or ``"phi"``
            (strictly by φ).
    """
    agents, mat, has = _read_scores(scores, names, no_beliefs)
    _check_agents(agents, no_beliefs)
    n = len(agents)
    arr = _check_scores(mat, n, has)
    size = _check_parameters(
        n, min_size=min_size, pair_order=pair_order, blocking_size=blocking_size, quota=quota, epsilon=epsilon
    )
    return AlignmentInstance(
        names=tuple(agents),
        scores=arr,
        has_beliefs=has,
        ability=_abilities(ability, agents),
        epsilon=float(epsilon),
        lam=float(lam),
        min_size=size,
        ability_sign=ability_sign,
        fixed_resolution=resolution,
        everyone_in=everyone_in,
        quota=quota,
        trusted_blocking=bool(trusted_blocking),
        pair_order=pair_order,
        blocking_min=None if blocking_size is None else int(blocking_size),
    )


def _read_scores(
    scores: Sequence[Sequence[float | None]] | Mapping[str, Mapping[str, float]] | np.ndarray,
    names: Sequence[str] | None,
    no_beliefs: Sequence[str],
) -> tuple[list[str], np.ndarray, tuple[bool, ...]]:
    """(agents, score matrix with NaN where none was given, whether each agent has beliefs) of Appendix A's scores
    given as a matrix or as ``{believer: {other: score}}``."""
    if isinstance(scores, Mapping):
        agents = list(names) if names else sorted({*scores, *(o for row in scores.values() for o in row)})
        n = len(agents)
        mat = np.full((n, n), np.nan)
        for a, row in scores.items():
            for b, s in row.items():
                for who in (a, b):
                    if who not in agents:
                        raise CoalitionInputError(f"Unknown agent '{who}' in the scores; the agents are {agents}.")
                mat[agents.index(a), agents.index(b)] = s
        believers = {a for a, row in scores.items() if row}
        has = tuple(a in believers and a not in no_beliefs for a in agents)
    else:
        mat = np.array([[np.nan if v is None else v for v in row] for row in scores], dtype=float)
        n = mat.shape[0] if mat.ndim == 2 else 0
        agents = list(names) if names else [f"a{i}" for i in range(n)]
        if len(agents) != n:
            raise CoalitionInputError(f"{len(agents)} names for {n} rows of scores.")
        has = tuple(
            name not in no_beliefs and not np.isnan(np.delete(mat[i], i)).all() for i, name in enumerate(agents)
        )
    return agents, mat, has


def _check_agents(agents: list[str], no_beliefs: Sequence[str]) -> None:
    """Known names in ``no_beliefs``, unique names, and between 2 and :data:`MAX_AGENTS` agents."""
    for who in no_beliefs:
        if who not in agents:
            raise CoalitionInputError(f"Unknown agent '{who}' in no_beliefs; the agents are {agents}.")
    n = len(agents)
    if len(set(agents)) != n:
        raise CoalitionInputError("Agent names must be unique.")
    if n < 2:
        raise CoalitionInputError(f"A coalition needs at least 2 agents; got {n}.")
    if n > MAX_AGENTS:
        raise CoalitionInputError(f"The exact solvers take at most {MAX_AGENTS} agents; got {n}.")


def _check_parameters(
    n: int, *, min_size: int | None, pair_order: str, blocking_size: int | None, quota: int, epsilon: float
) -> int:
    """The coalition size (⌈n/2⌉ unless ``min_size`` is given), once the sizes, the pair order, the quota (§4.2) and
    ε (eq. 2) are checked for ``n`` agents."""
    size = max(2, math.ceil(n / 2)) if min_size is None else int(min_size)
    if not 2 <= size <= n:
        raise CoalitionInputError(
            f"min_size must be between 2 and the number of agents ({n}); got {min_size}. The ICLR draft uses ⌈n/2⌉."
        )
    if pair_order not in PAIR_ORDERS:
        raise CoalitionInputError(f"pair_order must be one of {', '.join(PAIR_ORDERS)}; got {pair_order!r}.")
    if blocking_size is not None and not 2 <= int(blocking_size) <= n:
        raise CoalitionInputError(
            f"blocking_size must be between 2 and the number of agents ({n}); got {blocking_size}."
        )
    if not isinstance(quota, int) or not 1 <= quota <= n - 1:
        raise CoalitionInputError(
            f"quota is the most partners an agent may have: a whole number from 1 (pairs) to {n - 1}; got {quota!r}."
        )
    if not 0 <= epsilon <= 1 or math.isnan(epsilon):
        raise CoalitionInputError(f"epsilon is a misalignment threshold in [0, 1]; got {epsilon}.")
    return size


def _abilities(ability: Mapping[str, float] | Sequence[float] | None, agents: list[str]) -> tuple[float, ...]:
    """§5.2's ability α per agent, in the agents' order (0 where none is given), checked finite."""
    n = len(agents)
    if isinstance(ability, Mapping):
        unknown = set(ability) - set(agents)
        if unknown:
            raise CoalitionInputError(f"Unknown agent(s) {sorted(unknown)} in ability; the agents are {agents}.")
        alpha = tuple(float(ability.get(a, 0.0)) for a in agents)
    else:
        alpha = tuple(float(x) for x in ability) if ability is not None else (0.0,) * n
    if len(alpha) != n or any(math.isnan(a) for a in alpha):
        raise CoalitionInputError(f"ability needs one finite number per agent ({n}).")
    return alpha
