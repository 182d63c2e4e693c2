"""Formal conditions side by side: worker processes play whole conditions of formal agents and hand back the
episodes and the run-log events they made, which the caller writes in the order a run in one process writes them.

Every formal episode is a function of its game, its two agents' settings, the seed, the condition and the episode
number (each agent draws from its own stream ``(seed, condition, episode, seat)``; the games' memos hold pure
functions of the state), so where a condition is played does not change a number. LLM conditions always play in
the calling process: their model, response store and budget live there.
"""

from __future__ import annotations

import asyncio
import atexit
import itertools
import os
import sys
import weakref
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

from tomlib.agents import EpisodeResult
from tomlib.trace import drops_event, keeps_steps
from tomlib.workers import ENV_WORKERS, formal_workers, start_worker

Event = tuple[str, dict[str, Any], str, int | None, int | None, str]  # kind, payload, condition, episode, step, agent


class EventRecorder:
    """What :func:`tomlib.agents.play_episode` asks of a run log (its experiment, which steps it keeps, ``event``),
    keeping the events a :class:`tomlib.trace.RunLog` of the same ``detail_episodes`` would write, to be written
    into the real log by the caller."""

    def __init__(self, experiment: str, detail_episodes: int | None) -> None:
        self.experiment, self.detail_episodes = experiment, detail_episodes
        self.events: list[Event] = []

    def keeps_steps(self, episode: int | None) -> bool:
        return keeps_steps(self.detail_episodes, episode)

    def event(
        self,
        kind: str,
        payload: dict[str, Any] | None = None,
        *,
        condition: str | None = None,
        episode: int | None = None,
        step: int | None = None,
        agent: str | None = None,
    ) -> None:
        if not drops_event(self.detail_episodes, kind, episode, step):
            self.events.append((kind, payload or {}, condition or "", episode, step, agent or ""))


@dataclass(frozen=True)
class ConditionJob:
    """Episodes of one condition to play in a worker: the game by how it was made, and what run_condition takes."""

    game: tuple[str, str]  # (spec, prefer) of :func:`tomlib.experiments.adaptive_tom._setup._game`
    players: tuple[str, str]
    setup: Any  # a formal Setup (no model)
    episodes: range  # the episode numbers
    seed: int
    condition: str
    experiment: str
    detail_episodes: int | None = None
    env: tuple[tuple[str, str], ...] = field(default_factory=lambda: tomlib_env())
    """The caller's TOMLIB_* variables (where data and caches are), which the worker takes on before it plays."""


def split(episodes: int, workers: int) -> list[range]:
    """Episodes 0..n-1 in up to ``workers`` consecutive parts of near-equal size (a condition's episodes are
    independent unless A-ToM carries its losses: each draws from its own streams)."""
    parts = max(1, min(workers, episodes))
    edges = [round(i * episodes / parts) for i in range(parts + 1)]
    return [range(a, b) for a, b in itertools.pairwise(edges) if b > a]


def tomlib_env() -> tuple[tuple[str, str], ...]:
    """This process's TOMLIB_* variables but the workers' count."""
    return tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("TOMLIB_") and k != ENV_WORKERS))


def play_job(job: ConditionJob) -> tuple[list[EpisodeResult], list[Event]]:
    """In a worker: play the condition, return its episodes and the events its run log would get."""
    from tomlib.experiments.adaptive_tom._play import play_here
    from tomlib.experiments.adaptive_tom._setup import _game

    for k in [k for k in os.environ if k.startswith("TOMLIB_") and k != ENV_WORKERS]:
        del os.environ[k]
    os.environ.update(job.env)
    log = EventRecorder(job.experiment, job.detail_episodes)
    game = _game(*job.game)
    played = asyncio.run(
        play_here(
            game,
            job.players,
            job.setup,
            episodes=job.episodes,
            seed=job.seed,
            condition=job.condition,
            log=log,  # type: ignore[arg-type]
        )
    )
    return played, log.events


@dataclass
class _Pool:
    executor: ProcessPoolExecutor
    key: tuple[Any, ...]


_pool: _Pool | None = None


def _key(workers: int) -> tuple[Any, ...]:
    """What a worker took from this process when it started (each job brings the TOMLIB_* variables): another count
    or another sys.path means new workers."""
    return workers, tuple(sys.path)


