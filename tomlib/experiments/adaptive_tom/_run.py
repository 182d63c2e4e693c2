"""Playing a table's conditions.

A condition's episodes, a table's rows in the results-contract form and its units, the call estimate.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from tomlib.agents import EpisodeResult
from tomlib.envs import Game
from tomlib.experiments._cost import Estimate, price
from tomlib.experiments._jobs import in_flight, run_jobs
from tomlib.experiments._units import write_episode_units
from tomlib.experiments.adaptive_tom import _offload, _played
from tomlib.experiments.adaptive_tom._orders import write_order_units
from tomlib.experiments.adaptive_tom._play import play_here
from tomlib.experiments.adaptive_tom._setup import (
    ATOM,
    PAPER_ID,
    NotReproduced,
    Reproduction,
    Setup,
    load_task,
    made_from,
    weight_frame,
)
from tomlib.report import attach_paper_values
from tomlib.trace import RunLog

FORMAL_DETAIL_EPISODES = 3
"""Episodes of each formal condition logged step by step (the explorer draws three in an exported page). The others
keep their first state and outcome; the tables read A-ToM's weights from the run in memory
(:attr:`Reproduction.weights`), and every formal episode replays exactly from its seed. Logging every step of all 30
made the formal run logs 85% of the offline series' results folder, and A-ToM's weights at every step of every
episode were most of what remained (issue 35). LLM runs log every step."""
ORDER_TABLES = ("table1", "table2", "table3", "table4")
"""The tables whose LLM runs' agents get their effective order written as units (``<table>_orders``): every
fixed-order LLM agent of notebooks 01-04 (claim ``adaptive_tom.prompted_order_played``, REPORT's table)."""
YOURS = "your_agent"  # the table of your agent (:mod:`._yours`), whose order is estimated like an LLM agent's
READING_DETAIL_EPISODES = 0
"""The same for the runs of a table under our other readings (and the stand-in's playing rules):
the notebooks show their cells, not their steps, so their logs keep each episode's first state and outcome only (the
explorer opens them and says so). Their steps replay exactly: the table function with the same options and
``detail_episodes=3`` logs them. Logging the first episode of each of their conditions took 2.5 of the series' 33 MB
of results."""


async def run_condition(
    game: Game,
    players: Sequence[str],
    setup: Setup,
    *,
    episodes: int,
    seed: int,
    condition: str,
    log: RunLog,
    parallel: int | None = None,
    limit: asyncio.Semaphore | None = None,
    on_episode: Callable[[], None] = lambda: None,
) -> list[EpisodeResult]:
    """``episodes`` repetitions of one pairing. LLM episodes run concurrently: ``parallel`` at once (default: the
    model's concurrency), or under ``limit``, a semaphore shared with other conditions; formal ones in turn, in worker
    processes when there are several (:mod:`._offload`): the episodes split among them (whole when A-ToM carries its
    losses from one to the next), and conditions awaited together play side by side. Their events reach ``log`` in
    the order of one process."""
    for p in players:
        setup.agent(p)  # a partner that cannot be built fails here, before any episode runs
    setup.check_playable(game, players)
    at = _played.key(game, players, setup, seed, condition, episodes)
    if (before := _played.recall(at, log.detail_episodes)) is not None:  # played already: its episodes and events
        again = _made(list(before.episodes), before.events_for(log.detail_episodes))
        return await _offload.write_in_turn(log, _offload.take_turn(log), again, on_episode)  # type: ignore[return-value]
    carried = setup.carry_losses and any(p in ATOM.values() for p in players)
    made = made_from(game)
    pool = _offload.executor() if setup.chat is None and made is not None else None
    if pool is None or made is None:
        started = time.perf_counter()
        recorder = None if at is None else _offload.EventRecorder(log.experiment, log.detail_episodes)
        here = await play_here(
            game,
            players,
            setup,
            episodes=range(episodes),
            seed=seed,
            condition=condition,
            log=recorder or log,  # type: ignore[arg-type]
            parallel=parallel,
            limit=limit,
            on_episode=on_episode,
        )
        if setup.chat is None:
            _offload.played_here(time.perf_counter() - started)
        if recorder is not None:
            _offload.write_events(log, recorder.events)
            _played.keep(at, here, recorder.events, log.detail_episodes)
        return here
    parts = [range(episodes)] if carried else _offload.split(episodes, _offload.formal_workers())
    jobs = [
        _offload.ConditionJob(
            made, (players[0], players[1]), setup, part, seed, condition, log.experiment, log.detail_episodes
        )
        for part in parts
    ]
    kept: list[list[_offload.Event]] = [[] for _ in jobs]
    turns = [_offload.take_turn(log) for _ in jobs]  # now, in the order asked for, as a condition played already does
    played = await asyncio.gather(
        *(_offload.play_elsewhere(j, log, pool, on_episode, k, t) for j, k, t in zip(jobs, kept, turns, strict=True))
    )
    out: list[EpisodeResult] = []
    for part, got in zip(parts, played, strict=True):
        if got is None:  # the workers are gone: this part here
            got = await play_here(
                game, players, setup, episodes=part, seed=seed, condition=condition, log=log, on_episode=on_episode
            )
            at = None  # its events went straight to the log: not kept
        out += got
    _played.keep(at, out, [e for k in kept for e in k], log.detail_episodes)
    return out


async def _made(episodes: list[EpisodeResult], events: list[Any]) -> tuple[list[EpisodeResult], list[Any]]:
    """A condition's episodes and events, already at hand, as :func:`._offload.write_in_turn` awaits them."""
    return episodes, events


def weight_steps(condition: str, played: Sequence[EpisodeResult]) -> list[dict[str, Any]]:
    """A condition's A-ToM weights at every step of every episode, shaped as ``expert_weights`` events are read back
    (condition, agent = seat, episode, step, payload with ``orders`` and ``probabilities``)."""
    return [
        {
            "condition": condition,
            "agent": seat,
            "episode": i,
            "step": s,
            "payload": {"orders": orders, "probabilities": p},
        }
        for i, r in enumerate(played)
        for seat, (orders, trajectory) in r.experts.items()
        for s, p in enumerate(trajectory)
    ]


def _cell_rows(base: dict[str, Any], metric: str, scores: list[float], source: str) -> list[dict[str, Any]]:
    mean = statistics.fmean(scores)
    sd = statistics.stdev(scores) if len(scores) > 1 else 0.0
    return [
        {**base, "metric": metric, "value": round(mean, 4), "source": source},
        {**base, "metric": f"{metric}_sd", "value": round(sd, 4), "source": source},
    ]


def _missing_rows(base: dict[str, Any], metric: str, source: str, why: str) -> list[dict[str, Any]]:
    return [
        {**base, "metric": m, "value": float("nan"), "source": source, "note": why} for m in (metric, f"{metric}_sd")
    ]


# model calls per step of each agent type (before re-asks): a ToM-k chain asks orders k, k-1, ..., 0 once each; A-ToM
# asks its three hypothetical partners' chains (five distinct decisions, shared within a step) and its responder
CALLS_PER_STEP = {"ToM-0": 1, "ToM-1": 2, "ToM-2": 3, "A-ToM (FTL)": 6, "A-ToM (Hedge)": 6, "Greedy": 0, "PBT": 0}
TOKENS_PER_CALL = (450, 96)  # our guess of a decision prompt; 96 is the decision's max_tokens


def estimate(
    model: str, cells: Sequence[tuple[tuple[str, str], str]], episodes: int, tasks: dict[str, str]
) -> Estimate:
    """Calls, tokens and USD of playing ``cells`` = ((player 1, player 2), task) for ``episodes`` each, from scratch:
    an upper bound, every episode taken to the task's step limit (grid and Overcooked episodes often end sooner). An
    agent named by import path counts no calls: whether it calls a model is its author's to say."""
    horizon = {t: load_task(t, tasks).info.horizon for t in dict.fromkeys(t for _, t in cells)}
    per_step = {a: CALLS_PER_STEP.get(a, 0) for (pair, _) in cells for a in pair}  # your own agent's calls: its own
    calls = sum(episodes * horizon[t] * (per_step[a] + per_step[b]) for (a, b), t in cells)
    return price(model, calls, TOKENS_PER_CALL)


def _announce(setup: Setup, cells: Sequence[tuple[tuple[str, str], str]], episodes: int, tasks: dict[str, str]) -> None:
    """Print the estimate before live work (replayed calls cost nothing, so replay prints none)."""
    if setup.model != "formal" and setup.llm_mode != "replay":
        estimate(setup.model, cells, episodes, tasks).announce(
            setup.model, "an upper bound: every episode at its step limit"
        )


async def _run_table(
    table_id: str,
    cells: list[tuple[dict[str, Any], tuple[str, str], str]],
    setup: Setup,
    *,
    tasks: dict[str, str],
    episodes: int,
    seed: int,
    results: str | None,
    progress: bool,
    run_id: str | None,
    detail_episodes: int = FORMAL_DETAIL_EPISODES,
) -> Reproduction:
    """Run ``cells`` = (condition columns, (player 1, player 2), task), each ``episodes`` times from ``seed``
    (§4.2), and build the contract rows: a cell's mean and sample SD (the paper's "variance"), one row per episode."""
    from tqdm.auto import tqdm

    experiment = f"{PAPER_ID}.{table_id}"
    _announce(setup, [(players, task) for _, players, task in cells], episodes, tasks)
    log = RunLog(
        experiment,
        run_id=run_id,
        results=results,
        meta={
            "model": setup.model,
            "source": setup.source,
            "reading": setup.reading(),
            "episodes": episodes,
            "seed": seed,
        },
        detail_episodes=detail_episodes if setup.model == "formal" and setup.chat is None else None,
    )
    setup.connect(log)
    games = {task: setup.game(task, tasks) for task in dict.fromkeys(task for _, _, task in cells)}
    bar = tqdm(total=len(cells) * episodes, desc=f"{experiment} ({setup.source})", disable=not progress)
    try:
        shared = _shared_limit(setup)

        async def cell(base: dict[str, Any], players: tuple[str, str], task: str) -> tuple[list[Any], ...]:
            game = games[task]
            base = {"paper_id": PAPER_ID, "table_id": table_id, **base, "task": task}
            condition = f"{task}:{players[0]} vs {players[1]}"
            try:
                played = await run_condition(
                    game,
                    players,
                    setup,
                    episodes=episodes,
                    seed=seed,
                    condition=condition,
                    log=log,
                    limit=shared,
                    on_episode=lambda: bar.update(1),
                )
            except NotReproduced as exc:
                bar.update(episodes)
                return _missing_rows(base, game.info.metric, setup.source, str(exc)), [], []
            return _played_cell(base, game, setup, condition, played)

        # formal cells are asked for together when worker processes play them (in the order of the cells)
        together = len(cells) if shared is not None or _offload.side_by_side(cells, setup) else 1
        done = await run_jobs(cells, cell, parallel=max(1, together), desc=experiment, unit="cell", progress=False)
    finally:
        bar.close()
        log.close()
    table, per_episode, readings, weights = _table_of(done, setup, results)
    write_orders(table_id, setup, log.run_id, results)
    return Reproduction(
        table=table,
        episodes=pd.DataFrame(per_episode),
        run_id=log.run_id,
        readings=readings,
        weights=weight_frame(weights),
    )


def write_orders(table_id: str, setup: Setup, run_id: str, results: str | None) -> None:
    """Which order each agent of an LLM run of :data:`ORDER_TABLES`, or of your agent's run, played: units
    ``adaptive_tom.<table_id>_orders`` from every step its log keeps (:func:`._orders.write_order_units`)."""
    if (setup.chat is not None and table_id in ORDER_TABLES) or table_id == YOURS:
        write_order_units(run_id, f"{table_id}_orders", setup.source, results)


def _shared_limit(setup: Setup) -> asyncio.Semaphore | None:
    """One limit of LLM episodes in flight (the model's concurrency) for all of a table's cells: a condition's 30
    episodes alone would leave most of a 64-slot endpoint idle. None for formal cells, which run one after another."""
    return asyncio.Semaphore(in_flight(None, setup.chat.concurrency)) if setup.chat is not None else None


def _played_cell(
    base: dict[str, Any], game: Game, setup: Setup, condition: str, played: Sequence[EpisodeResult]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """A played cell's table rows (mean and SD of the task's metric), its rows per episode, and A-ToM's weights."""
    metric = game.info.metric
    scores = [r.score for r in played]
    prefer = setup.readings(game)["prefer"]  # per game: its own default where none is set
    return (
        _cell_rows(base, metric, scores, setup.source),
        [
            {
                **base,
                "episode": i,
                "score": r.score,
                "steps": r.steps,
                "metric": metric,
                "source": setup.source,
                "prefer": prefer,
            }
            for i, r in enumerate(played)
        ],
        weight_steps(condition, played),
    )


def _table_of(
    done: Sequence[tuple[list[Any], ...]], setup: Setup, results: str | None
) -> tuple[pd.DataFrame, list[dict[str, Any]], dict[str, Any], list[dict[str, Any]]]:
    """The cells' outcomes, in the order of the cells however they finished, as the table with the paper's values
    beside it, the rows per episode (written as units), the run's readings and A-ToM's weights."""
    rows: list[dict[str, Any]] = []
    per_episode: list[dict[str, Any]] = []
    weights: list[dict[str, Any]] = []
    for cell_rows, cell_episodes, cell_weights in done:
        rows += cell_rows
        per_episode += cell_episodes
        weights += cell_weights
    table = attach_paper_values(pd.DataFrame(rows))
    write_episode_units(per_episode, results, setup.readings())
    readings = {**setup.readings(), **({"prefer": setup.prefer} if setup.prefer else {})}
    return table, per_episode, readings, weights
