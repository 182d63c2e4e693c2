"""The adaptive-ToM paper's experiments (``adaptive-tom-aaai2026.txt`` §4-§6): Tables 1-4 and Fig. 3.

Each ``table*`` coroutine runs every condition of a table for ``episodes`` repetitions from ``seed`` and
returns a :class:`Reproduction`: the table in the results-contract long form (mean and sample standard
deviation per cell, which is what the paper prints as "variance") plus one row per episode.

``model="formal"`` uses the exact ToM-k agents (source ``formal``); any configured model name runs the LLM
agents (source ``llm:<model>``), replayed or live according to ``llm_mode``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from tomlib.agents import AdaptiveToMAgent, Agent, EpisodeResult, FormalToMAgent, play_episode
from tomlib.agents.adaptive import EXPERT_PREDICTIONS
from tomlib.agents.llm import HISTORY_STEPS, LLMPredictor, LLMResponder, LLMToM, LLMToMAgent
from tomlib.agents.partners import GreedyAgent, PartnerUnavailable, pbt_partner
from tomlib.agents.ppo import SOURCE_SUFFIX, Population, PPOPartner, WeightsUnavailable
from tomlib.envs import PREFERENCES, Game, NoExactModel, check_preference, load_game
from tomlib.experiments._checks import check_models, check_names, check_whole
from tomlib.experiments._cost import Estimate, price
from tomlib.experiments._jobs import in_flight, run_jobs
from tomlib.experiments._units import write_episode_units, write_units_with_truth
from tomlib.llm import ChatModel, source_of
from tomlib.report import attach_paper_values, paper_table
from tomlib.trace import RunLog

PAPER_ID = "adaptive_tom"
TASKS: dict[str, str] = {
    "memory_1": "matrix(memory=1)",
    "memory_n": "matrix(memory=n)",
    "game1": "grid(layout=game1)",
    "game2": "grid(layout=game2)",
    "overcooked": "overcooked",
}
THREE_ACTION_TASKS: dict[str, str] = {
    "memory_1": "matrix(memory=1,actions=3)",
    "memory_n": "matrix(memory=n,actions=3)",
}
FIXED = ("ToM-0", "ToM-1", "ToM-2")
TABLE1_PAIRS = [(a, b) for a in FIXED for b in FIXED]
ATOM = {"FTL": "A-ToM (FTL)", "Hedge": "A-ToM (Hedge)"}
TABLE3_AGENTS = ("ToM-0", "ToM-1", "ToM-2", "Greedy", "PBT", "A-ToM (FTL)", "A-ToM (Hedge)")
PBT_CHOICES = ("none", "ppo-selfplay")
STAND_IN_NOTE = (
    "stand-in, not the paper's PBT: a PPO self-play population trained on our kitchen and task "
    "(tomlib.agents.ppo; data/partners)"
)


@functools.cache
def stand_in_population() -> Population:
    """The PPO stand-in for PBT on the Overcooked task's kitchen, read and checked once per process."""
    return Population.load(load_task("overcooked"))


class NotReproduced(RuntimeError):
    """A condition we cannot run here (e.g. a pretrained partner we do not have); the message says why."""


@dataclass
class Setup:
    """How agents are built: formal, or LLM agents on a model."""

    model: str = "formal"
    llm_mode: str = "replay"
    temperature: float = 0.1
    chat: ChatModel | None = None
    tie_break: str = "independent"
    """The formal agents' tie model (:func:`tomlib.tom.tie_stream`); the paper says nothing of ties."""
    tie_epsilon: float = 0.0
    prefer: str = ""
    """What formal agents prefer among equally good joint moves in the grid worlds and the kitchen
    (:data:`tomlib.envs.PREFERENCES`); "" leaves each game's default (the grid: own progress; the kitchen: none)."""
    llm_history: int = HISTORY_STEPS
    """How many of the last joint actions LLM agents see in each prompt (0: none; the matrix game shows none)."""
    carry_losses: bool = False
    """A-ToM's expert losses: afresh every episode (the default; the paper does not say) or carried across the
    episodes of a condition, which then run one after another with the same A-ToM agent."""
    expert_prediction: str = "draw"
    """How formal A-ToM's experts predict among equally good actions and are charged
    (:data:`tomlib.agents.adaptive.EXPERT_PREDICTIONS`); the paper's Algorithms give one action and a 0/1 loss."""
    pbt: str = "none"
    """Who plays PBT's seat: ``none`` (not reproduced: no pretrained population offline) or ``ppo-selfplay``, the
    labelled stand-in of :mod:`tomlib.agents.ppo`; its rows' source then ends in ``+ppo:selfplay``."""
    ppo_member: int | None = None
    """The stand-in's member: drawn per episode (None, the default) or pinned."""
    ppo_deterministic: bool = False
    """The stand-in samples its policy (the default) or plays the most likely action."""

    def __post_init__(self) -> None:
        if self.pbt not in PBT_CHOICES:
            raise ValueError(f"pbt must be one of {', '.join(PBT_CHOICES)}; got {self.pbt!r}")
        if self.prefer:
            check_preference(self.prefer)
        if self.expert_prediction not in EXPERT_PREDICTIONS:
            raise ValueError(
                f"expert_prediction must be one of {', '.join(EXPERT_PREDICTIONS)}; got {self.expert_prediction!r}"
            )

    def game(self, task: str, tasks: dict[str, str] = TASKS) -> Game:
        """The task's game, with this setup's ``prefer`` where the game has that reading."""
        game = load_task(task, tasks)
        return load_game(tasks[task], prefer=self.prefer) if self.prefer and hasattr(game, "prefer") else game

    def readings(self, game: Game | None = None) -> dict[str, str]:
        """The readings (``data/readings/adaptive_tom.csv``) as the units tables' columns, so a run under another
        reading sits beside the default's instead of replacing it: ``tie_break`` for formal agents (``independent``
        or ``shared(ε=…)``) and, given the game, its ``prefer``; ``llm_history`` for LLM agents; ``carry_losses``
        for both (empty where one does not apply)."""
        formal = self.model == "formal"
        ties = "independent" if self.tie_break == "independent" else f"shared(ε={self.tie_epsilon:g})"
        out = {
            "tie_break": ties if formal else "",
            "expert_prediction": self.expert_prediction if formal else "",
            "llm_history": "" if formal else str(self.llm_history),
            "carry_losses": str(self.carry_losses),
        }
        if game is not None:
            out["prefer"] = str(getattr(game, "prefer", "")) if formal else ""
        return out

    @property
    def source(self) -> str:
        base = "formal" if self.model == "formal" else source_of(self.model)
        return base + (SOURCE_SUFFIX if self.pbt == "ppo-selfplay" else "")

    def connect(self, log: RunLog) -> None:
        if self.model != "formal" and self.chat is None:
            self.chat = ChatModel.from_name(self.model, mode=self.llm_mode)  # type: ignore[arg-type]
        if self.chat is not None:
            log.observe(self.chat)

    def agent(self, spec: str) -> Agent:
        """``ToM-0``/``ToM-1``/``ToM-2``, ``A-ToM (FTL)``, ``A-ToM (Hedge)``."""
        if re.fullmatch(r"ToM-\d", spec):
            order = int(spec.removeprefix("ToM-"))
            if self.chat is None:
                return FormalToMAgent(order, tie_break=self.tie_break, tie_epsilon=self.tie_epsilon)  # type: ignore[arg-type]
            return LLMToMAgent(order, LLMToM(self.chat, temperature=self.temperature, history_steps=self.llm_history))
        if spec in ATOM.values():
            algorithm = "ftl" if "FTL" in spec else "hedge"
            if self.chat is None:
                return AdaptiveToMAgent(
                    algorithm,  # type: ignore[arg-type]
                    tie_break=self.tie_break,  # type: ignore[arg-type]
                    tie_epsilon=self.tie_epsilon,
                    carry_losses=self.carry_losses,
                    expert_prediction=self.expert_prediction,
                )
            llm = LLMToM(self.chat, temperature=self.temperature, history_steps=self.llm_history)
            return AdaptiveToMAgent(
                algorithm,  # type: ignore[arg-type]
                predictor=LLMPredictor(llm),
                responder=LLMResponder(llm),
                carry_losses=self.carry_losses,
            )
        if spec == "Greedy":
            return GreedyAgent()
        if spec == "PBT":
            try:
                if self.pbt == "none":
                    return pbt_partner()
                return PPOPartner(stand_in_population(), self.ppo_member, self.ppo_deterministic)
            except (PartnerUnavailable, WeightsUnavailable) as exc:
                raise NotReproduced(f"not reproduced: {exc}") from None
        raise ValueError(f"unknown agent {spec!r}; use ToM-0, ToM-1, ToM-2, {', '.join(ATOM.values())}, Greedy, PBT")

    def check_playable(self, game: Game, players: Sequence[str]) -> None:
        """Formal ToM agents need the game's exact joint values; say so before playing if it has none."""
        if self.chat is None and not game.has_exact_values and any(p != "Greedy" for p in players):
            try:
                game.joint_value(game.reset(0), ("stay", "stay"))
            except NoExactModel as exc:
                raise NotReproduced(f"not reproduced: {exc}") from None


