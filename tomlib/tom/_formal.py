"""Exact k-level ToM reasoning (``adaptive-tom-aaai2026.txt`` §3.2, eq. 3-9), no LLM.

A ToM-0 agent treats its partner as part of the environment (eq. 3): it assumes the partner does what
:meth:`Game.environment_actions` says (repeat its last choice, stay where it is) and best-responds. A ToM-k
agent predicts its partner with a hypothetical ToM-(k-1) agent reasoning from the partner's side (eq. 8) and
best-responds to that prediction (eq. 9). Best responses maximize the game's exact joint value Q(s, a_i, a_j).
Ties are broken by the reasoning agent's own random stream, so repeated episodes differ but replay exactly.
"""

from __future__ import annotations

import random
from typing import Literal, NamedTuple

from tomlib.envs import Game

MAX_ORDER = 4


TieBreak = Literal["independent", "shared"]
TIE_BREAKS: tuple[str, ...] = ("independent", "shared")


class SharedTies(random.Random):
    """A random stream for the *shared* tie model: at a tie every agent takes the same default, the first tied
    option in the game's order (two copies of one deterministic model), except that with probability ``epsilon``
    the tie is drawn from the agent's own stream ``own`` (a sampled model's residual randomness). Every other draw
    (Hedge's expert sampling) comes from ``own`` unchanged. ``epsilon = 1`` is the independent model."""

    def __init__(self, own: random.Random, epsilon: float = 0.0):
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"tie_epsilon is a probability in [0, 1]; got {epsilon!r}")
        self.own, self.epsilon = own, float(epsilon)
        super().__init__()

    def random(self) -> float:
        return self.own.random()

    def getrandbits(self, k: int) -> int:
        return self.own.getrandbits(k)

    def choice(self, seq):  # type: ignore[no-untyped-def, override]
        if self.epsilon and self.own.random() < self.epsilon:
            return self.own.choice(seq)
        return seq[0]


def tie_stream(own: random.Random, tie_break: str, epsilon: float = 0.0) -> random.Random:
    """The stream a formal agent breaks ties with: its own (``independent``: every agent draws for itself) or
    :class:`SharedTies` (``shared``, with an independent draw at probability ``epsilon``)."""
    if tie_break not in TIE_BREAKS:
        raise ValueError(f"tie_break must be one of {', '.join(TIE_BREAKS)}; got {tie_break!r}")
    return own if tie_break == "independent" else SharedTies(own, epsilon)


class ToMLevel(NamedTuple):
    """One level of the recursion: at ``order``, ``player`` believes its partner does ``belief`` and so
    chooses ``action`` (a named tuple: a step of every formal agent makes one per level)."""

    order: int
    player: int
    belief: str
    action: str


def joint(player: int, mine: str, theirs: str) -> tuple[str, str]:
    """The joint action in player order."""
    return (mine, theirs) if player == 0 else (theirs, mine)


def best_responses(game: Game, state: object, player: int, partner_action: str) -> tuple[str, ...]:
    """argmax_a Q(s, a, a_j^pred) over the player's legal actions (eq. 5, 7, 9), all maximizers in order.
    Among equal Q the game's ``preference`` (own progress) decides; what is still tied is returned. The answers are
    kept per :meth:`Game.decision_key` (a pure function of it: no random draw happens here), or, for a game without
    one, for the state last asked about: every level of every recursion in a step asks about the same state."""
    memo = game.__dict__.get("_best_responses")
    if memo is None or memo[0] is not state:  # the same object, not an equal one: states are immutable values
        key = game.decision_key(state)
        if key is None:
            memo = (state, {})
        else:
            by_key = game.__dict__.setdefault("_best_responses_by_key", {})
            memo = (state, by_key.setdefault(key, {}))
        game.__dict__["_best_responses"] = memo
    got = memo[1].get((player, partner_action))
    if got is None:
        legal = game.legal_actions(state, player)
        keyed = []
        for a in legal:
            j = joint(player, a, partner_action)
            keyed.append((game.joint_value(state, j), game.preference(state, j, player)))
        top = max(keyed)
        got = memo[1][(player, partner_action)] = tuple(a for a, k in zip(legal, keyed, strict=True) if k == top)
    return got


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


def action_distribution(
    game: Game, state: object, player: int, order: int, memo: dict[tuple[int, int], dict[str, float]] | None = None
) -> dict[str, float]:
    """The chance a formal ToM-``order`` player takes each action when every tie of its recursion is drawn
    uniformly (the law of :func:`tom_reasoning` under independent ties): eq. 3 for order 0, eq. 8-9 above, each argmax
    set weighted evenly. Its keys are every action the player may take under some resolution of the ties.

    Args:
        game: the task (its payoffs and legal actions).
        state: the state, with the history the recursion reads.
        player: the seat (0 or 1).
        order: the ToM order (0, 1 or 2).
        memo: distributions already computed for this ``state``, by (player, order); given, it is read and filled,
            so asking for several orders at one state computes each level of the recursion once.
    """
    if not 0 <= order <= MAX_ORDER:
        raise ValueError(f"ToM order must be between 0 and {MAX_ORDER}; got {order}")
    if memo is not None and (got := memo.get((player, order))) is not None:
        return got
    if order == 0:
        assumed = game.environment_actions(state, 1 - player)
        beliefs = {b: 1 / len(assumed) for b in assumed}
    else:
        beliefs = action_distribution(game, state, 1 - player, order - 1, memo)
    out: dict[str, float] = {}
    for belief, p in beliefs.items():
        options = best_responses(game, state, player, belief)
        for a in options:
            out[a] = out.get(a, 0.0) + p / len(options)
    if memo is not None:
        memo[(player, order)] = out
    return out


def tom_action(game: Game, state: object, player: int, order: int, rng: random.Random) -> str:
    """The action of a formal ToM-``order`` player (eq. 3 for order 0, eq. 8-9 above).

    Args:
        game: the task (its payoffs and legal actions).
        state: the state, with the history the recursion reads.
        player: the seat (0 or 1).
        order: the ToM order (0, 1 or 2).
        rng: breaks ties among equally good actions.
    """
    return tom_reasoning(game, state, player, order, rng)[-1].action
