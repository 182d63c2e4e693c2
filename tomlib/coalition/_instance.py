"""Belief-action alignment between agents, and the conventions both drafts force on us.

Appendix A of the coalition paper (both drafts) has the agent score how well its belief about another agent
matched that agent's action: a **score** s in [-1, 1], higher = better aligned. Eq. (2), FTM (§6.2) and
Algorithm 1 treat the same quantity as a *misalignment* φ (lower is better; trusted iff φ ≤ ε; re-match iff
φ > ε). We keep the raw score and use one misalignment everywhere: ``φ = (1 - s) / 2`` in [0, 1]
(s = 1 → 0, s = 0 → 0.5, s = -1 → 1). ε is on that scale: ε = 0.25 trusts scores of 0.5 and above.

An agent with no beliefs (ToM-0: it models nobody) has no alignment scores. It is indifferent between any two
coalitions, but prefers being in one to being in none.

Preferences compare means exactly: misalignments are quantized to integers (``resolution`` steps per unit,
1,000 by default), and every solver and checker compares cross-multiplied integer sums, so clingo and brute
force agree to the last digit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
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


@dataclass(frozen=True)
class AlignmentInstance:
    """Who believes what about whom: raw Appendix A scores, abilities (§5.2), ε, λ and the minimum coalition size.

    ``scores[i][j]`` is agent i's score of its belief about j against j's action; rows of agents without beliefs
    are ignored. ``ability_sign="intent"`` makes higher ability *more* preferred (the text's intent:
    B'_i(S) = B_i(S) - λ·mean α); ``"printed"`` is the formula as printed (B_i(S) + λ·mean α, lower preferred),
    under which able agents are *less* wanted.
    """

    names: tuple[str, ...]
    scores: np.ndarray = field(repr=False)
    has_beliefs: tuple[bool, ...]
    ability: tuple[float, ...]
    epsilon: float = 0.25
    lam: float = 1.0
    min_size: int = 2
    ability_sign: AbilitySign = "intent"
    resolution: int = 1000

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
    def weights(self) -> np.ndarray:
        """Integer preference weights w_ij (quantized φ_ij ∓ λ·α_j): B'_i(S) is the mean of w_ij over j in S."""
        sign = -1.0 if self.ability_sign == "intent" else 1.0
        w = self.phi + sign * self.lam * np.asarray(self.ability, dtype=float)[None, :]
        w[~np.asarray(self.has_beliefs)] = 0.0
        np.fill_diagonal(w, 0.0)
        return np.rint(w * self.resolution).astype(np.int64)

    def trusted(self, i: int, j: int) -> bool:
        """j is a trusted member for i (FTM, §6.2): φ_ij ≤ ε."""
        return bool(self.has_beliefs[i]) and float(self.phi[i, j]) <= self.epsilon + 1e-12

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
    resolution: int = 1000,
) -> AlignmentInstance:
    """Build and check an instance. ``scores`` is a matrix, or ``{believer: {other: score}}`` (agents missing as
    believers have no beliefs). ``min_size`` defaults to ⌈n/2⌉ (the ICLR draft's setting)."""
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
    arr = _check_scores(mat, n, has)
    size = max(2, math.ceil(n / 2)) if min_size is None else int(min_size)
    if not 2 <= size <= n:
        raise CoalitionInputError(
            f"min_size must be between 2 and the number of agents ({n}); got {min_size}. The ICLR draft uses ⌈n/2⌉."
        )
    if not 0 <= epsilon <= 1 or math.isnan(epsilon):
        raise CoalitionInputError(f"epsilon is a misalignment threshold in [0, 1]; got {epsilon}.")
    if isinstance(ability, Mapping):
        unknown = set(ability) - set(agents)
        if unknown:
            raise CoalitionInputError(f"Unknown agent(s) {sorted(unknown)} in ability; the agents are {agents}.")
        alpha = tuple(float(ability.get(a, 0.0)) for a in agents)
    else:
        alpha = tuple(float(x) for x in ability) if ability is not None else (0.0,) * n
    if len(alpha) != n or any(math.isnan(a) for a in alpha):
        raise CoalitionInputError(f"ability needs one finite number per agent ({n}).")
    return AlignmentInstance(
        names=tuple(agents),
        scores=arr,
        has_beliefs=has,
        ability=alpha,
        epsilon=float(epsilon),
        lam=float(lam),
        min_size=size,
        ability_sign=ability_sign,
        resolution=resolution,
    )
