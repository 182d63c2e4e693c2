"""Formal (exact, LLM-free) k-level Theory of Mind: the papers' equations as code, and the effective order a
player's actions show."""

from tomlib.tom._effective import (
    EPSILON,
    ORDERS,
    EffectiveOrder,
    EpisodeOrders,
    StepMatch,
    effective_order,
    episode_orders,
    order_choices,
    replay_states,
    step_matches,
    weigh,
)
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
    "EPSILON",
    "MAX_ORDER",
    "ORDERS",
    "TIE_BREAKS",
    "EffectiveOrder",
    "EpisodeOrders",
    "SharedTies",
    "StepMatch",
    "TieBreak",
    "ToMLevel",
    "action_distribution",
    "best_responses",
    "effective_order",
    "episode_orders",
    "joint",
    "order_choices",
    "replay_states",
    "step_matches",
    "tie_stream",
    "tom_action",
    "tom_reasoning",
    "weigh",
]
