"""Exact k-level ToM reasoning (``adaptive-tom-aaai2026.txt`` §3.2, eq. 3-9), no LLM.

A ToM-0 agent treats its partner as part of the environment (eq. 3): it assumes the partner does what
:meth:`Game.environment_actions` says (repeat its last choice, stay where it is) and best-responds. A ToM-k
agent predicts its partner with a hypothetical ToM-(k-1) agent reasoning from the partner's side (eq. 8) and
best-responds to that prediction (eq. 9). Best responses maximize the game's exact joint value Q(s, a_i, a_j).
Ties are broken by the reasoning agent's own random stream, so repeated episodes differ but replay exactly.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from tomlib.envs import Game

MAX_ORDER = 4


class FirstOfTies(random.Random):
    """A stand-in random stream that always takes the first of tied options (a deterministic tie-break,
    the same for every agent: the analogue of two copies of one deterministic LLM)."""

    def choice(self, seq):  # type: ignore[no-untyped-def, override]
        return seq[0]


@dataclass(frozen=True)
class ToMLevel:
    """One level of the recursion: at ``order``, ``player`` believes its partner does ``belief`` and so
    chooses ``action``."""

    order: int
    player: int
    belief: str
    action: str


def joint(player: int, mine: str, theirs: str) -> tuple[str, str]:
    """The joint action in player order."""
    return (mine, theirs) if player == 0 else (theirs, mine)


def best_responses(game: Game, state: object, player: int, partner_action: str) -> tuple[str, ...]:
    """argmax_a Q(s, a, a_j^pred) over the player's legal actions (eq. 5, 7, 9), all maximizers in order.
    Among equal Q the game's ``preference`` (own progress) decides; what is still tied is returned."""
    legal = game.legal_actions(state, player)
    keyed = []
    for a in legal:
        j = joint(player, a, partner_action)
        keyed.append((game.joint_value(state, j), game.preference(state, j, player)))
    top = max(keyed)
    return tuple(a for a, k in zip(legal, keyed, strict=True) if k == top)


def tom_reasoning(game: Game, state: object, player: int, order: int, rng: random.Random) -> tuple[ToMLevel, ...]:
    """The recursion for a ToM-``order`` player, deepest level first; the last level is the decision."""
    if not 0 <= order <= MAX_ORDER:
        raise ValueError(f"ToM order must be between 0 and {MAX_ORDER}; got {order}")
    partner = 1 - player
    if order == 0:
        assumed = game.environment_actions(state, partner)
        belief = assumed[0] if len(assumed) == 1 else rng.choice(assumed)
        chain: tuple[ToMLevel, ...] = ()
    else:
        chain = tom_reasoning(game, state, partner, order - 1, rng)
        belief = chain[-1].action
    options = best_responses(game, state, player, belief)
    action = options[0] if len(options) == 1 else rng.choice(options)
    return (*chain, ToMLevel(order, player, belief, action))


def tom_action(game: Game, state: object, player: int, order: int, rng: random.Random) -> str:
    """The action of a formal ToM-``order`` player (eq. 3 for order 0, eq. 8-9 above)."""
    return tom_reasoning(game, state, player, order, rng)[-1].action
