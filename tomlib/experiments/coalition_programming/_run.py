"""Running the coalition paper's iterative programming (``coalition-matching-iclr-draft.txt`` §6.1, §6.3; Algorithm 1
of §5.1): every (task, condition, seed) episode of one model, logged to one run log, then every engineer's code
through the sandbox, whose tests decide Pass@1 (Table 3, §6.3)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tomlib.coalition import check_selection
from tomlib.datasets import CodeTask
from tomlib.experiments._jobs import in_flight, run_jobs
from tomlib.experiments.coalition_programming._checks import check_protocol
from tomlib.experiments.coalition_programming._cost import estimate
from tomlib.experiments.coalition_programming._presets import BENCHMARKS, load_tasks
from tomlib.llm import ChatModel, source_of
from tomlib.programming import Episode, PMHistory, TeamConfig, check_episodes, run_episode
from tomlib.sandbox import describe_sandbox, require_sandbox, sandbox_mode
from tomlib.trace import RunLog, logging_to


@dataclass
class Runs:
    """Episodes of one model and the run log that holds every step of them."""

    model: str
    episodes: list[Episode]
    run_id: str
    results: str | None = None  # where the run was logged: the tables write their units there

    @property
    def source(self) -> str:
        return source_of(self.model)


async def run_programming(
    configs: Sequence[TeamConfig],
    *,
    model: str = "local",
    llm_mode: str = "replay",
    benchmarks: Iterable[str] = BENCHMARKS,
    humaneval_tasks: int = 2,
    mbpp_tasks: int = 2,
    mbpp_split: str = "test",
    seeds: int = 1,
    experiment: str = "coalition.programming",
    results: str | None = None,
    progress: bool = True,
    parallel: int | None = None,
    chat: ChatModel | None = None,
    on_sandbox: Callable[[str], None] | None = print,
    pm_history: PMHistory = "full",
    selection: str | None = None,
    protocol: Mapping[str, str] | None = None,
) -> Runs:
    """Every (task, condition, seed) episode for one model (Algorithm 1), then every engineer's code in the sandbox.

    Args:
        configs: the conditions (§6.1; e.g. :func:`table1_configs`), each run on every task and seed.
        model: a name from ``configs/models.yaml``; ``local`` is the bundled offline model.
        llm_mode: ``replay`` (recorded transcripts only), ``auto`` (live when not recorded) or ``record``.
        benchmarks: which of HumanEval and MBPP to run (§6.1: both).
        humaneval_tasks: the first N HumanEval tasks, 0 or less for all 164 (§6.1).
        mbpp_tasks: the first N MBPP tasks, 0 or less for all of the split (§6.1: the test split's 500).
        mbpp_split: MBPP's split.
        seeds: repetitions of every episode (Tables 10-12: 3).
        experiment: the run log's name; the condition, not the notebook, keys the calls, so notebooks share them.
        results: the results folder the run is logged to (None: the project's ``results/``); the tables write
            their units there.
        progress: draw the episodes' and the checks' progress bars.
        parallel: episodes at once (None: the model's concurrency, else 8).
        chat: the model to call instead of building one from ``model`` and ``llm_mode`` (tests pass a stub).
        on_sandbox: told how the engineers' code is isolated, before the first call (None: nobody).
        pm_history: replaces every config's: what the PM's belief update sees of the past (``full``: the ICLR
            draft's a^(1:R-1); ``last``: NeurIPS eq. 1).
        selection: when given, every matching config's rule among stable coalitions (§5.1; TeamConfig.selection).
        protocol: the protocol readings to set on every config (TeamConfig fields of ``PROTOCOL_CHOICES``).
    """
    configs = _conditions(configs, pm_history, selection, protocol)
    tasks = _tasks(benchmarks, humaneval_tasks, mbpp_tasks, mbpp_split)
    isolation = require_sandbox()  # before any call is paid for: code that cannot be isolated is not run
    if chat is None:
        chat = ChatModel.from_name(model, mode=llm_mode)  # type: ignore[arg-type]
    if on_sandbox is not None:
        on_sandbox(describe_sandbox())
    if llm_mode != "replay":  # before the first live call; refused here when it exceeds the budget
        estimate(model, configs, len(tasks), seeds).announce(model)
    log = RunLog(experiment, results=results, meta=_meta(model, configs, tasks, seeds, isolation))
    log.observe(chat)
    jobs = [(t, c, s) for t in tasks for c in configs for s in range(seeds)]

    async def one(task: CodeTask, cfg: TeamConfig, seed: int) -> Episode:
        return await run_episode(chat, task, cfg, seed=seed)

    try:
        desc = f"{experiment} (llm:{model})"
        with logging_to(log):
            episodes = await run_jobs(
                jobs, one, parallel=in_flight(parallel, chat.concurrency), desc=desc, unit="episode", progress=progress
            )
            await _check_code(episodes, progress)
    finally:
        log.close()
    return Runs(model, episodes, log.run_id, results)


def _conditions(
    configs: Sequence[TeamConfig], pm_history: PMHistory, selection: str | None, protocol: Mapping[str, str] | None
) -> list[TeamConfig]:
    """``configs`` with :func:`run_programming`'s readings set: ``pm_history`` and ``protocol`` on every one,
    ``selection`` (when given) on those with matching."""
    configs = [replace(c, pm_history=pm_history, **check_protocol(protocol or {})) for c in configs]
    if selection:
        configs = [replace(c, selection=check_selection(selection, "iclr")) if c.matching else c for c in configs]
    return configs


def _tasks(benchmarks: Iterable[str], humaneval_tasks: int, mbpp_tasks: int, mbpp_split: str) -> list[CodeTask]:
    """The tasks of every benchmark, in ``benchmarks``' order."""
    return [
        t
        for b in benchmarks
        for t in load_tasks(b, humaneval_tasks if b == "humaneval" else mbpp_tasks, mbpp_split=mbpp_split)
    ]


def _meta(
    model: str, configs: Sequence[TeamConfig], tasks: Sequence[CodeTask], seeds: int, isolation: Iterable[str]
) -> dict[str, Any]:
    """The run log's description of the run: model, conditions, tasks, seeds and how code is isolated."""
    return {
        "model": model,
        "source": source_of(model),
        "conditions": [c.label for c in configs],
        "tasks": [t.task_id for t in tasks],
        "seeds": seeds,
        "sandbox": {"mode": sandbox_mode(), "isolation": list(isolation)},
    }


async def _check_code(episodes: list[Episode], progress: bool) -> None:
    """Every engineer's code of ``episodes`` through the sandbox (``check_episodes``), counted on a progress bar; the
    outcomes are recorded to the run log in force (``asyncio.to_thread`` carries it to the checking thread)."""
    from tqdm.auto import tqdm

    n_checks = sum(len(r.turns) for e in episodes for r in e.rounds)  # check_episodes reports every turn
    lock = threading.Lock()  # reports come from the sandbox's threads, and tqdm's count is not atomic

    def checked(_res: object) -> None:
        with lock:
            cbar.update(1)

    # in a notebook a bar closed below its total is drawn red: only a failed check run leaves it so
    with tqdm(total=n_checks, desc="running the engineers' code", unit="check", disable=not progress) as cbar:
        await asyncio.to_thread(check_episodes, episodes, progress=checked)
