"""Playing one condition's episodes in this process: what :func:`._run.run_condition` does itself, and what each of
its worker processes does with the episodes it is given (:mod:`._offload`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence

from tomlib.agents import EpisodeResult, play_episode
from tomlib.envs import Game
from tomlib.experiments._jobs import in_flight
from tomlib.experiments.adaptive_tom._setup import ATOM, Setup
from tomlib.trace import RunLog, logging_to


async def play_here(
    game: Game,
    players: Sequence[str],
    setup: Setup,
    *,
    episodes: range,
    seed: int,
    condition: str,
    log: RunLog,
    parallel: int | None = None,
    limit: asyncio.Semaphore | None = None,
    on_episode: Callable[[], None] = lambda: None,
) -> list[EpisodeResult]:
    """The episodes numbered ``episodes`` of one pairing, in this process (see :func:`._run.run_condition`)."""
    carried = setup.carry_losses and any(p in ATOM.values() for p in players)
    if setup.chat is None:
        limit = asyncio.Semaphore(1)
    elif limit is None:
        limit = asyncio.Semaphore(in_flight(parallel, setup.chat.concurrency))
    in_order = asyncio.Semaphore(1) if carried else contextlib.nullcontext()
    kept = [setup.agent(players[0]), setup.agent(players[1])] if carried else []  # episodes in order, one A-ToM

    async def one(ep: int) -> EpisodeResult:
        async with in_order, limit:
            agents = kept or [setup.agent(players[0]), setup.agent(players[1])]
            with logging_to(log):
                result = await play_episode(game, agents, seed=seed, episode=ep, condition=condition)
            on_episode()
            return result

    return list(await asyncio.gather(*(one(ep) for ep in episodes)))
