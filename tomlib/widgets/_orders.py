"""Which formal orders each player's action matched, step by step, for the explorer's adaptive-ToM episodes.

The episode is replayed from its log (:func:`tomlib.trace.joint_actions`) on the game its first ``env_state`` names,
and each action is set against the choices of a formal ToM-0, ToM-1 and ToM-2 player in that seat
(:func:`tomlib.tom.step_matches`). Runs of other experiments, games without exact values, and episodes whose steps
were not logged show nothing.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from tomlib.envs import IllegalAction, NoExactModel, shared_game
from tomlib.tom import ORDERS, StepMatch, step_matches
from tomlib.trace import joint_actions, logged_game

EXPERIMENT = "adaptive_tom"
SEATS = ("player1", "player2")


def order_matches(
    events: pd.DataFrame, experiment: str, condition: str, episode: int, seed: int | None = None
) -> dict[tuple[int, str], StepMatch] | None:
    """Per (step, seat name), the orders whose choices held the action and whether the orders disagreed there; None
    when nothing is shown (not an adaptive-ToM run, a game without exact values, steps not logged).

    Args:
        events: the episode's events (a frame as :func:`tomlib.trace.load_runs` gives).
        experiment: the run's experiment (``adaptive_tom.table1``).
        condition: the episode's condition.
        episode: the episode's number.
        seed: the run's seed (None: the log's, else none; no adaptive-ToM task's start depends on it).
    """
    if experiment.split(".")[0] != EXPERIMENT:
        return None
    try:
        spec, logged_seed = logged_game(events, condition, episode)
        if spec is None:
            return None
        game = shared_game(spec)
        if not game.has_exact_values:
            return None
        joints = joint_actions(events, condition, episode)
        seed = seed if seed is not None else logged_seed
        out: dict[tuple[int, str], StepMatch] = {}
        for player, seat in enumerate(SEATS):
            for step, match in enumerate(step_matches(game, seed, joints, player, ORDERS)):
                out[(step, seat)] = match
        return out
    except (NoExactModel, IllegalAction, KeyError, ValueError, OSError):  # no exact model, a log that does not replay
        return None


def matched_text(orders: Any, disagree: Any) -> str:
    """``matched: ToM-1, ToM-2 · orders disagree``, ``… · all orders agree``, or ``matched: no order's choice · …``."""
    names = ", ".join(f"ToM-{k}" for k in orders) or "no order's choice"
    return f"matched: {names} · {'orders disagree' if disagree else 'all orders agree'}"
