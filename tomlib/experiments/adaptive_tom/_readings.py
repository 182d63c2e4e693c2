"""The formal tables under our other readings: what each moves, beside the paper's value.

The readings are the tie model, the preference among equally good moves, carried losses and how
experts predict; their rows are written as units so the claims are judged under each.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import pandas as pd

from tomlib.agents.adaptive import EXPERT_PREDICTIONS
from tomlib.envs import PREFERENCES
from tomlib.experiments.adaptive_tom._run import READING_DETAIL_EPISODES
from tomlib.experiments.adaptive_tom._setup import (
    FIXED,
    PAPER_ID,
    TABLE3_AGENTS,
    TASKS,
    Reproduction,
    load_task,
)
from tomlib.experiments.adaptive_tom._tables import (
    expert_weights,
    fig3,
    table1,
    table2,
    table3,
    table4,
)

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
    paper's LLM must do at ties, not a prediction: ε is not given anywhere.

    Args:
        epsilons: the ε of the shared tie model to try (:data:`TIE_EPSILONS`).
        episodes: episodes per condition (§4.2: 30).
        seed: the seed of the episodes (§4.2: 42).
        results: the results folder the runs write to (default ``results/``).
    """
    rows = []
    for eps in epsilons:
        kw = {"episodes": episodes, "seed": seed, "results": results, "progress": False, "tie_break": "shared"}
        kw["detail_episodes"] = READING_DETAIL_EPISODES
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
    §6.1's weights against Greedy) or ``fig3`` (A-ToM's last-step weight on its partner's order, averaged).

    Args:
        table: ``table1``, ``table2``, ``table3`` or ``fig3``.
        default: the table as the notebook ran it (run here when None).
        prefers: the preferences to try (:data:`tomlib.envs.PREFERENCES`).
        tasks: the grid and kitchen tasks run (:data:`PREFER_TASKS`).
        episodes: episodes per condition (§4.2: 30).
        seed: the seed of the episodes (§4.2: 42).
        results: the results folder the runs write to (default ``results/``).
        **options: :class:`Setup`'s other options, as the notebook's run.
    """
    if table not in PREFER_TABLES:
        raise ValueError(f"table must be one of {', '.join(PREFER_TABLES)}; got {table!r}")
    tasks = ["overcooked"] if table == "table3" else [t for t in tasks if t in PREFER_TASKS]
    kw: dict[str, Any] = {"episodes": episodes, "seed": seed, "results": results, "progress": False, **options}
    kw["detail_episodes"] = READING_DETAIL_EPISODES
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
    claims resting on the table are judged under each (the runs write their units beside the default's).

    Args:
        table: the formal table run again (``table1`` ... ``table4``, ``fig3``).
        variants: a label per reading -> the :class:`Setup` options that make it (:func:`reading_variants`).
        default: the table as the notebook ran it.
        tasks: the tasks run (all five of §4.1 by default).
        episodes: episodes per condition (§4.2: 30).
        seed: the seed of the episodes (§4.2: 42).
        results: the results folder the runs write to (default ``results/``).
    """
    tasks = ["overcooked"] if table == "table3" else list(tasks)
    kw: dict[str, Any] = {"episodes": episodes, "seed": seed, "results": results, "progress": False}
    kw["detail_episodes"] = READING_DETAIL_EPISODES
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
    experts' other ways to predict (``expert_prediction``); each changes one reading and keeps the rest.

    Args:
        tie_break: the notebook's tie model (``independent`` or ``shared``).
        tie_epsilon: the notebook's ε of the shared tie model.
        carry_losses: whether the notebook's A-ToM carries its losses across episodes.
        expert_prediction: how the notebook's experts predict among equally good actions.
    """
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
    expert: the mean over the episodes, their SD and how many there are.

    Args:
        run: a :func:`fig3` run (§5.3).
        results: the results folder (default ``results/``).
    """
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
