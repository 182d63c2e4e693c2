"""Your agent in the adaptive-ToM games (issue 57): in A-ToM's seat, with the partners of Tables 1-3, beside the
paper's rows, and the paper's alignment claims judged with it.

Nothing here is the paper's: the agent is yours (by default :class:`tomlib.agents.bayes.BayesToMAgent`, ours), so
its rows are written to their own units table (``adaptive_tom.your_agent``), and the claims judged on them are copies
of the paper's with your agent where A-ToM stood.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from tomlib.claims import Claim, judge_paper, load_claims, read_units
from tomlib.experiments.adaptive_tom._run import YOURS, _run_table
from tomlib.experiments.adaptive_tom._setup import FIXED, PAPER_ID, TASKS, Reproduction, Setup
from tomlib.report import paper_table

YOUR_AGENT = "tomlib.agents.bayes:BayesToMAgent"
"""The default agent: a Bayesian ToM agent of ours (:mod:`tomlib.agents.bayes`)."""
YOUR_PARTNERS = (*FIXED, "A-ToM (FTL)", "A-ToM (Hedge)", "Greedy")
"""Who your agent plays with: the fixed orders (Table 1), A-ToM (Table 2) and Greedy (Table 3: Overcooked only)."""
TABLE_ID = YOURS
ALIGNMENT_CLAIMS = ("adaptive_tom.atom_as_aligned_point", "adaptive_tom.atom_as_aligned_time")
"""The paper's claims that A-ToM does as well as an aligned pair (§5.2), judged again with your agent in its seat."""


def agent_label(agent: str) -> str:
    """The name your agent's rows carry: its ``name`` (e.g. ``Bayes-ToM``), else its class's name."""
    from tomlib.agents import load_agent

    return str(load_agent(agent).name)


def your_cells(
    agent: str, tasks: Sequence[str], partners: Sequence[str]
) -> list[tuple[dict[str, Any], tuple[str, str], str]]:
    """(condition columns, (your agent, partner), task) for every task and partner; Greedy plays Overcooked only
    (overcooked-ai's planner needs a kitchen), so it is left out of the other tasks."""
    label = agent_label(agent)
    return [
        ({"agent": agent, "player1": label, "player2": partner}, (agent, partner), task)
        for task in tasks
        for partner in partners
        if partner != "Greedy" or task == "overcooked"
    ]


async def your_agent(
    agent: str = YOUR_AGENT,
    *,
    tasks: Sequence[str] = tuple(TASKS),
    partners: Sequence[str] = YOUR_PARTNERS,
    episodes: int = 30,
    seed: int = 42,
    results: str | None = None,
    progress: bool = True,
    run_id: str | None = None,
    detail_episodes: int | None = None,
    **options: Any,
) -> Reproduction:
    """Your agent in player 1's seat (A-ToM's in Table 2) with each partner on each task, ``episodes`` times from
    ``seed`` (§4.2: 30 from 42); units in ``adaptive_tom.your_agent``, one row per episode.

    Args:
        agent: your agent's import path, ``package.module:Class`` or ``package.module:Class(key=value, ...)``.
        tasks: the task settings of §4.1 to play, all five by default.
        partners: those of :data:`YOUR_PARTNERS` to play with.
        episodes: episodes per condition.
        seed: the seed of the episodes.
        results: the results folder (default ``results/``).
        progress: show a progress bar.
        run_id: the run log's id (default: a new one).
        detail_episodes: episodes per condition logged step by step; None (the default): all of them, which the
            estimate of your agent's order (``adaptive_tom.your_agent_orders``) and the trace explorer read.
        **options: :class:`Setup`'s options for the partners (the tie model, A-ToM's losses, ``prefer``).
    """
    unknown = [p for p in partners if p not in YOUR_PARTNERS]
    if unknown:
        raise ValueError(f"your agent's partners are {', '.join(YOUR_PARTNERS)}; got {', '.join(map(repr, unknown))}")
    setup = Setup(**options)
    return await _run_table(
        TABLE_ID,
        your_cells(agent, tasks, partners),
        setup,
        tasks=TASKS,
        episodes=episodes,
        seed=seed,
        results=results,
        progress=progress,
        run_id=run_id,
        detail_episodes=detail_episodes,
    )


def beside_paper(run: Reproduction) -> pd.DataFrame:
    """Your agent's mean per task and partner beside the paper's cells for the same partner: an aligned pair
    (Table 1: an agent one order away from a ToM-k partner, the mean of those cells) and A-ToM FTL and Hedge
    (Table 2: with ToM-k; with A-ToM, its self-play). Lower is better for time, higher for points."""
    mine = run.table[~run.table["metric"].str.endswith("_sd")]
    t1, t2 = paper_table(PAPER_ID, "table1"), paper_table(PAPER_ID, "table2")
    rows = []
    for r in mine.itertuples():
        partner, task, metric = r.player2, r.task, r.metric
        row = {"task": task, "partner": partner, "metric": metric, str(r.player1): r.value}
        if partner in FIXED:
            aligned = t1[(t1["task"] == task) & (t1["metric"] == metric) & (t1["player2"] == partner)]
            aligned = aligned[aligned["alignment"] == "aligned"]
            row["paper: aligned pair (Table 1)"] = aligned["value"].astype(float).mean()
            for algo in ("FTL", "Hedge"):
                row[f"paper: A-ToM ({algo}) (Table 2)"] = _cell(t2, task, metric, algo, "A-ToM", partner)
        elif partner.startswith("A-ToM"):
            algo = partner[partner.index("(") + 1 : -1]
            row[f"paper: A-ToM ({algo}) (Table 2)"] = _cell(t2, task, metric, algo, "A-ToM", "A-ToM")
        rows.append(row)
    return pd.DataFrame(rows).set_index(["task", "partner", "metric"])


