"""Testing Appendix G's claims on random instances: Theorem G.1 (improvement dynamics converge, because the
potential Φ = Σ_i B'_i(μ(i)) falls at every re-matching) and Theorem G.2 (the limit is stable, so a stable
structure exists). A structure that repeats along the dynamics, or an instance with no stable structure at all,
is a counterexample; we keep them rather than hide them."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import numpy as np

from tomlib.coalition._asp import solve_coalitions
from tomlib.coalition._core import improvement_dynamics
from tomlib.coalition._instance import AlignmentInstance, make_instance
from tomlib.coalition._many import solve_many

BLOCKING_READINGS: dict[str, dict[str, Any]] = {
    "G.2": {"trusted_blocking": True, "literal_size": False},
    "§4.2": {"trusted_blocking": False, "literal_size": False},
    "§4.2, |C| ≥ n - 1": {"trusted_blocking": False, "literal_size": True},
}
"""What may block, as each part of the text reads: Theorem G.2's proof (a blocking coalition of at least the minimum
size, trusted throughout: φ ≤ ε for every pair in it, l.1379); §4.2's stability (l.159: no ε condition; ε only
"filtering out poorly aligned agent pairs" for efficiency, l.161); and §4.2 read literally, |C| ≥ n - 1 with n the
coalitions' minimum size."""


def random_instance(
    rng: np.random.Generator,
    n: int,
    *,
    min_size: int | None = None,
    decimals: int = 2,
    trusted_blocking: bool = False,
    literal_size: bool = False,
) -> AlignmentInstance:
    """Uniform scores in [-1, 1] for every ordered pair (everyone has beliefs), no abilities; what may block per
    :data:`BLOCKING_READINGS`."""
    scores = rng.uniform(-1, 1, (n, n)).round(decimals)
    inst = make_instance(scores, min_size=min_size, epsilon=0.25, trusted_blocking=trusted_blocking)
    if literal_size:
        inst = make_instance(
            scores,
            min_size=min_size,
            epsilon=0.25,
            trusted_blocking=trusted_blocking,
            blocking_size=max(2, inst.min_size - 1),
        )
    return inst


@dataclass
class GCheck:
    n: int
    min_size: int
    blocking: str
    trial: int
    stable_exists: bool
    converged: bool
    steps: int
    cycle_length: int | None
    potential_rises: int
    scores: list[list[float]]

    def row(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "scores"}


def check_appendix_g(
    sizes: tuple[tuple[int, int | None], ...] = ((4, 2), (5, 2), (5, None), (6, 2), (6, None), (7, None)),
    trials: int = 100,
    seed: int = 0,
    max_steps: int = 300,
    blocking: str = "G.2",
) -> list[GCheck]:
    """For each (n, min_size) — None is ⌈n/2⌉ — ``trials`` random instances: does a stable structure exist
    (clingo, exact) and do blocking-coalition dynamics from "everyone outside" converge? ``blocking``: what may block
    (:data:`BLOCKING_READINGS`); every reading sees the same instances and the same dynamics' draws."""
    if blocking not in BLOCKING_READINGS:
        raise ValueError(f"blocking must be one of {', '.join(BLOCKING_READINGS)}; got {blocking!r}")
    rng = np.random.default_rng(seed)
    drawn = [
        (random_instance(rng, n, min_size=m, **BLOCKING_READINGS[blocking]), n, blocking, t, seed, max_steps)
        for n, m in sizes
        for t in range(trials)
    ]
    return solve_many(_check, drawn)  # drawn first: the same instances however many processes solve them


def _check(job: tuple[AlignmentInstance, int, str, int, int, int]) -> GCheck:
    """One drawn instance of :func:`check_appendix_g`: its exact answer and its dynamics (their own seeded draws)."""
    inst, n, blocking, t, seed, max_steps = job
    sol = solve_coalitions(inst, optimize=False)
    run = improvement_dynamics(inst, rng=random.Random(seed * 1_000_003 + t), max_steps=max_steps)
    return GCheck(
        n,
        inst.min_size,
        blocking,
        t,
        sol.stable_exists,
        run.converged,
        run.steps,
        len(run.cycle) - 1 if run.cycle else None,
        run.potential_rises,
        inst.scores.tolist(),
    )