@dataclass
class Reproduction:
    """A reproduced table: contract rows, per-episode scores, and the run log that holds every step."""

    table: pd.DataFrame
    episodes: pd.DataFrame
    run_id: str
    readings: dict[str, str] = field(default_factory=dict)  # the readings it ran under, as units columns


AGENT_NAMES = ["ToM-0", "ToM-1", "ToM-2", *ATOM.values(), "Greedy", "PBT"]


def check_parameters(
    *,
    model: str,
    llm_mode: str,
    episodes: Any,
    llm_episodes: Any,
    seed: Any,
    tasks: Any = None,
    llm_tasks: Any = None,
    llm_agents: Any = None,
    tie_break: str = "independent",
    tie_epsilon: Any = 0.0,
    fig3_episode: Any = 0,
    llm_history: Any = HISTORY_STEPS,
    pbt: Any = "none",
    prefer: Any = "",
    expert_prediction: Any = "draw",
) -> None:
    """Notebooks 01-05's parameters, before any work: whole repetition counts, a configured model (or "" for
    none), a known mode, known task and agent names, a tie model, a preference among equal moves and who plays PBT's
    seat."""
    from tomlib.tom import TIE_BREAKS

    if pbt not in PBT_CHOICES:
        raise ValueError(
            f"parameter pbt must be one of {', '.join(PBT_CHOICES)} (ppo-selfplay: the labelled PPO stand-in); "
            f"got {pbt!r}"
        )
    if prefer != "" and prefer not in PREFERENCES:
        raise ValueError(
            f'parameter prefer must be one of {", ".join(PREFERENCES)}, or "" for each game\'s own; got {prefer!r}'
        )
    if expert_prediction not in EXPERT_PREDICTIONS:
        raise ValueError(
            f"parameter expert_prediction must be one of {', '.join(EXPERT_PREDICTIONS)}; got {expert_prediction!r}"
        )
    if tie_break not in TIE_BREAKS:
        raise ValueError(f"parameter tie_break must be one of {', '.join(TIE_BREAKS)}; got {tie_break!r}")
    if isinstance(tie_epsilon, bool) or not isinstance(tie_epsilon, int | float) or not 0 <= tie_epsilon <= 1:
        raise ValueError(f"parameter tie_epsilon is a probability in [0, 1]; got {tie_epsilon!r}")
    check_whole("episodes", episodes, 1)
    check_whole("llm_episodes", llm_episodes, 1)
    check_whole("seed", seed, None)
    check_whole("fig3_episode", fig3_episode, 0)
    check_whole("llm_history", llm_history, 0)
    if not isinstance(model, str):
        raise TypeError(f'parameter model must be a model name from configs/models.yaml or ""; got {model!r}')
    if model:
        check_models(model, llm_mode)
    for name, value in (("tasks", tasks), ("llm_tasks", llm_tasks)):
        if value is not None:
            check_names(name, value, list(TASKS))
    if llm_agents is not None:
        check_names("llm_agents", llm_agents, AGENT_NAMES)


def load_task(task: str, tasks: dict[str, str] = TASKS) -> Game:
    """The game behind a task name (``memory_1``, ``game2``, ``overcooked``, ...)."""
    if task not in tasks:
        raise ValueError(f"unknown task {task!r}; known: {', '.join(tasks)}")
    return load_game(tasks[task])


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
    model's concurrency), or under ``limit``, a semaphore shared with other conditions; formal ones in turn."""
    for p in players:
        setup.agent(p)  # a partner that cannot be built fails here, before any episode runs
    setup.check_playable(game, players)
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
            result = await play_episode(game, agents, seed=seed, episode=ep, condition=condition, log=log)
            on_episode()
            return result

    return list(await asyncio.gather(*(one(ep) for ep in range(episodes))))


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
    an upper bound, every episode taken to the task's step limit (grid and Overcooked episodes often end sooner)."""
    horizon = {t: load_task(t, tasks).info.horizon for t in dict.fromkeys(t for _, t in cells)}
    calls = sum(episodes * horizon[t] * (CALLS_PER_STEP[a] + CALLS_PER_STEP[b]) for (a, b), t in cells)
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
) -> Reproduction:
    """Run ``cells`` = (condition columns, (player 1, player 2), task) and build the contract rows."""
    from tqdm.auto import tqdm

    experiment = f"{PAPER_ID}.{table_id}"
    _announce(setup, [(players, task) for _, players, task in cells], episodes, tasks)
    log = RunLog(
        experiment,
        run_id=run_id,
        results=results,
        meta={"model": setup.model, "source": setup.source, "episodes": episodes, "seed": seed},
    )
    setup.connect(log)
    rows: list[dict[str, Any]] = []
    per_episode: list[dict[str, Any]] = []
    games = {task: setup.game(task, tasks) for task in dict.fromkeys(task for _, _, task in cells)}
    bar = tqdm(total=len(cells) * episodes, desc=f"{experiment} ({setup.source})", disable=not progress)
    try:
        # LLM cells run together under one limit of episodes in flight (the model's concurrency): a condition's 30
        # episodes alone would leave most of a 64-slot endpoint idle; formal cells run one after another
        shared = asyncio.Semaphore(in_flight(None, setup.chat.concurrency)) if setup.chat is not None else None

        async def cell(base: dict[str, Any], players: tuple[str, str], task: str) -> tuple[list[Any], list[Any]]:
            game = games[task]
            metric = game.info.metric
            base = {"paper_id": PAPER_ID, "table_id": table_id, **base, "task": task}
            try:
                played = await run_condition(
                    game,
                    players,
                    setup,
                    episodes=episodes,
                    seed=seed,
                    condition=f"{task}:{players[0]} vs {players[1]}",
                    log=log,
                    limit=shared,
                    on_episode=lambda: bar.update(1),
                )
            except NotReproduced as exc:
                bar.update(episodes)
                return _missing_rows(base, metric, setup.source, str(exc)), []
            scores = [r.score for r in played]
            prefer = setup.readings(game)["prefer"]  # per game: its own default where none is set
            return _cell_rows(base, metric, scores, setup.source), [
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
            ]

        together = len(cells) if shared is not None else 1
        done = await run_jobs(cells, cell, parallel=max(1, together), desc=experiment, unit="cell", progress=False)
        for cell_rows, cell_episodes in done:  # in the order of the cells, however they finished
            rows += cell_rows
            per_episode += cell_episodes
    finally:
        bar.close()
        log.close()
    table = attach_paper_values(pd.DataFrame(rows))
    write_episode_units(per_episode, results, setup.readings())
    readings = {**setup.readings(), **({"prefer": setup.prefer} if setup.prefer else {})}
    return Reproduction(table=table, episodes=pd.DataFrame(per_episode), run_id=log.run_id, readings=readings)