START_AFTER_S = 1.0
"""Formal play in this process before worker processes start: starting them costs each about a second (imports, the
solved kitchen) and their memos start empty, more than a notebook with under a second of formal work would gain.
Measured on 2 cores against 5 s: notebooks 01-03 took 2-5 s less each, 04 and 05 the same."""
_here_s = 0.0


def played_here(seconds: float) -> None:
    """Count ``seconds`` of formal play done in this process (towards :data:`START_AFTER_S`)."""
    global _here_s
    _here_s += seconds


def executor() -> ProcessPoolExecutor | None:
    """The worker processes for formal conditions, started once this process has played :data:`START_AFTER_S` of
    formal episodes itself; None when there is to be one or it is too soon."""
    global _pool
    workers = formal_workers()
    if workers < 2 or (_pool is None and _here_s < START_AFTER_S):
        return None
    key = _key(workers)
    if _pool is None or _pool.key != key:
        close()
        import multiprocessing

        # spawned, not forked: a notebook kernel has threads (its message loops), which a fork would leave behind
        context = multiprocessing.get_context("spawn")
        _pool = _Pool(ProcessPoolExecutor(workers, mp_context=context, initializer=start_worker), key)
    return _pool.executor


def close() -> None:
    """Stop the worker processes (started again when next needed)."""
    global _pool
    if _pool is not None:
        _pool.executor.shutdown(wait=True, cancel_futures=True)
        _pool = None


atexit.register(close)


@dataclass
class _Turns:
    """The order a log's offloaded conditions are written in: the order they were asked for."""

    issued: int = 0
    written: int = 0
    ready: asyncio.Condition = field(default_factory=asyncio.Condition)


_turns: weakref.WeakKeyDictionary[Any, _Turns] = weakref.WeakKeyDictionary()


async def play_elsewhere(
    job: ConditionJob,
    log: Any,
    pool: ProcessPoolExecutor,
    on_episode: Callable[[], None],
    kept: list[Event] | None = None,
    turn: int | None = None,
) -> list[EpisodeResult] | None:
    """Play ``job`` in ``pool`` and write its events into ``log`` once every condition asked for before it on the same
    log is written (and append them to ``kept``). ``turn``: its place in that order (:func:`take_turn`; taken now
    when not given). None when the workers are gone (a worker killed): the caller then plays the condition itself."""
    turn = take_turn(log) if turn is None else turn

    async def played() -> tuple[list[EpisodeResult], list[Event]] | None:
        try:
            return await asyncio.wrap_future(pool.submit(play_job, job))
        except BrokenProcessPool:
            print("tomlib: a formal worker process stopped; playing the rest here", file=sys.stderr, flush=True)
            close()
            os.environ[ENV_WORKERS] = "1"
            return None

    return await write_in_turn(log, turn, played(), on_episode, kept)


def write_events(log: Any, events: Sequence[Event]) -> None:
    """Write events an :class:`EventRecorder` kept into ``log``, in order."""
    for kind, payload, condition, episode, step, agent in events:
        log.event(kind, payload, condition=condition, episode=episode, step=step, agent=agent)


def take_turn(log: Any) -> int:
    """The next place in the order conditions' events are written into ``log`` (the order they were asked for)."""
    turns = _turns.get(log) or _turns.setdefault(log, _Turns())
    turns.issued += 1
    return turns.issued - 1


async def write_in_turn(
    log: Any,
    mine: int,
    made: Awaitable[tuple[list[EpisodeResult], list[Event]] | None],
    on_episode: Callable[[], None],
    kept: list[Event] | None = None,
) -> list[EpisodeResult] | None:
    """Await a condition's episodes and events (``made``: played in a worker, or kept from an earlier run), and
    write the events into ``log`` at its place ``mine`` (:func:`take_turn`); None when ``made`` gives none."""
    turns = _turns[log]
    try:
        got = await made
        if got is None:
            return None
        played, events = got
        async with turns.ready:
            await turns.ready.wait_for(lambda: turns.written == mine)
        write_events(log, events)
        if kept is not None:
            kept += events
        for _ in played:
            on_episode()
        return played
    finally:
        async with turns.ready:
            await turns.ready.wait_for(lambda: turns.written == mine)
            turns.written += 1
            turns.ready.notify_all()


def side_by_side(conditions: Sequence[Any], setup: Any) -> bool:
    """Whether ``conditions`` (at least two) of ``setup``'s agents are to be asked for together, to play in worker
    processes: formal ones, once the workers are up. (Asked for together in this process, their episodes would
    interleave in the run log.)"""
    return setup.chat is None and len(conditions) > 1 and executor() is not None
