"""Formal (exact, LLM-free) k-level Theory of Mind: the papers' equations as code."""

from tomlib.tom._formal import (
    MAX_ORDER,
    TIE_BREAKS,
    SharedTies,
    TieBreak,
    ToMLevel,
    action_distribution,
    best_responses,
    joint,
    tie_stream,
    tom_action,
    tom_reasoning,
)

__all__ = [
    "MAX_ORDER",
    "TIE_BREAKS",
    "SharedTies",
    "TieBreak",
    "ToMLevel",
    "action_distribution",
    "best_responses",
    "joint",
    "tie_stream",
    "tom_action",
    "tom_reasoning",
]