def alignment(a: str, b: str) -> str:
    """The paper's grouping: orders k and k±1 are aligned, anything else misaligned (§3.2)."""
    ka, kb = int(a.removeprefix("ToM-")), int(b.removeprefix("ToM-"))
    return "aligned" if abs(ka - kb) == 1 else "misaligned"


def pair_cells(tasks: Sequence[str], pairs: Sequence[tuple[str, str]]) -> list[Any]:
    """Fixed-order cells for Tables 1 and 4: (condition columns, the two players, task)."""
    return [({"alignment": alignment(a, b), "player1": a, "player2": b}, (a, b), t) for t in tasks for a, b in pairs]


async def table1(
    *,
    model: str = "formal",
    llm_mode: str = "replay",
    tasks: Sequence[str] = tuple(TASKS),
    pairs: Sequence[tuple[str, str]] = TABLE1_PAIRS,
    episodes: int = 30,
    seed: int = 42,
    temperature: float = 0.1,
    results: str | None = None,
    progress: bool = True,
    run_id: str | None = None,
    chat: ChatModel | None = None,
    **options: Any,
) -> Reproduction:
    """Table 1: the nine fixed-order pairs, in both seats, on every task. ``options``: :class:`Setup`'s agent options
    (the tie model, A-ToM's losses, the LLM prompts' history), as in every table below."""
    cells = pair_cells(tasks, pairs)
    setup = Setup(model=model, llm_mode=llm_mode, temperature=temperature, chat=chat, **options)
    return await _run_table(
        "table1",
        cells,
        setup,
        tasks=TASKS,
        episodes=episodes,
        seed=seed,
        results=results,
        progress=progress,
        run_id=run_id,
    )


def table2_pairs(algorithms: Sequence[str] = ("FTL", "Hedge")) -> list[tuple[str, str, str]]:
    """(algorithm, player 1, player 2) in the paper's row order."""
    out = []
    for algo in algorithms:
        for k in FIXED:
            out += [(algo, "A-ToM", k), (algo, k, "A-ToM")]
        out.append((algo, "A-ToM", "A-ToM"))
    return out


async def table2(
    *,
    model: str = "formal",
    llm_mode: str = "replay",
    tasks: Sequence[str] = tuple(TASKS),
    algorithms: Sequence[str] = ("FTL", "Hedge"),
    episodes: int = 30,
    seed: int = 42,
    temperature: float = 0.1,
    results: str | None = None,
    progress: bool = True,
    run_id: str | None = None,
    chat: ChatModel | None = None,
    **options: Any,
) -> Reproduction:
    """Table 2: A-ToM (FTL, Hedge) with ToM-0/1/2 partners in both seats, and with itself."""
    cells = []
    for task in tasks:
        for algo, a, b in table2_pairs(algorithms):
            players = (ATOM[algo] if a == "A-ToM" else a, ATOM[algo] if b == "A-ToM" else b)
            cells.append(({"algorithm": algo, "player1": a, "player2": b}, players, task))
    setup = Setup(model=model, llm_mode=llm_mode, temperature=temperature, chat=chat, **options)
    return await _run_table(
        "table2",
        cells,
        setup,
        tasks=TASKS,
        episodes=episodes,
        seed=seed,
        results=results,
        progress=progress,
        run_id=run_id,
    )


async def table4(
    *,
    model: str = "formal",
    llm_mode: str = "replay",
    tasks: Sequence[str] = tuple(THREE_ACTION_TASKS),
    pairs: Sequence[tuple[str, str]] = TABLE1_PAIRS,
    episodes: int = 30,
    seed: int = 42,
    temperature: float = 0.9,
    results: str | None = None,
    progress: bool = True,
    run_id: str | None = None,
    chat: ChatModel | None = None,
    **options: Any,
) -> Reproduction:
    """Table 4: the 3-action matrix game; LLMs at temperature 0.9, formal agents with random tie-breaking
    (two replies coordinate with every partner choice, so ties are where their randomness lives)."""
    cells = pair_cells(tasks, pairs)
    setup = Setup(model=model, llm_mode=llm_mode, temperature=temperature, chat=chat, **options)
    return await _run_table(
        "table4",
        cells,
        setup,
        tasks=THREE_ACTION_TASKS,
        episodes=episodes,
        seed=seed,
        results=results,
        progress=progress,
        run_id=run_id,
    )


async def fig3(
    *,
    model: str = "formal",
    llm_mode: str = "replay",
    tasks: Sequence[str] = ("game1", "game2", "memory_1"),
    partners: Sequence[str] = ("ToM-0", "ToM-1"),
    episodes: int = 30,
    seed: int = 42,
    temperature: float = 0.1,
    results: str | None = None,
    progress: bool = True,
    run_id: str | None = None,
    chat: ChatModel | None = None,
    **options: Any,
) -> Reproduction:
    """Fig. 3: normalized expert weights P^(k) of A-ToM (Hedge, seat 1) over the steps of an episode, with a
    ToM-0 and with a ToM-1 partner, averaged over episodes (read back from the run log)."""
    from tomlib.trace import load_runs

    cells = [({"player1": "A-ToM", "player2": p}, (ATOM["Hedge"], p), task) for task in tasks for p in partners]
    setup = Setup(model=model, llm_mode=llm_mode, temperature=temperature, chat=chat, **options)
    run = await _run_table(
        "fig3",
        cells,
        setup,
        tasks=TASKS,
        episodes=episodes,
        seed=seed,
        results=results,
        progress=progress,
        run_id=run_id,
    )
    events = load_runs(results, run_ids=[run.run_id], kinds=["expert_weights"])
    events = events[events["agent"] == "player1"]
    rows = []
    for (condition, step), part in events.groupby(["condition", "step"], sort=True):
        task, pair = str(condition).split(":", 1)
        probs = pd.DataFrame(part["payload"].map(lambda p: p["probabilities"]).tolist())
        orders = part["payload"].iloc[0]["orders"]
        for i, k in enumerate(orders):
            rows.append(
                {
                    "paper_id": PAPER_ID,
                    "table_id": "fig3",
                    "task": task,
                    "player1": "A-ToM",
                    "player2": pair.split(" vs ")[1],
                    "step": int(step),
                    "expert": f"ToM-{k}",
                    "episodes_at_step": len(part),
                    "metric": "normalized_weight",
                    "value": round(float(probs[i].mean()), 4),
                    "source": setup.source,
                }
            )
    table = pd.DataFrame(rows)
    table["paper_value"] = float("nan")
    write_units_with_truth(final_weight_units(events, setup), results)
    return Reproduction(table=table, episodes=run.episodes, run_id=run.run_id)


