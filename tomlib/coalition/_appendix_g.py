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


def random_instance(
    rng: np.random.Generator, n: int, *, min_size: int | None = None, decimals: int = 2
) -> AlignmentInstance:
    """Uniform scores in [-1, 1] for every ordered pair (everyone has beliefs), no abilities."""
    return make_instance(rng.uniform(-1, 1, (n, n)).round(decimals), min_size=min_size, epsilon=0.25)


@dataclass
class GCheck:
    n: int
    min_size: int
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
) -> list[GCheck]:
    """For each (n, min_size) — None is ⌈n/2⌉ — ``trials`` random instances: does a stable structure exist
    (clingo, exact) and do blocking-coalition dynamics from "everyone outside" converge?"""
    rng = np.random.default_rng(seed)
    out = []
    for n, m in sizes:
        for t in range(trials):
            inst = random_instance(rng, n, min_size=m)
            sol = solve_coalitions(inst, optimize=False)
            run = improvement_dynamics(inst, rng=random.Random(seed * 1_000_003 + t), max_steps=max_steps)
            out.append(
                GCheck(
                    n,
                    inst.min_size,
                    t,
                    sol.stable_exists,
                    run.converged,
                    run.steps,
                    len(run.cycle) - 1 if run.cycle else None,
                    run.potential_rises,
                    inst.scores.tolist(),
                )
            )
    return out
