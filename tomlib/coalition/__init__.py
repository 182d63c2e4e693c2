"""The coalition paper's mechanism (``coalition-matching-iclr-draft.txt`` and ``...-neurips-draft.txt``): belief-
action alignment, preferences, exact stable coalitions (ICLR) and pairs (NeurIPS) with clingo, independent
brute-force checkers, FTM, Algorithm 1's rounds with coalition lifetime, the Appendix G check, and Appendix A's cosine
alignment for agents scored without a self-evaluation.

>>> inst = make_instance([[None, 0.7, 0.9, -0.2], ...], names=["PM", "E1", "E2", "E3"])  # doctest: +SKIP
>>> solve_coalitions(inst).structure.label(inst.names)                                     # doctest: +SKIP
"""

from tomlib.coalition._appendix_g import BLOCKING_READINGS, TRUST, check_appendix_g, random_instance
from tomlib.coalition._asp import Solution, solve_coalitions, solve_pairs
from tomlib.coalition._core import (
    CoalitionStructure,
    DynamicsRun,
    all_blocking,
    apply_blocking,
    brute_force_stable,
    enumerate_structures,
    find_blocking,
    improvement_dynamics,
    objective,
    potential,
    selected_team,
    strictly_prefers,
    value,
)
from tomlib.coalition._cosine import EMBEDDINGS, Embedding, cosine_alignment
from tomlib.coalition._instance import (
    MAX_AGENTS,
    PAIR_ORDERS,
    AlignmentInstance,
    CoalitionInputError,
    make_instance,
    misalignment,
)
from tomlib.coalition._many import solve_many
from tomlib.coalition._pairs import (
    Pairs,
    brute_force_stable_pairs,
    enumerate_matchings,
    find_blocking_pair,
    matching_package_pairs,
    pair_objective,
    pair_prefers,
    pairs_of,
    partners,
)
from tomlib.coalition._rounds import INITIALS, Algorithm1, Algorithm1Run, RoundRecord, ftm, record_round, run_algorithm1
from tomlib.coalition._select import (
    DEFAULT_SELECTION,
    SELECTIONS,
    Mechanism,
    Outcome,
    Selection,
    check_selection,
    choose,
    stable_outcomes,
    team_shares,
)

__all__ = [
    "BLOCKING_READINGS",
    "DEFAULT_SELECTION",
    "EMBEDDINGS",
    "INITIALS",
    "MAX_AGENTS",
    "PAIR_ORDERS",
    "SELECTIONS",
    "TRUST",
    "Algorithm1",
    "Algorithm1Run",
    "AlignmentInstance",
    "CoalitionInputError",
    "CoalitionStructure",
    "DynamicsRun",
    "Embedding",
    "Mechanism",
    "Outcome",
    "Pairs",
    "RoundRecord",
    "Selection",
    "Solution",
    "all_blocking",
    "apply_blocking",
    "brute_force_stable",
    "brute_force_stable_pairs",
    "check_appendix_g",
    "check_selection",
    "choose",
    "cosine_alignment",
    "enumerate_matchings",
    "enumerate_structures",
    "find_blocking",
    "find_blocking_pair",
    "ftm",
    "improvement_dynamics",
    "make_instance",
    "matching_package_pairs",
    "misalignment",
    "objective",
    "pair_objective",
    "pair_prefers",
    "pairs_of",
    "partners",
    "potential",
    "random_instance",
    "record_round",
    "run_algorithm1",
    "selected_team",
    "solve_coalitions",
    "solve_many",
    "solve_pairs",
    "stable_outcomes",
    "strictly_prefers",
    "team_shares",
    "value",
]
