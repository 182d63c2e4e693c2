"""The paper's tables and figure (Tables 1-4, Fig. 3) and §6.1's expert weights, from the runs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from tomlib.agents import EpisodeResult, split_specs
from tomlib.agents.ppo import SOURCE_SUFFIX
from tomlib.envs import Game
from tomlib.experiments._jobs import run_jobs
from tomlib.experiments._units import write_episode_units, write_units_with_truth
from tomlib.experiments.adaptive_tom import _offload
from tomlib.experiments.adaptive_tom._run import (
    FORMAL_DETAIL_EPISODES,
    _announce,
    _cell_rows,
    _missing_rows,
    _run_table,
    run_condition,
    weight_steps,
    write_orders,
)
from tomlib.experiments.adaptive_tom._setup import (
    ATOM,
    FIXED,
    PAPER_ID,
    STAND_IN_NOTE,
    TABLE1_PAIRS,
    TABLE3_AGENTS,
    TASKS,
    THREE_ACTION_TASKS,
    NotReproduced,
    Reproduction,
    Setup,
    load_task,
    weight_frame,
)
from tomlib.llm import ChatModel
from tomlib.report import attach_paper_values
from tomlib.trace import RunLog


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
    detail_episodes: int = FORMAL_DETAIL_EPISODES,
    **options: Any,
) -> Reproduction:
    """Table 1 (§5.1): the nine fixed-order pairs, in both seats, on every task.

    Args:
        model: ``"formal"`` (the exact ToM-k agents) or a configured model name (§3.4's LLM agents).
        llm_mode: replay the committed transcripts, record, or call the model live (LLM agents only).
        tasks: the task settings of §4.1 to play, all five by default.
        pairs: the (player 1, player 2) orders to pair, Table 1's by default.
        episodes: episodes per condition (§4.2: 30).
        seed: the seed of the episodes (§4.2: 42).
        temperature: the LLM agents' sampling temperature (§4.2: 0.1).
        results: the results folder (default ``results/``).
        progress: show a progress bar.
        run_id: the run log's id (default: a new one).
        chat: a model to play with instead of building ``model``'s (tests).
        detail_episodes: a formal run's episodes per condition logged step by step (LLM runs log every step).
        **options: :class:`Setup`'s agent options (the tie model, A-ToM's losses, the LLM prompts' history).
    """
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
        detail_episodes=detail_episodes,
    )


TABLE2_PARTNERS = (*FIXED, "A-ToM")
"""A-ToM's partners in Table 2: each fixed order in both seats, and A-ToM itself."""


def table2_pairs(
    algorithms: Sequence[str] = ("FTL", "Hedge"), partners: Sequence[str] = TABLE2_PARTNERS
) -> list[tuple[str, str, str]]:
    """(algorithm, player 1, player 2) in the paper's row order, for A-ToM with each of ``partners``."""
    unknown = [p for p in partners if p not in TABLE2_PARTNERS]
    if unknown:
        raise ValueError(f"Table 2's partners are {', '.join(TABLE2_PARTNERS)}; got {', '.join(map(repr, unknown))}")
    out = []
    for algo in algorithms:
        for k in FIXED:
            if k in partners:
                out += [(algo, "A-ToM", k), (algo, k, "A-ToM")]
        if "A-ToM" in partners:
            out.append((algo, "A-ToM", "A-ToM"))
    return out


async def table2(
    *,
    model: str = "formal",
    llm_mode: str = "replay",
    tasks: Sequence[str] = tuple(TASKS),
    algorithms: Sequence[str] = ("FTL", "Hedge"),
    partners: Sequence[str] = TABLE2_PARTNERS,
    episodes: int = 30,
    seed: int = 42,
    temperature: float = 0.1,
    results: str | None = None,
    progress: bool = True,
    run_id: str | None = None,
    chat: ChatModel | None = None,
    detail_episodes: int = FORMAL_DETAIL_EPISODES,
    **options: Any,
) -> Reproduction:
    """Table 2 (§5.2): A-ToM (FTL, Hedge; §3.3) with ToM-0/1/2 partners in both seats, and with itself.

    Args:
        tasks: the task settings of §4.1 to play, all five by default.
        algorithms: A-ToM's expert algorithms (§3.3): FTL, Hedge or both.
        partners: those of :data:`TABLE2_PARTNERS` to play, all by default.
        temperature: the LLM agents' sampling temperature (§4.2: 0.1).
        model, llm_mode, episodes, seed, results, progress, run_id, chat, detail_episodes, options: as for
            :func:`table1`.
    """
    cells = []
    for task in tasks:
        for algo, a, b in table2_pairs(algorithms, partners):
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
        detail_episodes=detail_episodes,
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
    detail_episodes: int = FORMAL_DETAIL_EPISODES,
    **options: Any,
) -> Reproduction:
    """Table 4 (§6.2): the 3-action matrix game; LLMs at temperature 0.9, formal agents with random tie-breaking
    (two replies coordinate with every partner choice, so ties are where their randomness lives).

    Args:
        tasks: the 3-action matrix games to play (:data:`THREE_ACTION_TASKS`).
        pairs: the (player 1, player 2) orders to pair, Table 1's by default.
        temperature: the LLM agents' sampling temperature (§6.2: 0.9).
        model, llm_mode, episodes, seed, results, progress, run_id, chat, detail_episodes, options: as for
            :func:`table1`.
    """
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
        detail_episodes=detail_episodes,
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
    detail_episodes: int = FORMAL_DETAIL_EPISODES,
    **options: Any,
) -> Reproduction:
    """Fig. 3 (§5.3): normalized expert weights P^(k) of A-ToM (Hedge, seat 1) over the steps of an episode, with a
    ToM-0 and with a ToM-1 partner, averaged over episodes.

    Args:
        tasks: the task settings played (default: Game 1, Game 2 and Memory-1; §5.3 draws Overcooked).
        partners: A-ToM's partners (§5.3: ToM-0 and ToM-1).
        temperature: the LLM agents' sampling temperature (§4.2: 0.1).
        model, llm_mode, episodes, seed, results, progress, run_id, chat, detail_episodes, options: as for
            :func:`table1`.
    """
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
        detail_episodes=detail_episodes,
    )
    events = run.weights[run.weights["agent"] == "player1"]
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
    return Reproduction(table=table, episodes=run.episodes, run_id=run.run_id, weights=run.weights)


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