def final_weight_units(events: pd.DataFrame, setup: Setup) -> pd.DataFrame:
    """Fig. 3's units: per episode and expert, A-ToM's normalized weight P^(k) at the episode's last step (the
    claim that it identifies its partner's order reads the matching expert's)."""
    rows = []
    if events.empty:
        return pd.DataFrame(rows)
    last = events.sort_values("step").groupby(["condition", "episode"], sort=True).tail(1)
    games: dict[str, Game] = {}
    for condition, episode, payload in zip(last["condition"], last["episode"], last["payload"], strict=True):
        task, pair = str(condition).split(":", 1)
        game = games.setdefault(task, setup.game(task))
        for k, p in zip(payload["orders"], payload["probabilities"], strict=True):
            rows.append(
                {
                    "paper_id": PAPER_ID,
                    "table_id": "fig3_weights",
                    "task": task,
                    "player1": "A-ToM",
                    "player2": pair.split(" vs ")[1],
                    "episode": int(episode),
                    "expert": f"ToM-{k}",
                    "metric": "final_weight",
                    "value": round(float(p), 6),
                    "source": setup.source,
                    **setup.readings(game),
                }
            )
    return pd.DataFrame(rows)


TIE_EPSILONS = (0.0, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0)
"""ε of the shared tie model from 0 (a shared default always) to 1 (every tie drawn independently)."""
MEMORY_N_STUCK = (("ToM-0", "ToM-0"), ("ToM-0", "ToM-2"), ("ToM-2", "ToM-0"), ("ToM-2", "ToM-2"))
"""Table 1's Memory-N cells that a tie decides (ToM-1 vs ToM-1 never coordinates; the aligned pairs always do)."""


async def tie_sensitivity(
    epsilons: Sequence[float] = TIE_EPSILONS, *, episodes: int = 30, seed: int = 42, results: str | None = None
) -> pd.DataFrame:
    """How the formal agents' tie model sets cells the paper prints: for each ε of the shared model (each agent takes
    the shared default at a tie and draws independently with probability ε), Table 1's four tie-decided Memory-N
    cells and Table 4's aligned-minus-misaligned gap per task, beside the paper's. A measured statement of what the
    paper's LLM must do at ties, not a prediction: ε is not given anywhere."""
    rows = []
    for eps in epsilons:
        kw = {"episodes": episodes, "seed": seed, "results": results, "progress": False, "tie_break": "shared"}
        t1 = (await table1(tasks=["memory_n"], pairs=list(MEMORY_N_STUCK), tie_epsilon=eps, **kw)).table  # type: ignore[arg-type]
        for _, r in t1[t1["metric"] == "point"].iterrows():
            rows.append(
                {
                    "epsilon": eps,
                    "table": "Table 1, Memory-N",
                    "cell": f"{r['player1']} vs {r['player2']}",
                    "value": r["value"],
                    "paper_value": r["paper_value"],
                }
            )
        t4 = (await table4(tie_epsilon=eps, **kw)).table  # type: ignore[arg-type]
        t4 = t4[t4["metric"] == "point"]
        for task, part in t4.groupby("task", sort=False):
            mean = part.groupby("alignment")[["value", "paper_value"]].mean()
            gap = mean.loc["aligned"] - mean.loc["misaligned"]
            rows.append(
                {
                    "epsilon": eps,
                    "table": "Table 4, aligned − misaligned",
                    "cell": str(task),
                    "value": round(float(gap["value"]), 2),
                    "paper_value": round(float(gap["paper_value"]), 2),
                }
            )
    return pd.DataFrame(rows)


def plot_tie_sensitivity(frame: pd.DataFrame) -> Any:
    """Each cell against ε (log-spaced axis from 0), the paper's value as a marker of the same colour at the right."""
    import matplotlib.pyplot as plt

    tables = list(dict.fromkeys(frame["table"]))
    fig, axes = plt.subplots(1, len(tables), figsize=(5.6 * len(tables), 3.6), squeeze=False)
    for ax, name in zip(axes[0], tables, strict=True):
        part = frame[frame["table"] == name]
        for i, (cell, rows) in enumerate(part.groupby("cell", sort=False)):
            color = f"C{i}"
            ax.plot(rows["epsilon"], rows["value"], marker="o", ms=3, color=color, label=cell)
            ax.scatter([1.08], [rows["paper_value"].iloc[0]], marker="D", color=color, clip_on=False, zorder=3)
        ax.set_xscale("symlog", linthresh=0.025, linscale=0.5)
        ticks = [0, 0.025, 0.05, 0.1, 0.2, 0.5, 1]
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        ax.minorticks_off()
        ax.set_xlim(0, 1.15)
        ax.set_xlabel("ε, the chance a tie is drawn independently (0: shared, 1: independent)", fontsize=8)
        ax.set_ylabel("points")
        ax.set_title(f"{name} (◆ the paper)", fontsize=9)
        ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig


PREFER_TASKS = ("game1", "game2", "overcooked")
"""The tasks whose formal agents have a ``prefer`` reading (the matrix games have no notion of progress)."""
PREFER_TABLES = ("table1", "table2", "table3", "fig3")


@functools.cache
def default_prefer(task: str) -> str:
    """A task's game's own default preference (the grid: ``own``; the kitchen: ``none``)."""
    return str(getattr(load_task(task), "prefer", ""))


async def _run_under(table: str, tasks: Sequence[str], kw: dict[str, Any]) -> Reproduction:
    """One formal table on ``tasks`` under the options in ``kw`` (readings, episodes, seed, results)."""
    if table == "table1":
        return await table1(tasks=list(tasks), **kw)
    if table == "table2":
        return await table2(tasks=list(tasks), **kw)
    if table == "table3":
        return await table3(agents=[a for a in TABLE3_AGENTS if a != "PBT"], **kw)
    return await fig3(tasks=list(tasks), **kw)


async def prefer_sensitivity(
    table: str,
    *,
    default: Reproduction | None = None,
    prefers: Sequence[str] = PREFERENCES,
    tasks: Sequence[str] = PREFER_TASKS,
    episodes: int = 30,
    seed: int = 42,
    results: str | None = None,
    **options: Any,
) -> pd.DataFrame:
    """How the formal agents' preference among equally good moves (``prefer``, a reading the paper does not state)
    sets one table's grid and kitchen cells: every cell under every preference, beside the paper's value. A task runs
    under each preference other than its game's default; the default's cells come from ``default`` (the table as
    the notebook ran it, under the same ``options``; run here when not given). Each run writes its units beside the
    default's, so the claims are judged under each preference. ``table``: ``table1``, ``table2``, ``table3`` (with
    §6.1's weights against Greedy) or ``fig3`` (A-ToM's last-step weight on its partner's order, averaged)."""
    if table not in PREFER_TABLES:
        raise ValueError(f"table must be one of {', '.join(PREFER_TABLES)}; got {table!r}")
    tasks = ["overcooked"] if table == "table3" else [t for t in tasks if t in PREFER_TASKS]
    kw: dict[str, Any] = {"episodes": episodes, "seed": seed, "results": results, "progress": False, **options}
    rows: list[dict[str, Any]] = []
    for prefer in prefers:
        mine = list(tasks)
        if default is not None:  # the default run holds each task under its game's own preference
            same = [t for t in tasks if default_prefer(t) == prefer]
            rows += [{**r, "prefer": prefer} for r in _cells(table, default, same, results, {"prefer": prefer})]
            mine = [t for t in tasks if default_prefer(t) != prefer]
        if mine:
            run = await _run_under(table, mine, {**kw, "prefer": prefer})
            rows += [{**r, "prefer": prefer} for r in _cells(table, run, mine, results, {"prefer": prefer})]
    return pd.DataFrame(rows, columns=["table", "task", "cell", "value", "paper", "prefer"])


