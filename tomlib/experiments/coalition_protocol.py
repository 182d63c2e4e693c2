"""The programming protocol's readings replayed on recorded runs: how the re-match timing, the first coalition and
whose preferences enter the matching move Table 3's stability and Pass@1 and Tables 10-12's matching rows.

A replay runs Algorithm 1 again on each round's recorded scores under another reading and keeps everything else
as recorded: the engineers' actions, codes and test outcomes, and the PM's scores. It needs no model call, and it
is not the run that reading would have made: from the round the team first differs, the PM's prompt (which cites
its team) and the engineers' (which show their teammates) would have differed too. Exact runs under a reading are
``run_programming(..., protocol={...})``; what the PM's prompt shows (``pm_feedback``, ``pm_cites``) can only be
seen so (:func:`run_prompt_readings`). With ``preferences="all"`` the engineers' rows are the cosine of their
recorded "Belief:" line against the PM's instruction and each other engineer's action (Appendix A's extension),
as the recorded runs hold no engineer self-evaluation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from tomlib.coalition import cosine_alignment, ftm
from tomlib.experiments.coalition_programming import Runs, model_label, pass_at_1, run_programming
from tomlib.programming import (
    Episode,
    RoundResult,
    TeamConfig,
    score_matrix,
    team_algorithm1,
    team_answer,
    team_instance,
    team_of,
)

VARIANTS: dict[str, dict[str, str]] = {
    "as run": {},
    "rematch=next": {"rematch": "next"},
    "initial=all": {"initial": "all"},
    "preferences=all": {"preferences": "all"},
}
"""The readings a replay plays, by label (``as run`` is the recorded reading, replayed as a check)."""


def _peer_cosines(rr: RoundResult) -> dict[str, dict[str, float]]:
    """Each engineer's row from its recorded stated belief (cosine; no call)."""
    actions = {"PM": rr.instruction, **{t.name: t.action for t in rr.turns}}
    out = {}
    for t in rr.turns:
        others = {n: a for n, a in actions.items() if n != t.name}
        cos = cosine_alignment([t.belief] * len(others), list(others.values()))
        out[t.name] = {n: float(v) for n, v in zip(others, cos, strict=True)}
    return out


def replay_episode(ep: Episode, variant: Mapping[str, str], final_round: int = 5) -> dict[str, Any]:
    """One matching episode under ``variant`` (TeamConfig fields): the teams per round, the coalition lifetime, the
    team FTM and whether the round-``final_round`` answer passes, all from the recorded rounds."""
    cfg = replace(ep.config, **variant)
    base = team_instance(cfg)
    algo = team_algorithm1(cfg, base, ep.condition, ep.seed)
    teams, ftms, passed = [], [], None
    for rr in ep.rounds:
        peers = _peer_cosines(rr) if cfg.engineers_score else {}
        matrix = score_matrix(base, rr.scores, peers)
        team = team_of(base, algo.step(matrix))
        inst = base.with_scores(matrix)
        teams.append(team)
        ftms.append(100 * ftm(inst, 0, among=[0, *(base.index(n) for n in team)]))
        if rr.round == final_round:
            passed = bool(rr.turn(team_answer(team, rr.scores, rr.turns)).passed)
    return {
        "teams": teams,
        "coalition_lifetime": algo.run.coalition_lifetime,
        "rematches": algo.run.rematches,
        "ftm_team": float(np.mean(ftms)) if ftms else float("nan"),
        "answer_passed": passed,
        "same_teams": teams == [rr.team for rr in ep.rounds],
    }


def replay(
    runs: Sequence[Runs], variants: Mapping[str, Mapping[str, str]] = VARIANTS, final_round: int = 5
) -> pd.DataFrame:
    """Every matching episode of ``runs`` under every variant: one row per (episode, variant).

    Args:
        runs: recorded programming runs (:func:`run_programming`); only their matching episodes are replayed.
        variants: the readings to replay, by label: each a protocol override (``rematch``, ``initial``,
            ``preferences``); :data:`VARIANTS` holds the recorded reading (``as run``, a check) and one change of each.
        final_round: the round whose Pass@1 a row reports (Table 3's fifth round).
    """
    rows = []
    for run in runs:
        for ep in run.episodes:
            if not ep.config.matching:
                continue
            for label, variant in variants.items():
                got = replay_episode(ep, variant, final_round)
                rows.append(
                    {
                        "model": model_label(run.model),
                        "benchmark": ep.task.benchmark,
                        "task_id": ep.task.task_id,
                        "seed": ep.seed,
                        "pm_tom": ep.config.pm_tom,
                        "eng_tom": ep.config.eng_tom,
                        "reading": label,
                        **{k: v for k, v in got.items() if k != "teams"},
                        "source": run.source,
                    }
                )
    return pd.DataFrame(rows)