def _cell(table: pd.DataFrame, task: str, metric: str, algorithm: str, p1: str, p2: str) -> float:
    got = table[
        (table["task"] == task)
        & (table["metric"] == metric)
        & (table["algorithm"] == algorithm)
        & (table["player1"] == p1)
        & (table["player2"] == p2)
    ]["value"]
    return float(got.iloc[0]) if len(got) else float("nan")


def your_claims(agent: str) -> list[Claim]:
    """The paper's alignment claims (:data:`ALIGNMENT_CLAIMS`) with ``agent`` in A-ToM's seat: its episodes with a
    fixed-order partner against Table 1's aligned pairs, within each task, at the paper's own margin."""
    claims = {c.claim_id: c for c in load_claims(PAPER_ID)}
    out = []
    for claim_id in ALIGNMENT_CLAIMS:
        c = claims[claim_id]
        a = f"table_id == '{TABLE_ID}' and agent == {agent!r} and player2 in {list(FIXED)!r}"
        out.append(
            c.model_copy(
                update={
                    "claim_id": claim_id.replace("atom_", "yours_"),
                    "units": f"{PAPER_ID}.table1; {PAPER_ID}.{TABLE_ID}",
                    "a": a,
                    "statement": c.statement.replace("A-ToM", "Your agent"),
                }
            )
        )
    return out


def judge_your_agent(agent: str, results: str | None = None) -> pd.DataFrame:
    """The verdicts of :func:`your_claims` on the units in ``results`` (Table 1's from notebook 01, your agent's from
    :func:`your_agent`), by the claims engine as it judges the paper's: on the rows under our default readings, Holm
    within these claims, and again under every other reading the units hold. Empty until both tables are there.

    Args:
        agent: your agent's import path, as :func:`your_agent` ran it.
        results: the results folder (default ``results/``).
    """
    judged = judge_paper(PAPER_ID, your_claims(agent), read_units(results), True, None)
    return pd.DataFrame() if judged is None else judged


def check_your_parameters(*, agent: Any, episodes: Any, seed: Any, tasks: Any, partners: Any, epsilon: Any) -> None:
    """Notebook 15's parameters, before any work: an agent that loads (one line naming the fix if it does not), whole
    counts, known task and partner names, and a noise in (0, 1).

    Args:
        agent: your agent's import path.
        episodes: repetitions per task and partner.
        seed: the seed of the episodes.
        tasks: task names of §4.1, comma-separated.
        partners: partner names of :data:`YOUR_PARTNERS`, comma-separated.
        epsilon: the order estimator's noise.
    """
    from tomlib.agents import load_agent
    from tomlib.experiments._checks import check_names, check_whole

    if not isinstance(agent, str) or not agent:
        raise ValueError(f"parameter agent is an import path, package.module:Class; got {agent!r}")
    load_agent(agent)
    check_whole("episodes", episodes, 1)
    check_whole("seed", seed, None)
    check_names("tasks", tasks, list(TASKS))
    check_names("partners", partners, list(YOUR_PARTNERS))
    if isinstance(epsilon, bool) or not isinstance(epsilon, int | float) or not 0 < epsilon < 1:
        raise ValueError(f"parameter epsilon is a probability in (0, 1); got {epsilon!r}")


def plot_your_agent(run: Reproduction) -> Any:
    """Your agent's mean per partner, one panel per task, with the paper's aligned pair (Table 1) and A-ToM (Table 2)
    as marks beside it."""
    import matplotlib.pyplot as plt

    frame = beside_paper(run).reset_index()
    tasks = list(dict.fromkeys(frame["task"]))
    fig, axes = plt.subplots(1, len(tasks), figsize=(3.2 * len(tasks), 3.4), squeeze=False)
    value_cols = [c for c in frame.columns if c not in ("task", "partner", "metric")]
    for ax, task in zip(axes[0], tasks, strict=True):
        part = frame[frame["task"] == task].set_index("partner")[value_cols]
        part.plot.bar(ax=ax, legend=False, width=0.8)
        metric = frame.loc[frame["task"] == task, "metric"].iloc[0]
        ax.set_title(f"{task} ({metric}: {'lower' if metric == 'time' else 'higher'} is better)", fontsize=9)
        ax.set_xlabel("")
        ax.tick_params(axis="x", labelsize=8)
    axes[0][0].legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig
