"""The common interface of the two-player cooperative games (OpenSpiel-style: games and algorithms meet
through one small API; no agent code ever asks which game it is playing).

States are immutable values, so agents can search from any state without touching the episode. Actions are
short strings (``"A"``, ``"up"``, ``"interact"``) that read well in prompts and logs.
"""

from __future__ import annotations

import abc
import random
import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

PLAYERS = (0, 1)

PREFERENCES: tuple[str, ...] = ("none", "own", "own-then-stay")
"""What a formal agent prefers among joint actions of equal team value (before the tie model draws): nothing
(``none``: eq. 9's argmax alone), its own progress (``own``: in the grid, ending the step closer to its own goal; in
the kitchen, the fewest steps in which it alone could deliver the soup), or its own progress and then staying put
(``own-then-stay``: a cook that cannot advance its own part waits instead of wandering). The paper says none of
this; each game's default is in its docstring."""


def check_preference(prefer: str) -> str:
    if prefer not in PREFERENCES:
        raise ValueError(f"prefer must be one of {', '.join(PREFERENCES)}; got {prefer!r}")
    return prefer


class NoExactModel(NotImplementedError):
    """The game has no exact joint value, so formal ToM-k agents cannot play it (the message says why)."""


class IllegalAction(ValueError):
    """An action that is not legal for that player in that state (the message lists the legal ones)."""


@dataclass(frozen=True)
class GameInfo:
    """What a game is and how its episodes are scored."""

    name: str
    metric: Literal["point", "time"]
    better: Literal["higher", "lower"]
    horizon: int
    worst: float
    description: str


class Game(abc.ABC):
    """A fully cooperative, simultaneous-move two-player game (players 0 and 1)."""

    info: GameInfo
    params: dict[str, Any]
    has_exact_values: bool = True

    # -- dynamics ------------------------------------------------------------------------------------
    @abc.abstractmethod
    def reset(self, seed: int | None = None) -> Any:
        """The initial state (deterministic given ``seed``)."""

    @abc.abstractmethod
    def legal_actions(self, state: Any, player: int) -> tuple[str, ...]:
        """The player's legal actions in ``state``, in a fixed order."""

    @abc.abstractmethod
    def step(self, state: Any, joint: Sequence[str]) -> Any:
        """The next state after both players act at once; raises IllegalAction for an illegal action."""

    @abc.abstractmethod
    def is_terminal(self, state: Any) -> bool:
        """Whether the episode is over (success or the step limit)."""

    @abc.abstractmethod
    def score(self, state: Any) -> float:
        """The episode metric so far (``info.metric``): points earned, or time used (the limit on failure)."""

    # -- what ToM-k reasoning needs (eq. 3-9) ------------------------------------------------------------
    @abc.abstractmethod
    def joint_value(self, state: Any, joint: Sequence[str]) -> float:
        """Team value Q(s, a_0, a_1) of a joint action, higher is better, from exact search."""

    @abc.abstractmethod
    def environment_actions(self, state: Any, player: int) -> tuple[str, ...]:
        """What a ToM-0 agent assumes ``player`` does when it treats it as part of the environment (eq. 3):
        repeat its last choice, or stay where it is. Several when the assumption is ambiguous (a tie)."""

    def decision_key(self, state: Any) -> Hashable | None:
        """A value such that ``legal_actions``, ``joint_value`` and ``preference`` depend on ``state`` only through it,
        so what is computed from them (a best response) holds for every state with the same key; None (the default)
        when the game gives none."""
        return None

    def preference(self, state: Any, joint: Sequence[str], player: int) -> tuple[float, ...]:
        """Secondary criteria among joint actions of equal value, from ``player``'s side (higher first); none by
        default. Games with a ``prefer`` reading (:data:`PREFERENCES`) return its keys here."""
        return ()

    @staticmethod
    def preference_keys(prefer: str, own: float, action: str) -> tuple[float, ...]:
        """The keys of a ``prefer`` reading given the player's own progress (higher is better) and its action."""
        if prefer == "none":
            return ()
        return (own,) if prefer == "own" else (own, float(action == "stay"))

    # -- text interface (LLM agents) -----------------------------------------------------------------
    @abc.abstractmethod
    def describe(self, state: Any, player: int) -> str:
        """The state from ``player``'s side, in plain words, ending with its legal actions."""

    def render(self, state: Any) -> str:
        """A compact picture of the state for logs and replays."""
        return repr(state)

    def status(self, state: Any) -> str:
        """What the picture cannot show (held items, timers), for replays; empty when the picture says it all."""
        return ""

    def describe_history(self, history: Sequence[tuple[str, str]], player: int, first_step: int = 1) -> str:
        """Joint actions already played (oldest first, the first at step ``first_step``), from ``player``'s side, for
        prompts; "" for none. Games whose observation is limited by design (the matrix game's memory) return ""."""
        if not history:
            return ""
        lines = [f"- step {first_step + i}: you {j[player]}, partner {j[1 - player]}" for i, j in enumerate(history)]
        return "What you and your partner did in the last steps (oldest first):\n" + "\n".join(lines)

    def describe_action(self, action: str) -> str:
        """A short gloss of an action for prompts (defaults to the action itself)."""
        return action

    def parse_action(self, text: str, state: Any, player: int) -> str:
        """The legal action named in ``text`` (case-insensitive, whole word); IllegalAction otherwise."""
        legal = self.legal_actions(state, player)
        cleaned = text.strip().strip("`'\".").strip()
        for a in legal:
            if cleaned.lower() == a.lower():
                return a
        found = {a for a in legal if re.search(rf"(?<![A-Za-z_]){re.escape(a)}(?![A-Za-z_])", text, re.I)}
        if len(found) == 1:
            return found.pop()
        why = "names none of" if not found else f"names several of ({', '.join(sorted(found))})"
        raise IllegalAction(f"{text!r} {why} the legal actions for player {player + 1}: {', '.join(legal)}")

    def check_joint(self, state: Any, joint: Sequence[str]) -> tuple[str, str]:
        """Validate a joint action (helper for ``step``)."""
        if len(joint) != 2:
            raise IllegalAction(f"a joint action has one action per player, got {joint!r}")
        for p, a in zip(PLAYERS, joint, strict=True):
            legal = self.legal_actions(state, p)
            if a not in legal:
                raise IllegalAction(f"{a!r} is not legal for player {p + 1} here; legal: {', '.join(legal)}")
        return joint[0], joint[1]

    def spec(self) -> str:
        """The string that :func:`tomlib.envs.load_game` turns back into this game."""
        args = ",".join(f"{k}={v}" for k, v in sorted(self.params.items()))
        return f"{self.info.name}({args})" if args else self.info.name


def rng_for(seed: int, *labels: object) -> random.Random:
    """An independent, reproducible random stream for ``seed`` and a label path (agent, episode, ...)."""
    return random.Random(f"{seed}|" + "|".join(str(x) for x in labels))