def replay_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per condition and reading: mean coalition lifetime (rounds), round-5 Pass@1 (%), mean team FTM (%), the
    episodes, and in how many the teams differ from the recorded ones (the replay's reach: beyond the first such
    round, the real run would have had other prompts).

    Args:
        frame: the rows of :func:`replay`.
    """
    if frame.empty:
        return frame
    keys = ["model", "benchmark", "pm_tom", "eng_tom", "reading"]
    g = frame.groupby(keys, sort=False)
    out = g.agg(
        coalition_lifetime=("coalition_lifetime", "mean"),
        ftm_team=("ftm_team", "mean"),
        episodes=("task_id", "size"),
        teams_differ=("same_teams", lambda s: int((~s.astype(bool)).sum())),
    )
    out["pass_at_1_pct"] = g["answer_passed"].apply(lambda s: 100 * pass_at_1(list(s)))
    return out.reset_index().round(3)


def replay_wide(summary: pd.DataFrame, measure: str = "coalition_lifetime") -> pd.DataFrame:
    """One ``measure`` of the summary per condition (rows) and reading (columns, ``as run`` first).

    Args:
        summary: the replays' summary, as :func:`replay_summary` returns it.
        measure: which of its measures to show (a column of ``summary``).
    """
    if summary.empty:
        return summary
    keys = ["model", "benchmark", "pm_tom", "eng_tom"]
    wide = summary.pivot_table(index=keys, columns="reading", values=measure, sort=False)
    return wide[[r for r in dict.fromkeys(summary["reading"]) if r in wide.columns]]


MEASURES = {"coalition_lifetime": "coalition lifetime (rounds of 5)", "pass_at_1_pct": "round-5 Pass@1 (%)"}


def plot_replay(summary: pd.DataFrame) -> Any:
    """Lifetime and Pass@1 per condition, one bar per reading (replayed on the recorded scores).

    Args:
        summary: the table of :func:`replay_summary`.
    """
    import matplotlib.pyplot as plt

    readings = list(dict.fromkeys(summary["reading"]))
    conds = summary[["model", "benchmark", "pm_tom", "eng_tom"]].drop_duplicates()
    several = conds["model"].nunique() > 1
    labels = [f"{m + chr(10) if several else ''}{b}\nPM {p}, eng {e}" for m, b, p, e in conds.itertuples(index=False)]
    fig, axes = plt.subplots(1, 2, figsize=(max(8.0, 1.1 * len(labels) + 4), 3.8))
    width = 0.8 / max(1, len(readings))
    x = np.arange(len(labels))
    for ax, (measure, title) in zip(axes, MEASURES.items(), strict=True):
        wide = replay_wide(summary, measure)
        for j, reading in enumerate(readings):
            ax.bar(x + (j - (len(readings) - 1) / 2) * width, wide[reading].to_numpy(), width, label=reading)
        ax.set_xticks(x, labels, fontsize=8)
        ax.set_title(title)
    axes[0].set_ylim(0, 5)
    axes[1].set_ylim(0, 100)
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=len(readings), fontsize=8, frameon=False)
    fig.suptitle("The protocol's readings replayed on the recorded scores")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


PROMPT_READINGS: dict[str, dict[str, str]] = {
    "pm_feedback=actions": {"pm_feedback": "actions"},
    "pm_cites=all": {"pm_cites": "all"},
}
"""The readings of what the PM's prompt shows, by label: each needs runs of its own (it changes every later call)."""


async def run_prompt_readings(
    configs: Sequence[TeamConfig],
    table: Callable[[Runs], pd.DataFrame],
    *,
    protocol: Mapping[str, str],
    **run: Any,
) -> pd.DataFrame:
    """Run ``configs`` again under each prompt reading the notebook's ``protocol`` does not set already (``pm_cites``
    only with matching), and return ``table`` of each run, labelled by ``reading``; the tables write their units, so
    the claims are judged under these readings too.

    Args:
        configs: the conditions to run again.
        table: the table to make of each run (e.g. ``table1``).
        protocol: the prompt readings the notebook already sets (those are not varied).
        run: the rest of :func:`run_programming`'s arguments (model, tasks, seeds, results, ...).
    """
    frames = []
    for label, change in PROMPT_READINGS.items():
        if all(protocol.get(k) == v for k, v in change.items()):
            continue
        chosen = [c for c in configs if c.matching] if "pm_cites" in change else list(configs)
        if not chosen:
            continue
        runs = await run_programming(chosen, protocol={**protocol, **change}, **run)
        frames.append(table(runs).assign(reading=label))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def prompt_wide(ours: pd.DataFrame, others: pd.DataFrame) -> pd.DataFrame:
    """A table's values under our prompt reading beside each other one: rows are the table's cells, columns the
    readings (with the paper's value first).

    Args:
        ours: the table under our prompt reading.
        others: the tables under the other readings, labelled by ``reading`` (:func:`run_prompt_readings`).
    """
    both = pd.concat([ours.assign(reading="ours"), others], ignore_index=True)
    keys = [
        c for c in ("model", "benchmark", "method", "tom_order", "pm_tom", "eng_tom", "matching", "round", "metric")
    ]
    keys = [c for c in keys if c in both.columns]
    both["value"] = pd.to_numeric(both["value"], errors="coerce")
    wide = both.pivot_table(index=keys, columns="reading", values="value", sort=False)
    paper = ours.set_index(keys)["paper_value"] if "paper_value" in ours.columns else None
    if paper is not None:
        wide.insert(0, "paper", pd.to_numeric(paper, errors="coerce").groupby(level=keys, sort=False).first())
    return wide[[c for c in ["paper", "ours", *PROMPT_READINGS] if c in wide.columns]]
