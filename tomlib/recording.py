"""The run log in force, as ambient context: episode runners set it, algorithms record to it (light: imports nothing).

An experiment opens a :class:`~tomlib.trace.RunLog` and plays its episodes inside ``with logging_to(log):``. The
teams, debates and reasoning methods it calls then say what happened with :func:`record` (or :func:`record_all`
for the events a record knows it makes) and never test whether a log exists: with none in force, recording does
nothing. The log lives in a :class:`contextvars.ContextVar`, so each asyncio task sees the log in force where it
was created, and two episodes of different runs played concurrently write to their own logs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol


class EventSink(Protocol):
    """What recording needs of a run log (:class:`tomlib.trace.RunLog`, or a recorder standing in for one)."""

    def event(self, kind: str, payload: dict[str, Any] | None = None, **where: Any) -> dict[str, Any]: ...


_LOG: ContextVar[EventSink | None] = ContextVar("tomlib_run_log", default=None)


Events = Iterable[tuple[str, dict[str, Any], dict[str, Any]]]
"""A record's run-log events as ``(kind, payload, where)``: a round's records say which events they make."""


def current_log() -> EventSink | None:
    """The run log in force here, or None."""
    return _LOG.get()


@contextmanager
def logging_to(log: EventSink | None) -> Iterator[EventSink | None]:
    """Make ``log`` the run log in force inside the block (None: no log, even inside an outer block)."""
    token = _LOG.set(log)
    try:
        yield log
    finally:
        _LOG.reset(token)


def record(kind: str, payload: dict[str, Any] | None = None, **where: Any) -> None:
    """Write one event (``where``: condition, episode, step, agent) to the log in force; without one, nothing."""
    log = _LOG.get()
    if log is not None:
        log.event(kind, payload, **where)


def record_all(events: Events, **where: Any) -> None:
    """Write ``events`` (a record's, e.g. ``RoundResult.events()``) to the log in force, each placed by ``where`` and
    then by its own fields; without a log, the events are not even made."""
    log = _LOG.get()
    if log is not None:
        for kind, payload, own in events:
            log.event(kind, payload, **{**where, **own})