async def under_readings(
    table: str,
    variants: dict[str, dict[str, Any]],
    *,
    default: Reproduction,
    tasks: Sequence[str] = tuple(TASKS),
    episodes: int = 30,
    seed: int = 42,
    results: str | None = None,
) -> pd.DataFrame:
    """One formal table under other readings (``variants``: a label such as ``carry_losses=True`` -> the Setup options
    that make it), every cell beside the default run's and the paper's. Formal agents need no model calls, so the
    claims resting on the table are judged under each (the runs write their units beside the default's)."""
    tasks = ["overcooked"] if table == "table3" else list(tasks)
    kw: dict[str, Any] = {"episodes": episodes, "seed": seed, "results": results, "progress": False}
    rows = [{**r, "reading": "default"} for r in _cells(table, default, tasks, results, default.readings)]
    for label, options in variants.items():
        run = await _run_under(table, tasks, {**kw, **options})
        rows += [{**r, "reading": label} for r in _cells(table, run, tasks, results, run.readings)]
    return pd.DataFrame(rows)


def reading_variants(
    *,
    tie_break: str = "independent",
    tie_epsilon: float = 0.0,
    carry_losses: bool = False,
    expert_prediction: str = "draw",
) -> dict[str, dict[str, Any]]:
    """The other readings a formal A-ToM table is judged under, against a notebook's own: A-ToM's losses the other
    way (``carry_losses``), the other tie model (shared at ε = 0 against independent ties, else independent) and the
    experts' other ways to predict (``expert_prediction``); each changes one reading and keeps the rest."""
    own = {
        "tie_break": tie_break,
        "tie_epsilon": tie_epsilon,
        "carry_losses": carry_losses,
        "expert_prediction": expert_prediction,
    }
    other_ties = (
        {"tie_break": "shared", "tie_epsilon": 0.0} if tie_break == "independent" else {"tie_break": "independent"}
    )
    ties_label = "tie_break=shared(ε=0)" if tie_break == "independent" else "tie_break=independent"
    out = {
        f"carry_losses={not carry_losses}": {**own, "carry_losses": not carry_losses},
        ties_label: {**own, **other_ties},
    }
    for mode in EXPERT_PREDICTIONS:
        if mode != expert_prediction:
            out[f"expert_prediction={mode}"] = {**own, "expert_prediction": mode}
    return out


def under_these(units: pd.DataFrame, readings: dict[str, Any]) -> pd.Series:
    """The units rows under ``readings`` (a run's), each task under its game's own ``prefer`` unless they set one
    (LLM rows carry none)."""
    mask = pd.Series(True, index=units.index)
    for column, value in readings.items():
        if column in units.columns:
            mask &= units[column].astype(str) == str(value)
    if "prefer" in units.columns and "task" in units.columns and "prefer" not in readings:
        prefer = units["prefer"].astype(str)
        mask &= (prefer == units["task"].map(default_prefer)) | (prefer == "")
    return mask


def final_weights(run: Reproduction, results: str | None = None) -> pd.DataFrame:
    """A-ToM (Hedge)'s normalized weights at the last step of each episode (Fig. 3's units), per task, partner and
    expert: the mean over the episodes, their SD and how many there are."""
    from tomlib.claims import read_units

    units = read_units(results).get(f"{PAPER_ID}.fig3_weights", pd.DataFrame())
    if units.empty:
        return pd.DataFrame()
    source = str(run.table["source"].iloc[0]) if len(run.table) else ""
    got = (
        units[under_these(units, run.readings) & (units["source"] == source)]
        .groupby(["task", "player2", "expert"])["value"]
        .agg(["mean", "std", "count"])
    )
    return got.rename(columns={"mean": "last-step weight", "std": "sd", "count": "episodes"}).round(3)


def _cells(
    table: str, run: Reproduction, tasks: Sequence[str], results: str | None, readings: dict[str, Any]
) -> list[dict[str, Any]]:
    """A formal run's cells on ``tasks``: table, task, cell, value and the paper's value (Table 3 with §6.1's weights
    against Greedy; Fig. 3 as the last-step weight on the partner's order, from the units under ``readings``)."""
    out: list[dict[str, Any]] = []
    if not tasks:
        return out
    if table in ("table1", "table2"):
        t = run.table[run.table["task"].isin(tasks) & run.table["metric"].isin(["time", "point"])]
        for r in t.to_dict("records"):
            cell = (f"{r['algorithm']}: " if table == "table2" else "") + f"{r['player1']} vs {r['player2']}"
            out.append(
                {"table": table, "task": r["task"], "cell": cell, "value": r["value"], "paper": r["paper_value"]}
            )
    elif table == "table3":
        t = run.table[run.table["metric"] == "time"]
        for r in t.to_dict("records"):
            out.append(
                {
                    "table": table,
                    "task": "overcooked",
                    "cell": r["agent_type"],
                    "value": r["value"],
                    "paper": r["paper_value"],
                }
            )
        w = expert_weights([run], results, partners=("Greedy", *FIXED))
        for r in w[w["value"].notna()].to_dict("records"):  # against Greedy, and against partners of known order
            cell = f"{r['algorithm']} vs {r['partner']}: {r['expert']}"
            out.append(
                {
                    "table": "§6.1 weights" if r["partner"] == "Greedy" else "weights, known partner",
                    "task": "overcooked",
                    "cell": cell,
                    "value": r["value"],
                    "paper": r["paper_value"],
                }
            )
    else:
        from tomlib.claims import read_units

        units = read_units(results).get(f"{PAPER_ID}.fig3_weights", pd.DataFrame())
        if units.empty:
            return out
        mask = under_these(units, readings) & (units["source"] == "formal") & units["task"].isin(tasks)
        mask &= units["expert"] == units["player2"]
        for (task, partner), part in units[mask].groupby(["task", "player2"]):
            cell = f"A-ToM (Hedge) vs {partner}: P({partner}) at the end"
            out.append(
                {
                    "table": table,
                    "task": task,
                    "cell": cell,
                    "value": round(float(part["value"].mean()), 3),
                    "paper": float("nan"),
                }
            )
    return out


