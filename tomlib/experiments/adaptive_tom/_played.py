"""Formal conditions already played in this process, kept so a table run again replays what did not change.

A formal condition's episodes are a function of its game, its two agents' settings (:meth:`Setup.settings`), the
seed, the condition's name and its number of episodes (each agent draws from its own stream ``(seed, condition,
episode, seat)``; see :mod:`._offload`). Notebook 03 asks for many conditions twice: Table 3 with the stand-in in PBT's
seat holds every pair of the table without it, the stand-in's default playing rule is that table's PBT pairs again,
and a reading of A-ToM's own (its carried losses, how its experts predict) leaves every pair without A-ToM as it was.
Those are replayed from here, with the run-log events they made, instead of played again.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tomlib.agents import EpisodeResult
from tomlib.envs import Game
from tomlib.experiments.adaptive_tom._offload import Event
from tomlib.experiments.adaptive_tom._setup import Setup, made_from
from tomlib.trace import drops_event

KEPT_CONDITIONS = 256
"""Conditions kept at most (the least recently asked for go first): a notebook asks for about 250, each a few
hundred kilobytes with the steps of its logged episodes."""


@dataclass(frozen=True)
class Played:
    """One condition's episodes and the run-log events they made under ``detail`` (:class:`tomlib.trace.RunLog`'s
    ``detail_episodes``: None logs every step)."""

    episodes: tuple[EpisodeResult, ...]
    events: tuple[Event, ...]
    detail: int | None

    def covers(self, detail: int | None) -> bool:
        """Whether these events hold every event a log of ``detail`` keeps."""
        return self.detail is None or (detail is not None and detail <= self.detail)

    def events_for(self, detail: int | None) -> list[Event]:
        """The events a log of ``detail`` keeps, in the order they were made."""
        return [e for e in self.events if not drops_event(detail, e[0], e[3], e[4])]


_kept: OrderedDict[tuple[Any, ...], Played] = OrderedDict()


def key(
    game: Game, players: Sequence[str], setup: Setup, seed: int, condition: str, episodes: int
) -> tuple[Any, ...] | None:
    """What a formal condition's episodes are a function of; None for a condition not kept (LLM agents, whose calls
    and budget the response store keeps, or a game not made by :func:`._setup._game`)."""
    made = made_from(game)
    if setup.chat is not None or made is None:
        return None
    return (made, tuple(players), tuple(setup.settings(p) for p in players), seed, condition, episodes)


def recall(at: tuple[Any, ...] | None, detail: int | None) -> Played | None:
    """The condition kept under ``at`` if its events cover a log of ``detail``."""
    got = _kept.get(at) if at is not None else None
    if got is None or not got.covers(detail):
        return None
    _kept.move_to_end(at)  # type: ignore[arg-type]
    return got


def keep(
    at: tuple[Any, ...] | None, episodes: Sequence[EpisodeResult], events: Sequence[Event], detail: int | None
) -> None:
    """Keep a condition just played (unless one kept already covers as much)."""
    if at is None or ((old := _kept.get(at)) is not None and old.covers(detail)):
        return
    _kept[at] = Played(tuple(episodes), tuple(events), detail)
    _kept.move_to_end(at)
    while len(_kept) > KEPT_CONDITIONS:
        _kept.popitem(last=False)


def forget() -> None:
    """Drop every kept condition."""
    _kept.clear()