def fig3_episode(
    run: Reproduction, *, task: str = "overcooked", episode: int = 0, results: str | None = None
) -> pd.DataFrame:
    """Fig. 3 as the paper draws it (§5.3): the normalized expert weights of A-ToM (Hedge, seat 1) over the steps of
    one episode, with each partner; ``first_update`` marks the first step after which the weights moved (the paper's
    stars at step 5).

    Args:
        run: a :func:`fig3` run.
        task: the task drawn (§5.3: Overcooked).
        episode: the episode drawn.
        results: not read (the weights are the run's own); kept for older callers.
    """
    events = run.weights
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


async def table3(
    *,
    model: str = "formal",
    llm_mode: str = "replay",
    agents: Sequence[str] | str = TABLE3_AGENTS,
    episodes: int = 30,
    seed: int = 42,
    temperature: float = 0.1,
    results: str | None = None,
    progress: bool = True,
    run_id: str | None = None,
    chat: ChatModel | None = None,
    detail_episodes: int = FORMAL_DETAIL_EPISODES,
    **options: Any,
) -> Reproduction:
    """Table 3 (§6.1): Overcooked cross-play. Every ordered pair of different agent types plays ``episodes`` episodes;
    an agent type's cell is its mean time over all its episodes, in either seat.

    Args:
        agents: the agent types crossed (§6.1's seven), or import paths of your own agents
            (``package.module:Class(key=value)``), as a list or one comma-separated string; one that cannot play is
            a row that says why.
        episodes: episodes per ordered pair (§4.2: 30).
        temperature: the LLM agents' sampling temperature (§4.2: 0.1).
        **options: :class:`Setup`'s agent options; ``pbt="ppo-selfplay"`` seats the PPO stand-in as PBT (its source).
        model, llm_mode, seed, results, progress, run_id, chat, detail_episodes: as for :func:`table1`.
    """
    from tqdm.auto import tqdm

    agents = split_specs(agents) if isinstance(agents, str) else list(agents)
    setup = _table3_setup(agents, model=model, llm_mode=llm_mode, temperature=temperature, chat=chat, **options)
    log = RunLog(
        f"{PAPER_ID}.table3",
        run_id=run_id,
        results=results,
        meta={"model": model, "source": setup.source, "reading": setup.reading(), "episodes": episodes, "seed": seed},
        detail_episodes=detail_episodes if setup.model == "formal" and setup.chat is None else None,
    )
    setup.connect(log)
    game = setup.game("overcooked")
    unavailable, playable, pairs = _who_plays(setup, game, agents)
    _announce(setup, [(pair, "overcooked") for pair in pairs], episodes, TASKS)
    bar = tqdm(total=len(pairs) * episodes, desc=f"{PAPER_ID}.table3 ({setup.source})", disable=not progress)
    try:

        async def play(a: str, b: str) -> list[EpisodeResult]:
            return await run_condition(
                game,
                (a, b),
                setup,
                episodes=episodes,
                seed=seed,
                condition=f"overcooked:{a} vs {b}",
                log=log,
                on_episode=lambda: bar.update(1),
            )

        together = len(pairs) if _offload.side_by_side(pairs, setup) else 1  # formal pairs in worker processes
        played = await run_jobs(pairs, play, parallel=together, desc="table3", unit="pair", progress=False)
    finally:
        bar.close()
        log.close()
    scores, per_episode, weights = _cross_play(pairs, played, playable, setup.source)
    table = attach_paper_values(pd.DataFrame(_table3_rows(agents, unavailable, scores, setup.source)))
    write_episode_units(per_episode, results, setup.readings(game))
    write_orders("table3", setup, log.run_id, results)
    return Reproduction(
        table=table,
        episodes=pd.DataFrame(per_episode),
        run_id=log.run_id,
        readings=setup.readings(game),
        weights=weight_frame(weights),
    )


