"""The coalition paper's programming tables (``coalition-matching-iclr-draft.txt`` §6.3: Tables 1, 2, 3 and 6;
Appendix F.3: Tables 10-12) in the results-contract long form, each beside the paper's values.

Beside every aggregated table, the table functions write its per-unit outcomes (``tomlib.claims.write_units``,
``results/units/coalition.<table_id>.csv``): one row per unit and metric (a task's team at one round, per seed;
Table 3: one episode), with the readings (``epsilon``, ``pm_history``, ``alignment``, ``selection``) as condition
columns.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from tomlib.experiments.coalition_programming._metrics import episode_frame, metric_rows, pass_at_1
from tomlib.experiments.coalition_programming._presets import PAPER_ID
from tomlib.experiments.coalition_programming._run import Runs
from tomlib.experiments.coalition_programming._units import READINGS, UNIT_COLUMNS, long_units, write_long_units
from tomlib.report import attach_paper_values


def _finish(rows: list[dict[str, Any]], table_id: str, source: str, keep: Sequence[str]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    df = df[df["metric"].isin(keep)].copy()
    df.insert(0, "table_id", table_id)
    df.insert(0, "paper_id", PAPER_ID)
    df["source"] = source
    df["round"] = df["round"].astype(str)
    return df


def table1(runs: Runs) -> pd.DataFrame:
    """Table 1 (§6.3): FTM at R = 1 and R = 5, PM ToM 1 vs 2, no matching, both benchmarks.

    Args:
        runs: one model's episodes of :func:`table1_configs` (:func:`run_programming`); their units go to
            ``runs.results``.
    """
    f = episode_frame(runs)
    f = f[(f["matching"] == "no_matching") & (f["eng_tom"] == 0) & f["pm_tom"].isin([1, 2]) & f["round"].isin([1, 5])]
    rows = metric_rows(f, ["model", "benchmark", "pm_tom", "round"])
    df = _finish(rows, "table1", runs.source, ["ftm", "ftm_sd"])
    cols = ["model", "benchmark", "matching", "tom_order", *READINGS, *UNIT_COLUMNS]
    metrics = {"ftm": "ftm", "ftm_team": "ftm_team"}
    write_long_units([long_units(f.rename(columns={"pm_tom": "tom_order"}), "table1", cols, metrics)], runs.results)
    return _with_paper(df.rename(columns={"pm_tom": "tom_order"}))


def _with_paper(df: pd.DataFrame) -> pd.DataFrame:
    for c in ("tom_order", "pm_tom", "eng_tom"):
        if c in df.columns:
            df[c] = df[c].astype(str)
    return attach_paper_values(df.assign(paper_value=np.nan))


def table2(runs: Runs, rounds: Sequence[int] = (1, 2, 3, 4, 5)) -> pd.DataFrame:
    """Table 2 (HumanEval) and Table 6 (MBPP), §6.3: FTM per round, PM ToM 1 vs 2, with and without matching.

    Args:
        runs: one model's episodes of :func:`table2_configs` (:func:`run_programming`); their units go to
            ``runs.results``.
        rounds: the rounds to tabulate (the paper's: 1-5).
    """
    f = episode_frame(runs)
    f = f[(f["eng_tom"] == 0) & f["pm_tom"].isin([1, 2]) & f["round"].isin(rounds)]
    out, units = [], []
    for bench, table_id in (("humaneval", "table2"), ("mbpp", "table6")):
        part = f[f["benchmark"] == bench]
        if part.empty:
            continue
        rows = metric_rows(part, ["model", "benchmark", "matching", "pm_tom", "round"])
        out.append(_finish(rows, table_id, runs.source, ["ftm", "ftm_sd", "ftm_team", "ftm_next"]))
        cols = ["model", "benchmark", "matching", "tom_order", *READINGS, *UNIT_COLUMNS]
        metrics = {m: m for m in ("ftm", "ftm_team", "ftm_next")}
        units.append(long_units(part.rename(columns={"pm_tom": "tom_order"}), table_id, cols, metrics))
    write_long_units(units, runs.results)
    return _with_paper(pd.concat(out, ignore_index=True).rename(columns={"pm_tom": "tom_order"}))


def table3(runs: Runs, final_round: int = 5) -> pd.DataFrame:
    """Table 3 (§6.3): coalition stability (mean lifetime, rounds of 5) and round-``final_round`` Pass@1, k = 1/2
    with matching, beside our MetaGPT-style baseline (PM and engineers ToM-0, no matching).

    Args:
        runs: one model's episodes of :func:`table3_configs` (:func:`run_programming`); their units go to
            ``runs.results``.
        final_round: the round whose team answer counts for Pass@1 (the paper's last: 5).
    """
    f = episode_frame(runs)
    rows: list[dict[str, Any]] = []
    specs = [("metagpt", 0, "no_matching"), ("ours", 1, "matching"), ("ours", 2, "matching")]
    for bench in sorted(f["benchmark"].unique()):
        for method, k, setting in specs:
            part = f[(f["benchmark"] == bench) & (f["pm_tom"] == k) & (f["eng_tom"] == 0) & (f["matching"] == setting)]
            if part.empty:
                continue
            last = part[part["round"] == final_round]
            note = f"{last['task_id'].nunique()} task(s); Pass@1 of the team answer in round {final_round}"
            base = {
                "benchmark": bench,
                "method": method,
                "tom_order": "" if method == "metagpt" else str(k),
                "matching": "" if method == "metagpt" else setting,
            }
            if method == "metagpt":
                note = (
                    "our MetaGPT-style baseline (PM and engineers ToM-0, no matching); MetaGPT itself is not run "
                    "(metagpt 0.8.2 pins lancedb==0.4.0, which the package index we install from does not offer); "
                    + note
                )
            rows.append(
                {
                    **base,
                    "metric": "pass_at_1_pct",
                    "value": round(pass_at_1(list(last["answer_passed"])) * 100, 2),
                    "note": note,
                }
            )
            if method == "ours":
                life = part.drop_duplicates(["task_id", "seed"])["coalition_lifetime"]
                rows.append(
                    {
                        **base,
                        "metric": "coalition_stability",
                        "value": round(float(life.mean()), 3),
                        "note": f"{len(life)} episode(s); mean coalition lifetime in rounds, out of "
                        f"{int(part['round'].max())}",
                    }
                )
    df = pd.DataFrame(rows)
    df.insert(0, "table_id", "table3")
    df.insert(0, "paper_id", PAPER_ID)
    df["source"] = runs.source
    _table3_units(f, specs, final_round, runs.results)
    return attach_paper_values(df.assign(paper_value=np.nan))


def _table3_units(
    f: pd.DataFrame, specs: Sequence[tuple[str, int, str]], final_round: int, results: str | None
) -> None:
    """Table 3's units, one per episode (task, seed): ``pass`` (its round-``final_round`` team answer, 0/1) for every
    method, and ``coalition_stability`` (its coalitions' mean lifetime, rounds) for ours."""
    parts = [
        f[(f["pm_tom"] == k) & (f["eng_tom"] == 0) & (f["matching"] == setting)].assign(
            method=method, tom_order="" if method == "metagpt" else str(k)
        )
        for method, k, setting in specs
    ]
    g = pd.concat(parts, ignore_index=True)
    cols = ["model", "benchmark", "method", "tom_order", "matching", *READINGS, "task_id", "seed"]
    last = g[g["round"] == final_round]
    ours = g[(g["method"] == "ours") & (g["round"] == g["round"].min())]  # the lifetime is on every round's row
    pass_rows = long_units(last, "table3", cols, {"pass": "answer_passed"})
    life_rows = long_units(ours, "table3", cols, {"coalition_stability": "coalition_lifetime"})
    write_long_units([pass_rows, life_rows], results)


def tables10_12(runs: Runs) -> pd.DataFrame:
    """Tables 10-12 (Appendix F.3; gpt-4o-mini in the paper): PM ToM x engineer ToM; round-1 Pass@1 (10), round
    1 → 5 without matching (11), round 5 with matching and its change against no matching (12). ± is over seeds.

    Args:
        runs: one model's episodes of :func:`tables10_12_configs` (:func:`run_programming`); their units go to
            ``runs.results``.
    """
    f = episode_frame(runs)
    rows = metric_rows(f[f["round"].isin([1, 5])], ["benchmark", "pm_tom", "eng_tom", "matching", "round"])
    df = pd.DataFrame(rows)
    df = df[df["metric"].isin(["pass_at_1", "pass_at_1_sd"])]
    out = []
    t10 = df[(df["round"] == 1) & (df["matching"] == "no_matching")].drop(columns=["matching"])
    out.append(t10.assign(table_id="table10"))
    t11 = df[(df["matching"] == "no_matching") & (df["metric"] == "pass_at_1")]
    out.append(t11.assign(table_id="table11"))
    change = []
    for (b, p, e), part in t11.groupby(["benchmark", "pm_tom", "eng_tom"]):
        v = dict(zip(part["round"], part["value"], strict=True))
        if 1 in v and 5 in v:
            change.append(
                {
                    "benchmark": b,
                    "pm_tom": p,
                    "eng_tom": e,
                    "matching": "no_matching",
                    "round": "",
                    "metric": "pass_at_1_pct_change",
                    "value": _pct(v[1], v[5]),
                    "note": _pct_note(part["note"].iloc[0], v[1], "round-1 Pass@1"),
                }
            )
    out.append(pd.DataFrame(change).assign(table_id="table11"))
    t12 = df[(df["matching"] == "matching") & (df["round"] == 5) & (df["metric"] == "pass_at_1")]
    out.append(t12.assign(table_id="table12"))
    vs = []
    for _, row in t12.iterrows():
        ref = t11[
            (t11["benchmark"] == row["benchmark"])
            & (t11["pm_tom"] == row["pm_tom"])
            & (t11["eng_tom"] == row["eng_tom"])
            & (t11["round"] == 5)
        ]
        if len(ref):
            vs.append(
                {
                    **row.to_dict(),
                    "metric": "pass_at_1_pct_change_vs_no_matching",
                    "value": _pct(float(ref["value"].iloc[0]), float(row["value"])),
                }
            )
    out.append(pd.DataFrame(vs).assign(table_id="table12"))
    res = pd.concat([o for o in out if len(o)], ignore_index=True)
    res["round"] = res["round"].astype(str)
    res.insert(0, "table_id", res.pop("table_id"))
    res.insert(0, "paper_id", PAPER_ID)
    res["source"] = runs.source
    for c in ("pm_tom", "eng_tom"):
        res[c] = res[c].astype(str)
    _tables10_12_units(f, runs.results)
    return attach_paper_values(res.assign(paper_value=np.nan))


def _tables10_12_units(f: pd.DataFrame, results: str | None) -> None:
    """``pass`` (the team answer, 0/1) per task, seed and round: Table 10 round 1 without matching, Table 11 rounds
    1 and 5 without, Table 12 round 5 with and without matching (its changes are against Table 11's round 5)."""
    cols = ["model", "benchmark", "pm_tom", "eng_tom", "matching", *READINGS, *UNIT_COLUMNS]
    no = f["matching"] == "no_matching"
    parts = {
        "table10": f[no & (f["round"] == 1)],
        "table11": f[no & f["round"].isin([1, 5])],
        "table12": f[f["round"] == 5],
    }
    write_long_units([long_units(p, t, cols, {"pass": "answer_passed"}) for t, p in parts.items()], results)


def _pct_note(note: str, before: float, what: str) -> str:
    return note if before else f"{note}; no relative change: the {what} it is relative to is 0"


def _pct(before: float, after: float) -> float:
    """Relative change in % (the paper's arrows in Tables 11 and 12); NaN when ``before`` is 0."""
    return round((after / before - 1) * 100, 1) if before and not math.isnan(before) else float("nan")
