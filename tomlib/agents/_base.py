"""What an agent is: something that, given a game state and its seat, picks an action (and says why).

Agents work on every game through the :class:`tomlib.envs.Game` interface. ``act`` is async so LLM agents
can run many episodes concurrently; formal agents simply return.
"""

from __future__ import annotations

import abc
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tomlib.envs import Game

Emit = Callable[[str, dict[str, Any]], None]
SEATS = ("player1", "player2")


def no_emit(kind: str, payload: dict[str, Any]) -> None:
    """The default event sink: drop events."""


no_emit.keeps_steps = False  # type: ignore[attr-defined]


def keeps_steps(emit: Emit) -> bool:
    """Whether ``emit`` writes step events (:data:`tomlib.trace.STEP_KINDS`): a sink that sets ``keeps_steps`` to
    False drops them, so an agent need not build their payloads (most formal episodes log no steps: issue 35)."""
    return bool(getattr(emit, "keeps_steps", True))


@dataclass(frozen=True)
class Site:
    """Where an episode runs: experiment, condition and episode (the agent's seat is added per call)."""

    experiment: str = "adhoc"
    condition: str = ""
    episode: int = 0


@dataclass
class Decision:
    """An action and the reasoning behind it (logged as the ``action`` event's payload)."""

    action: str
    detail: dict[str, Any] = field(default_factory=dict)


class Agent(abc.ABC):
    """A player. ``start_episode`` is called before the first step of every episode."""

    name: str = "agent"
    immediate: bool = False
    """``act`` never waits (no model call): an episode of two such agents runs them in turn, without tasks."""

    def start_episode(
        self, game: Game, player: int, rng: random.Random, emit: Emit = no_emit, site: Site | None = None
    ) -> None:
        """Reset per-episode state; ``rng`` is this agent's own stream, ``emit`` writes run-log events and
        ``site`` names where the episode runs (used in model-call sample keys)."""
        self.game, self.player, self.rng, self.emit = game, player, rng, emit
        self.logs_steps = keeps_steps(emit)
        self.site = site or Site()
        self.t = 0
        self.history: list[tuple[str, str]] = []  # the joint actions played so far, in seat order

    @abc.abstractmethod
    async def act(self, state: Any) -> Decision:
        """Choose this step's action."""

    def observe(self, state: Any, joint: Sequence[str], next_state: Any) -> None:  # noqa: B027 - optional hook
        """See the joint action that was played (A-ToM learns here)."""


class Predictor(abc.ABC):
    """Predicts what a partner with a given ToM order would do: a hypothetical ToM-k agent (eq. 8)."""

    @abc.abstractmethod
    async def predict(self, agent: Agent, state: Any, order: int) -> str:
        """The action a ToM-``order`` partner of ``agent`` would take in ``state``."""


class Responder(abc.ABC):
    """Chooses the ego's action given a predicted partner action (eq. 5, 7, 9)."""

    @abc.abstractmethod
    async def respond(self, agent: Agent, state: Any, predicted: str) -> Decision:
        """The action for ``agent`` that best coordinates with ``predicted``."""