def plot_prefer_sensitivity(frame: pd.DataFrame) -> Any:
    """Each task's cells (Tables 1-3) under each preference among equally good moves (bars), the paper's value marked
    (◆); one panel per task."""
    import matplotlib.pyplot as plt
    import numpy as np

    part = frame[frame["table"].isin(["table1", "table2", "table3"])]
    tasks = list(dict.fromkeys(part["task"]))
    if not tasks:  # a run of the matrix games only: no move is a step toward anything
        fig, ax = plt.subplots(figsize=(6.0, 1.2))
        ax.text(0.5, 0.5, "no grid or kitchen task in this run: nothing for a preference to decide", ha="center")
        ax.set_axis_off()
        return fig
    prefers = list(dict.fromkeys(part["prefer"]))
    widest = max((part[part["task"] == t]["cell"].nunique() for t in tasks), default=1)
    fig, axes = plt.subplots(len(tasks), 1, figsize=(max(6.0, 0.45 * widest + 2), 3.4 * len(tasks)), squeeze=False)
    for ax, task in zip(axes[:, 0], tasks, strict=True):
        mine = part[part["task"] == task]
        cells = list(dict.fromkeys(mine["cell"]))
        x = np.arange(len(cells))
        width = 0.8 / max(1, len(prefers))
        for i, prefer in enumerate(prefers):
            vals = mine[mine["prefer"] == prefer].set_index("cell")["value"].reindex(cells)
            ax.bar(x + (i - (len(prefers) - 1) / 2) * width, vals, width, label=f"prefer={prefer}")
        paper = mine.groupby("cell", sort=False)["paper"].first().reindex(cells)
        ax.scatter(x, paper, marker="D", color="black", zorder=3, label="the paper")
        ax.set_xticks(x, cells, rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("time (steps) ↓")
        ax.set_title(f"{task}: formal cells under each preference among equally good moves", fontsize=9)
        ax.legend(fontsize=7, ncols=len(prefers) + 1, loc="upper left")
    fig.tight_layout()
    return fig


LAYOUT_CELLS: dict[str, tuple[str, str]] = {
    "#": ("#4a4a4a", ""),
    "X": ("#8d6e63", "counter"),
    ".": ("#f5f5f5", ""),
    " ": ("#f5f5f5", ""),
    "1": ("#bbdefb", "1"),
    "2": ("#ffcdd2", "2"),
    "a": ("#e3f2fd", "goal 1"),
    "b": ("#ffebee", "goal 2"),
    "P": ("#ffb74d", "pot"),
    "O": ("#fff176", "onion"),
    "D": ("#cfd8dc", "dish"),
    "S": ("#a5d6a7", "serve"),
}
"""How each map character is drawn: colour and label (walls, floor, players 1/2 and their goals, kitchen parts)."""


def plot_layouts(tasks: Sequence[str] = ("game1", "game2", "overcooked")) -> Any:
    """The start state of each task's map as a picture: our layouts (the paper's Fig. 2 is not in its text)."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgb

    fig, axes = plt.subplots(1, len(tasks), figsize=(3.2 * len(tasks), 3.0), squeeze=False)
    for ax, task in zip(axes[0], tasks, strict=True):
        game = load_task(task)
        rows = game.render(game.reset(0)).splitlines()
        width = max(len(r) for r in rows)
        rows = [r.ljust(width) for r in rows]
        ax.imshow([[to_rgb(LAYOUT_CELLS.get(ch, ("#ffffff", ""))[0]) for ch in r] for r in rows])
        for y, r in enumerate(rows):
            for x, ch in enumerate(r):
                label = LAYOUT_CELLS.get(ch, ("", ch))[1]
                if label:
                    big = label in ("1", "2")
                    ax.text(
                        x, y, label, ha="center", va="center", fontsize=12 if big else 6, weight="bold" if big else None
                    )
        ax.set_xticks(range(width))
        ax.set_yticks(range(len(rows)))
        ax.tick_params(labelsize=6, length=0)
        ax.set_title(task, fontsize=9)
    fig.suptitle("Our layouts at the start of an episode (1, 2: the players)", fontsize=9)
    fig.tight_layout()
    return fig


def plot_pairs(table: pd.DataFrame, source: str, *, title: str = "") -> Any:
    """One heatmap per task: player 1 × player 2, coloured by our mean, annotated "ours (paper)"."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    df = table[(table["source"] == source) & ~table["metric"].str.endswith("_sd")]
    tasks = [t for t in dict.fromkeys(df["task"]) if df[df["task"] == t]["value"].notna().any()]
    if not tasks:
        raise ValueError(f"no reproduced cells for source {source!r}")
    fig, axes = plt.subplots(1, len(tasks), figsize=(3.4 * len(tasks), 3.2), squeeze=False)
    for ax, task in zip(axes[0], tasks, strict=True):
        part = df[df["task"] == task]
        ours = part.pivot(index="player1", columns="player2", values="value")
        paper = part.pivot(index="player1", columns="player2", values="paper_value").reindex_like(ours)
        notes = ours.map(lambda v: f"{v:.1f}") + paper.map(lambda v: "" if pd.isna(v) else f"\n({v:.1f})")
        higher = part["metric"].iloc[0] == "point"
        cmap = "viridis" if higher else "viridis_r"
        sns.heatmap(ours, annot=notes, fmt="", cmap=cmap, cbar=False, ax=ax, vmin=0, vmax=75 if higher else None)
        ax.set_title(f"{task} ({'points ↑' if higher else 'time ↓'})")
        ax.set_xlabel("player 2")
        ax.set_ylabel("player 1")
    fig.suptitle(title or f"{source}: ours (paper in parentheses)")
    fig.tight_layout()
    return fig


def plot_fig3(table: pd.DataFrame) -> Any:
    """Normalized expert weights P^(k) over steps, one panel per task and partner (the paper's Fig. 3)."""
    import seaborn as sns
    from matplotlib.ticker import MaxNLocator

    experts = sorted(table["expert"].unique())
    grid = sns.relplot(
        data=table,
        x="step",
        y="value",
        hue="expert",
        hue_order=experts,
        # experts with equal weights overlap: a width, a dash pattern and a marker per expert keep every line seen
        style="expert",
        size="expert",
        sizes={e: 4.5 - 3.0 * i / max(1, len(experts) - 1) for i, e in enumerate(experts)},  # first drawn widest
        dashes=True,
        markers=True,
        col="player2",
        row="task",
        kind="line",
        height=2.6,
        aspect=1.4,
        alpha=0.85,
        facet_kws={"sharex": False},
    )
    for ax in grid.axes.flat:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # steps are whole
    grid.set_axis_labels("step", "normalized expert weight")
    grid.set_titles("{row_name}: A-ToM (Hedge) with {col_name}")
    return grid.figure


def fig3_episode(
    run: Reproduction, *, task: str = "overcooked", episode: int = 0, results: str | None = None
) -> pd.DataFrame:
    """Fig. 3 as the paper draws it: the normalized expert weights of A-ToM (Hedge, seat 1) over the steps of one
    episode, with each partner; ``first_update`` marks the first step after which the weights moved (the paper's
    stars at step 5)."""
    from tomlib.trace import load_runs

    events = load_runs(results, run_ids=[run.run_id], kinds=["expert_weights"])
    events = events[(events["agent"] == "player1") & (events["episode"] == episode)]
    events = events[events["condition"].astype(str).str.startswith(f"{task}:")]
    rows = []
    for condition, part in events.groupby("condition", sort=True):
        partner = str(condition).split(" vs ")[1]
        part = part.sort_values("step")
        probs = [p["probabilities"] for p in part["payload"]]
        moved = next((int(s) for s, a, b in zip(part["step"], probs, probs[1:], strict=False) if a != b), None)
        for step, weights in zip(part["step"], probs, strict=True):
            for k, w in enumerate(weights):
                rows.append(
                    {
                        "task": task,
                        "player2": partner,
                        "episode": episode,
                        "step": int(step),
                        "expert": f"ToM-{k}",
                        "value": round(float(w), 4),
                        "first_update": moved,
                    }
                )
    return pd.DataFrame(rows)


def plot_fig3_episode(frame: pd.DataFrame) -> Any:
    """One panel per partner: P^(0), P^(1), P^(2) over one episode's steps, a star at the first update."""
    import matplotlib.pyplot as plt

    partners = list(dict.fromkeys(frame["player2"]))
    fig, axes = plt.subplots(1, len(partners), figsize=(5.2 * len(partners), 3.2), squeeze=False, sharey=True)
    for ax, partner in zip(axes[0], partners, strict=True):
        part = frame[frame["player2"] == partner]
        for i, (expert, rows) in enumerate(part.groupby("expert", sort=True)):
            ax.plot(rows["step"], rows["value"], color=f"C{i}", lw=2.2 - 0.5 * i, label=f"P({expert})")
            moved = rows["first_update"].iloc[0]
            if pd.notna(moved):
                hit = rows[rows["step"].isin([moved, moved + 1])]
                ax.scatter(hit["step"], hit["value"], marker="*", s=90, color=f"C{i}", zorder=3)
        ax.set_title(
            f"{part['task'].iloc[0]}, episode {part['episode'].iloc[0]}: A-ToM (Hedge) with {partner}", fontsize=9
        )
        ax.set_xlabel("step")
        ax.set_ylim(-0.03, 1.03)
    axes[0][0].set_ylabel("normalized expert weight")
    axes[0][-1].legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_atom(table: pd.DataFrame, source: str) -> Any:
    """Table 2 as bars: ours next to the paper for every A-ToM pairing, one panel per algorithm and task."""
    import seaborn as sns

    df = table[(table["source"] == source) & ~table["metric"].str.endswith("_sd")].dropna(subset=["value"])
    if df.empty:
        raise ValueError(f"no reproduced cells for source {source!r}")
    df = df.assign(pair=df["player1"] + " vs " + df["player2"])
    long = pd.concat(
        [df.assign(who="ours", score=df["value"]), df.assign(who="paper", score=df["paper_value"])], ignore_index=True
    )
    grid = sns.catplot(
        data=long,
        x="score",
        y="pair",
        hue="who",
        col="task",
        row="algorithm",
        kind="bar",
        height=2.8,
        aspect=1.1,
        sharex=False,
        palette={"ours": "#4c72b0", "paper": "#c0c0c0"},
    )
    grid.set_titles("{row_name} · {col_name}")
    grid.set_axis_labels("points ↑ / time ↓", "")
    return grid.figure


async def table3(
    *,
    model: str = "formal",
    llm_mode: str = "replay",
    agents: Sequence[str] = TABLE3_AGENTS,
    episodes: int = 30,
    seed: int = 42,
    temperature: float = 0.1,
    results: str | None = None,
    progress: bool = True,
    run_id: str | None = None,
    chat: ChatModel | None = None,
    **options: Any,
) -> Reproduction:
    """Table 3: Overcooked cross-play. Every ordered pair of different agent types plays ``episodes``
    episodes; an agent type's cell is its mean time over all its episodes, in either seat. ``pbt="ppo-selfplay"``
    (an option of :class:`Setup`) seats the PPO self-play stand-in as PBT; every row's source then says so."""
    from tqdm.auto import tqdm

    if "PBT" not in agents:
        options["pbt"] = "none"  # no PBT seat to fill: the rows' source must not claim the stand-in
    setup = Setup(model=model, llm_mode=llm_mode, temperature=temperature, chat=chat, **options)
    log = RunLog(
        f"{PAPER_ID}.table3",
        run_id=run_id,
        results=results,
        meta={"model": model, "source": setup.source, "episodes": episodes},
    )
    setup.connect(log)
    game = setup.game("overcooked")
    unavailable: dict[str, str] = {}
    for a in agents:
        try:
            setup.agent(a)
            setup.check_playable(game, [a])
        except NotReproduced as exc:
            unavailable[a] = str(exc)
    playable = [a for a in agents if a not in unavailable]
    pairs = [(a, b) for a in playable for b in playable if a != b]
    _announce(setup, [(pair, "overcooked") for pair in pairs], episodes, TASKS)
    scores: dict[str, list[float]] = {a: [] for a in playable}
    per_episode = []
    bar = tqdm(total=len(pairs) * episodes, desc=f"{PAPER_ID}.table3 ({setup.source})", disable=not progress)
    try:
        for a, b in pairs:
            got = await run_condition(
                game,
                (a, b),
                setup,
                episodes=episodes,
                seed=seed,
                condition=f"overcooked:{a} vs {b}",
                log=log,
                on_episode=lambda: bar.update(1),
            )
            scores[a] += [r.score for r in got]
            scores[b] += [r.score for r in got]
            per_episode += [
                {
                    "paper_id": PAPER_ID,
                    "table_id": "table3",
                    "player1": a,
                    "player2": b,
                    "task": "overcooked",
                    "episode": i,
                    "score": r.score,
                    "steps": r.steps,
                    "metric": "time",
                    "source": setup.source,
                }
                for i, r in enumerate(got)
            ]
    finally:
        bar.close()
        log.close()
    rows: list[dict[str, Any]] = []
    for a in agents:
        label = a.replace("A-ToM (", "A-ToM agent (")  # the paper's row labels
        base = {"paper_id": PAPER_ID, "table_id": "table3", "agent_type": label, "task": "overcooked"}
        if a in unavailable:
            rows += _missing_rows(base, "time", setup.source, unavailable[a])
        elif not scores[a]:
            why = "not reproduced: no other agent type could play, so there is no cross-play to average"
            rows += _missing_rows(base, "time", setup.source, why)
        else:
            cell = _cell_rows(base, "time", scores[a], setup.source)
            rows += [{**r, "note": STAND_IN_NOTE} for r in cell] if a == "PBT" else cell
    table = attach_paper_values(pd.DataFrame(rows))
    write_episode_units(per_episode, results, setup.readings(game))
    return Reproduction(
        table=table, episodes=pd.DataFrame(per_episode), run_id=log.run_id, readings=setup.readings(game)
    )


def table3_spread(run: Reproduction) -> pd.DataFrame:
    """What Table 3's cells and SDs are made of, per agent type over its episodes in either seat: the mean time, its
    SD, the share of episodes that failed (100 steps) and the mean time of those that cooked, beside the fastest soup
    the exact kitchen allows and the paper's cell and SD."""
    game = load_task("overcooked")
    _, index, value = game.exact  # type: ignore[attr-defined]
    fastest = int(value[index[game.compact(game.reset(0))]])  # type: ignore[attr-defined]
    ep = run.episodes
    paper = run.table.pivot_table(index="agent_type", columns="metric", values="paper_value", aggfunc="first")
    rows = []
    for agent in dict.fromkeys([*ep["player1"], *ep["player2"]]):
        times = ep.loc[(ep["player1"] == agent) | (ep["player2"] == agent), "score"].astype(float)
        cooked = times[times < game.info.horizon]
        label = agent.replace("A-ToM (", "A-ToM agent (")
        rows.append(
            {
                "agent_type": label,
                "time": round(float(times.mean()), 2),
                "sd": round(float(times.std()), 2),
                "failed": f"{int((times >= game.info.horizon).sum())} of {len(times)}",
                "time when it cooked": round(float(cooked.mean()), 2) if len(cooked) else float("nan"),
                "fastest possible": fastest,
                "paper": paper.get("time", pd.Series(dtype=float)).get(label),
                "paper sd": paper.get("time_sd", pd.Series(dtype=float)).get(label),
            }
        )
    return pd.DataFrame(rows)


NON_LLM_PARTNERS = ("Greedy", "PBT")


def expert_weights(
    runs: Sequence[Reproduction], results: str | None = None, partners: Sequence[str] = NON_LLM_PARTNERS
) -> pd.DataFrame:
    """§6.1: A-ToM's average normalized expert weights P^(k) against each non-LLM partner (Greedy, PBT), over every
    step of every episode in either seat, from the ``expert_weights`` events of Table 3 runs, beside the paper's.
    FTL's weights are one-hot on its leader, so its average is the share of steps each expert led. A pairing a run
    did not play is a row without a value that says why. Greedy's rows from a run with the PPO stand-in keep the
    plain source (the stand-in is not in those episodes), and a pairing given by two runs is shown once.
    ``partners`` adds others (ToM-k partners: what the weights look like when the partner's order is known); only the
    non-LLM partners' episodes are written as units (§6.1's claim)."""
    from tomlib.trace import load_runs

    rows: list[dict[str, Any]] = []
    units: list[dict[str, Any]] = []
    for run in runs:
        source = str(run.table["source"].iloc[0]) if len(run.table) else "?"
        notes = dict(zip(run.table.get("agent_type", []), run.table.get("note", []), strict=False))
        events = load_runs(results, run_ids=[run.run_id], kinds=["expert_weights"])
        got: dict[tuple[str, str], list[list[float]]] = {}
        per_episode: dict[tuple[str, str, str, int], list[list[float]]] = {}
        for condition, seat, episode, payload in zip(
            events.get("condition", []),
            events.get("agent", []),
            events.get("episode", []),
            events.get("payload", []),
            strict=False,
        ):
            pair = str(condition).split(":", 1)[-1].split(" vs ")
            me, other = (pair[0], pair[1]) if seat == "player1" else (pair[1], pair[0])
            if me in ATOM.values() and other in partners:
                algo = "FTL" if "FTL" in me else "Hedge"
                got.setdefault((algo, other), []).append(payload["probabilities"])
                per_episode.setdefault((algo, other, str(seat), int(episode)), []).append(payload["probabilities"])
        for (algo, partner, seat, episode), probs in per_episode.items():  # §6.1's units: an episode's mean
            if partner not in NON_LLM_PARTNERS:
                continue
            for k, value in enumerate(sum(col) / len(probs) for col in zip(*probs, strict=True)):
                units.append(
                    {
                        "paper_id": PAPER_ID,
                        "table_id": "weights",
                        "algorithm": algo,
                        "partner": partner,
                        "seat": seat,
                        "episode": episode,
                        "expert": f"ToM-{k}",
                        "metric": "normalized_weight",
                        "value": round(value, 6),
                        "source": source if partner == "PBT" else source.removesuffix(SOURCE_SUFFIX),
                        **run.readings,
                    }
                )
        for algo in ATOM:
            for partner in partners:
                probs = got.get((algo, partner))
                if probs:
                    mean, note = [sum(col) / len(probs) for col in zip(*probs, strict=True)], f"{len(probs)} steps"
                else:
                    mean = [float("nan")] * 3
                    mine, theirs = notes.get(f"A-ToM agent ({algo})"), notes.get(partner)
                    why = (theirs or mine) if partner == "PBT" else (mine or theirs)  # the reason that blocks first
                    note = (
                        str(why) if isinstance(why, str) and why else f"not run: A-ToM ({algo}) did not play {partner}"
                    )
                if partner == "PBT" and source.endswith(SOURCE_SUFFIX) and probs:
                    note = f"{note}; {STAND_IN_NOTE}"
                for k, value in enumerate(mean):
                    rows.append(
                        {
                            "paper_id": PAPER_ID,
                            "table_id": "weights",
                            "algorithm": algo,
                            "partner": partner,
                            "expert": f"ToM-{k}",
                            "metric": "normalized_weight",
                            "value": round(value, 3),
                            "source": source if partner == "PBT" else source.removesuffix(SOURCE_SUFFIX),
                            "note": note,
                        }
                    )
    if units:  # a pairing two runs both played (Greedy with and without the stand-in) once, as in the table
        keys = ["algorithm", "partner", "seat", "episode", "expert", "source", *runs[0].readings]
        per = pd.DataFrame(units).drop_duplicates(keys)
        write_units_with_truth(per, results)
    frame = pd.DataFrame(rows)
    if len(frame):  # a pairing two runs both played (Greedy, with and without the stand-in) once, valued first
        valued_first = frame.sort_values("value", key=lambda v: v.isna(), kind="stable")
        frame = valued_first.drop_duplicates(["algorithm", "partner", "expert", "source"]).sort_index()
    return attach_paper_values(frame.reset_index(drop=True))


def stand_in_variants(members: int) -> dict[str, dict[str, Any]]:
    """The stand-in's playing rules worth comparing: the default, each member pinned, and argmax play."""
    return {
        "member drawn per episode, sampled (default)": {},
        **{f"member {m}, sampled": {"ppo_member": m} for m in range(members)},
        "member drawn per episode, argmax": {"ppo_deterministic": True},
    }


async def stand_in_sensitivity(
    *,
    agents: Sequence[str] = TABLE3_AGENTS,
    episodes: int = 30,
    seed: int = 42,
    variants: dict[str, dict[str, Any]] | None = None,
    results: str | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """How the stand-in's playing rule moves Table 3's PBT cell: the cell (its mean time over every episode with
    each other formal agent type, in either seat, as :func:`table3` computes it) under each variant (by default
    :func:`stand_in_variants` of the shipped population), beside the paper's PBT value."""
    from tqdm.auto import tqdm

    variants = variants or stand_in_variants(len(stand_in_population().members))
    others = [a for a in agents if a != "PBT"]
    game = load_task("overcooked")
    paper = paper_table(PAPER_ID, "table3").set_index("agent_type").query("metric == 'time'")["value"].get("PBT")
    bar = tqdm(total=len(variants) * len(others) * 2 * episodes, desc="PBT stand-in variants", disable=not progress)
    rows = []
    try:
        for label, options in variants.items():
            setup = Setup(pbt="ppo-selfplay", **options)
            meta = {"source": setup.source, "variant": label}
            log = RunLog(f"{PAPER_ID}.table3_stand_in", results=results, meta=meta)
            times: list[float] = []
            try:
                for pair in [p for other in others for p in (("PBT", other), (other, "PBT"))]:
                    got = await run_condition(
                        game,
                        pair,
                        setup,
                        episodes=episodes,
                        seed=seed,
                        condition=f"overcooked:{pair[0]} vs {pair[1]}",  # Table 3's streams: only the rule differs
                        log=log,
                        on_episode=lambda: bar.update(1),
                    )
                    times += [r.score for r in got]
            finally:
                log.close()
            rows.append(
                {
                    "variant": label,
                    "PBT cell (time)": round(statistics.fmean(times), 2),
                    "sd": round(statistics.stdev(times), 2),
                    "failed episodes": sum(t >= game.info.horizon for t in times),
                    "episodes": len(times),
                    "paper (PBT)": paper,
                    "source": setup.source,
                }
            )
    finally:
        bar.close()
    return pd.DataFrame(rows)


def plot_stand_in(population: Population | None = None) -> Any:
    """The PPO stand-in's learning curves (mean time to the first soup of recent training episodes, per member)
    against the fastest possible soup in the exact one-soup model."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    game = load_task("overcooked")
    population = population or stand_in_population()
    _, index, value = game.exact  # type: ignore[attr-defined]
    fastest = int(value[index[game.compact(game.reset(0))]])  # type: ignore[attr-defined]
    fig, ax = plt.subplots(figsize=(7, 3.2))
    sns.lineplot(data=population.curves(), x="kitchen_steps", y="time", hue="member", palette="deep", ax=ax)
    ax.axhline(fastest, color="grey", ls="--", lw=1)
    ax.text(0, fastest - 1, f"fastest possible: {fastest} steps (exact model)", va="top", fontsize=8, color="grey")
    ax.set(
        xlabel="training steps of the kitchen (both cooks move each step)",
        ylabel="steps to the first soup ↓",
        ylim=(0, game.horizon + 3),
        title="PPO self-play stand-in for PBT: training episodes",
    )
    return fig


async def greedy_reference(*, episodes: int = 30, seed: int = 42, results: str | None = None) -> pd.DataFrame:
    """Greedy with Greedy on our Overcooked layout: a non-LLM reference point (not a paper cell)."""
    game = load_task("overcooked")
    log = RunLog(f"{PAPER_ID}.greedy_reference", results=results)
    try:
        got = await run_condition(
            game,
            ("Greedy", "Greedy"),
            Setup(),
            episodes=episodes,
            seed=seed,
            condition="overcooked:Greedy vs Greedy",
            log=log,
        )
    finally:
        log.close()
    return pd.DataFrame({"episode": range(episodes), "time": [r.score for r in got]})
