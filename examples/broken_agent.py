"""Agents broken on purpose, one way each, to see what `tomlib check-agent` says of them (docs/your-agent.md):

    .venv/bin/python -m tomlib check-agent examples.broken_agent:IllegalAgent --tasks memory_1

Each plays a legal action from its own random stream, except for the one thing it does wrong. They live here, not
under tests/, because they are examples for readers as much as fixtures: the tests import them from here.
"""

from __future__ import annotations

import random
import time
from typing import Any, ClassVar

from tomlib.agents import Agent, Decision


class _Legal(Agent):
    """Plays a legal action drawn from its own stream (``self.rng``): the part every agent here gets right."""

    immediate = True

    def pick(self, state: Any) -> str:
        return self.rng.choice(self.game.legal_actions(state, self.player))


class IllegalAgent(_Legal):
    """Now and then (one step in ten, drawn from its own stream) answers with a move no game has."""

    async def act(self, state: Any) -> Decision:
        return Decision("fly" if self.rng.random() < 0.1 else self.pick(state))


class SharedStateAgent(_Legal):
    """Remembers its partners' moves in a class attribute, so every instance, in every episode, reads what the others
    saw; it plays the legal action that count points at."""

    seen: ClassVar[list[str]] = []

    async def act(self, state: Any) -> Decision:
        legal = self.game.legal_actions(state, self.player)
        return Decision(legal[len(self.seen) % len(legal)])

    def observe(self, state: Any, joint: Any, next_state: Any) -> None:
        self.seen.append(joint[1 - self.player])


class BlockingAgent(_Legal):
    """Sleeps ``seconds`` inside ``act`` at the second step of every episode, holding the event loop (other episodes,
    model calls and progress bars wait with it); ``await asyncio.sleep`` would not."""

    def __init__(self, seconds: float = 1.5) -> None:
        self.seconds = seconds

    async def act(self, state: Any) -> Decision:
        if self.t == 1:
            time.sleep(self.seconds)
        return Decision(self.pick(state))


class UnseededAgent(_Legal):
    """Draws from the random module's global stream instead of its own: two runs of one seed differ."""

    async def act(self, state: Any) -> Decision:
        return Decision(random.choice(self.game.legal_actions(state, self.player)))