def _table3_setup(agents: Sequence[str], **options: Any) -> Setup:
    """Table 3's :class:`Setup`; with no PBT among ``agents`` there is no PBT seat to fill, so no stand-in either."""
    if "PBT" not in agents:
        options["pbt"] = "none"  # no PBT seat to fill: the rows' source must not claim the stand-in
    return Setup(**options)


def _who_plays(
    setup: Setup, game: Game, agents: Sequence[str]
) -> tuple[dict[str, str], list[str], list[tuple[str, str]]]:
    """Why each agent type that cannot be built or cannot play the kitchen is left out (PBT without its stand-in),
    the types that play, and §6.1's cross-play: every ordered pair of two different ones."""
    unavailable: dict[str, str] = {}
    for a in agents:
        try:
            setup.agent(a)
            setup.check_playable(game, [a])
        except NotReproduced as exc:
            unavailable[a] = str(exc)
    playable = [a for a in agents if a not in unavailable]
    return unavailable, playable, [(a, b) for a in playable for b in playable if a != b]


def _cross_play(
    pairs: Sequence[tuple[str, str]], played: Sequence[list[EpisodeResult]], playable: Sequence[str], source: str
) -> tuple[dict[str, list[float]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Table 3's cross-play, pair by pair: each agent type's times in either seat, the rows per episode, and A-ToM's
    weights at every step."""
    scores: dict[str, list[float]] = {a: [] for a in playable}
    per_episode: list[dict[str, Any]] = []
    weights: list[dict[str, Any]] = []
    for (a, b), got in zip(pairs, played, strict=True):
        scores[a] += [r.score for r in got]
        scores[b] += [r.score for r in got]
        weights += weight_steps(f"overcooked:{a} vs {b}", got)
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
                "source": source,
            }
            for i, r in enumerate(got)
        ]
    return scores, per_episode, weights


def _table3_rows(
    agents: Sequence[str], unavailable: dict[str, str], scores: dict[str, list[float]], source: str
) -> list[dict[str, Any]]:
    """Table 3's rows under the paper's labels: an agent type's mean time and SD over its cross-play episodes, or a
    row that says why it has none; PBT's rows carry the stand-in's note."""
    rows: list[dict[str, Any]] = []
    for a in agents:
        label = a.replace("A-ToM (", "A-ToM agent (")  # the paper's row labels
        base = {"paper_id": PAPER_ID, "table_id": "table3", "agent_type": label, "task": "overcooked"}
        if a in unavailable:
            rows += _missing_rows(base, "time", source, unavailable[a])
        elif not scores[a]:
            why = "not reproduced: no other agent type could play, so there is no cross-play to average"
            rows += _missing_rows(base, "time", source, why)
        else:
            cell = _cell_rows(base, "time", scores[a], source)
            rows += [{**r, "note": STAND_IN_NOTE} for r in cell] if a == "PBT" else cell
    return rows


def table3_spread(run: Reproduction) -> pd.DataFrame:
    """What Table 3's cells and SDs are made of, per agent type over its episodes in either seat: the mean time, its
    SD, the share of episodes that failed (100 steps) and the mean time of those that cooked, beside the fastest soup
    the exact kitchen allows and the paper's cell and SD.

    Args:
        run: a :func:`table3` run (§6.1).
    """
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
    step of every episode in either seat, from Table 3 runs' weights (:attr:`Reproduction.weights`), beside the paper's.
    FTL's weights are one-hot on its leader, so its average is the share of steps each expert led. A pairing a run
    did not play is a row without a value that says why. Greedy's rows from a run with the PPO stand-in keep the
    plain source (the stand-in is not in those episodes), and a pairing given by two runs is shown once.
    ``partners`` adds others (ToM-k partners: what the weights look like when the partner's order is known); only the
    non-LLM partners' episodes are written as units (§6.1's claim).

    Args:
        runs: Table 3 runs (:func:`table3`), with and without the PPO stand-in in PBT's seat.
        results: the results folder the units go to (default ``results/``).
        partners: the partners whose pairings with A-ToM are averaged (§6.1: Greedy and PBT).
    """
    rows: list[dict[str, Any]] = []
    units: list[dict[str, Any]] = []
    for run in runs:
        source = str(run.table["source"].iloc[0]) if len(run.table) else "?"
        notes = dict(zip(run.table.get("agent_type", []), run.table.get("note", []), strict=False))
        got, per_episode = _weights_by_pairing(run.weights, partners)
        units += _weight_units(per_episode, source, run.readings)
        rows += _weight_rows(got, notes, source, partners)
    if units:  # a pairing two runs both played (Greedy with and without the stand-in) once, as in the table
        keys = ["algorithm", "partner", "seat", "episode", "expert", "source", *runs[0].readings]
        per = pd.DataFrame(units).drop_duplicates(keys)
        write_units_with_truth(per, results)
    frame = pd.DataFrame(rows)
    if len(frame):  # a pairing two runs both played (Greedy, with and without the stand-in) once, valued first
        valued_first = frame.sort_values("value", key=lambda v: v.isna(), kind="stable")
        frame = valued_first.drop_duplicates(["algorithm", "partner", "expert", "source"]).sort_index()
    return attach_paper_values(frame.reset_index(drop=True))


def _weights_by_pairing(
    events: pd.DataFrame, partners: Sequence[str]
) -> tuple[dict[tuple[str, str], list[list[float]]], dict[tuple[str, str, str, int], list[list[float]]]]:
    """A-ToM's normalized weights P^(k) at each step with each of ``partners``, by (algorithm, partner), and by
    (algorithm, partner, A-ToM's seat, episode)."""
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
    return got, per_episode


def _weight_units(
    per_episode: dict[tuple[str, str, str, int], list[list[float]]], source: str, readings: dict[str, Any]
) -> list[dict[str, Any]]:
    """§6.1's units: per episode with a non-LLM partner, the mean of each expert's weight over the episode's steps."""
    units: list[dict[str, Any]] = []
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
                    **readings,
                }
            )
    return units


def _weight_rows(
    got: dict[tuple[str, str], list[list[float]]], notes: dict[Any, Any], source: str, partners: Sequence[str]
) -> list[dict[str, Any]]:
    """§6.1's rows: per algorithm, partner and expert, the mean weight over every step; a pairing not played is a row
    without a value whose note says why (the reason that blocks first: the table's note for that agent type)."""
    rows: list[dict[str, Any]] = []
    for algo in ATOM:
        for partner in partners:
            probs = got.get((algo, partner))
            if probs:
                mean, note = [sum(col) / len(probs) for col in zip(*probs, strict=True)], f"{len(probs)} steps"
            else:
                mean = [float("nan")] * 3
                mine, theirs = notes.get(f"A-ToM agent ({algo})"), notes.get(partner)
                why = (theirs or mine) if partner == "PBT" else (mine or theirs)  # the reason that blocks first
                note = str(why) if isinstance(why, str) and why else f"not run: A-ToM ({algo}) did not play {partner}"
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
    return rows
