"""What DyLAN's two networks share (multiple choice, :mod:`._dylan`; code, :mod:`._dylan_code`): the steps, the
agents' ``[[...]]`` ratings of each other, the ranker's pick, and the Agent Importance Score propagated back through
the ratings (Liu et al., "Dynamic LLM-Agent Network"; the coalition paper's Appendix F and Table 7).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Protocol

STEPS = 3
_RATINGS = re.compile(r"\[\[\s*([0-9.,\s]+?)\s*\]\]")


class GraphNode(Protocol):
    """One agent's reply at one step: whom it rated (normalised weights) and the importance it earned."""

    step: int
    agent: str
    weights: dict[str, float]
    importance: float


IMPORTANCE_SCALES: dict[str, str] = {
    "per-step": "a role's importance summed over the steps and divided by their number (3): DyLAN's own sum over its "
    "nodes, on a scale where a question that ran every step gives the roles 1 in all and one the network stopped early "
    "on consensus gives less (the default)",
    "per-task": "normalised to sum 1 over the roles on every question, however many steps ran",
}
"""How a role's Agent Importance Score is put on the tables' scale (the coalition paper uses "the Important Scores
defined in the DyLAN framework", ICLR l.1226, whose code sums a role's nodes over the steps and never normalises per
question; its Table 7 rows sum to 1.0000 without ToM and 0.9001 with it)."""


def role_sums(nodes: Sequence[GraphNode], roles: Sequence[str]) -> dict[str, float]:
    """Each role's nodes' importance summed over the steps (DyLAN's raw score of a question; 1 per step that ran)."""
    out = dict.fromkeys(roles, 0.0)
    for n in nodes:
        out[n.agent] += n.importance
    return out


def scaled(sums: dict[str, float], scale: str = "per-step") -> dict[str, float]:
    """A question's role sums on the table's scale (:data:`IMPORTANCE_SCALES`); all 0 when no node earned credit."""
    if scale not in IMPORTANCE_SCALES:
        raise ValueError(f"importance_scale must be one of {', '.join(IMPORTANCE_SCALES)}; got {scale!r}")
    total = sum(sums.values())
    if scale == "per-step":
        return {a: v / STEPS for a, v in sums.items()}
    return {a: v / total for a, v in sums.items()} if total > 0 else dict(sums)


def role_importance(nodes: Sequence[GraphNode], roles: Sequence[str], scale: str = "per-step") -> dict[str, float]:
    """Agent Importance Score of each role on one question, on the ``scale`` of :data:`IMPORTANCE_SCALES`."""
    return scaled(role_sums(nodes, roles), scale)


def parse_ratings(text: str, n: int) -> list[float] | None:
    """The last ``[[r1, r2, ...]]`` in a reply, if it has exactly ``n`` numbers."""
    found = _RATINGS.findall(text)
    if not found:
        return None
    try:
        vals = [float(x) for x in re.split(r"[,\s]+", found[-1].strip()) if x]
    except ValueError:
        return None
    return vals if len(vals) == n else None


def normalised(ratings: list[float] | None, n: int) -> list[float]:
    """DyLAN's rating weights: r/5 clipped to [0, 1], normalised to sum 1; uniform when missing or all zero.

    Args:
        ratings: the 1-5 ratings a reply gave the replies it was shown (None: none could be read).
        n: how many replies it was shown.
    """
    if not ratings:
        return [1.0 / n] * n
    w = [min(max(r / 5.0, 0.0), 1.0) for r in ratings]
    total = sum(w)
    return [x / total for x in w] if total > 0 else [1.0 / n] * n


def ranker_picks(text: str, n: int, rng: random.Random, keep: int = 2) -> list[int]:
    """The ranker's first ``keep`` distinct solution numbers (0-based); a seeded draw when it named fewer."""
    picks = list(dict.fromkeys(i for i in (int(x) - 1 for x in re.findall(r"\d+", text)) if 0 <= i < n))[:keep]
    return picks if len(picks) == keep else sorted(rng.sample(range(n), keep))


def propagate_importance(nodes: Sequence[GraphNode], final: Sequence[GraphNode]) -> None:
    """DyLAN's backward propagation: ``final`` nodes share importance 1; going back a step, a node's importance is
    the sum over the next step's nodes of (their importance × their normalised rating of it).

    Args:
        nodes: every node of the network (their ``importance`` is set in place).
        final: the nodes that gave the final answer.
    """
    if not final:
        return
    for x in final:
        x.importance = 1.0 / len(final)
    last_step = max(x.step for x in nodes)
    for step in range(last_step - 1, -1, -1):
        later = [x for x in nodes if x.step == step + 1]
        for x in (y for y in nodes if y.step == step):
            x.importance = sum(k.importance * k.weights.get(x.agent, 0.0) for k in later)
