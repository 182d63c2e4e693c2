"""The labelled PPO self-play stand-in for PBT.

How its playing rule moves the PBT cell, its training record, and Greedy with Greedy.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

import pandas as pd

from tomlib.agents import EpisodeResult
from tomlib.agents.ppo import Population
from tomlib.experiments._jobs import run_jobs
from tomlib.experiments.adaptive_tom import _offload
from tomlib.experiments.adaptive_tom._run import (
    FORMAL_DETAIL_EPISODES,
    READING_DETAIL_EPISODES,
    run_condition,
)
from tomlib.experiments.adaptive_tom._setup import (
    PAPER_ID,
    TABLE3_AGENTS,
    Setup,
    load_task,
    stand_in_population,
)
from tomlib.report import paper_table
from tomlib.trace import RunLog


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
    :func:`stand_in_variants` of the shipped population), beside the paper's PBT value.

    Args:
        agents: Table 3's agent types (§6.1).
        episodes: episodes per pair (§4.2: 30).
        seed: the seed of the episodes (§4.2: 42).
        variants: a label per playing rule -> the :class:`Setup` options (default: :func:`stand_in_variants`).
        results: the results folder the runs write to (default ``results/``).
        progress: show a progress bar.
    """
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
            meta = {"source": setup.source, "variant": label, "reading": setup.reading()}
            log = RunLog(
                f"{PAPER_ID}.table3_stand_in", results=results, meta=meta, detail_episodes=READING_DETAIL_EPISODES
            )
            times: list[float] = []
            pairs = [p for other in others for p in (("PBT", other), (other, "PBT"))]

            async def play(*pair: str, setup: Setup = setup, log: RunLog = log) -> list[EpisodeResult]:
                return await run_condition(
                    game,
                    pair,
                    setup,
                    episodes=episodes,
                    seed=seed,
                    condition=f"overcooked:{pair[0]} vs {pair[1]}",  # Table 3's streams: only the rule differs
                    log=log,
                    on_episode=lambda: bar.update(1),
                )

            try:
                together = len(pairs) if _offload.side_by_side(pairs, setup) else 1  # in worker processes
                for got in await run_jobs(pairs, play, parallel=together, desc=label, unit="pair", progress=False):
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
    against the fastest possible soup in the exact one-soup model.

    Args:
        population: the stand-in's population (default: the shipped one).
    """
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
    """Greedy with Greedy on our Overcooked layout: a non-LLM reference point (not a paper cell).

    Args:
        episodes: episodes played (§4.2: 30).
        seed: the seed of the episodes (§4.2: 42).
        results: the results folder the run writes to (default ``results/``).
    """
    game = load_task("overcooked")
    log = RunLog(f"{PAPER_ID}.greedy_reference", results=results, detail_episodes=FORMAL_DETAIL_EPISODES)
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
