"""The coalition paper's reasoning tables (``coalition-matching-iclr-draft.txt`` §6.5: Table 5; Appendix F.1:
Tables 7 and 8; Appendix F.2: Table 9) in the results-contract long form, each beside the paper's values. Each table
function also writes its units (:mod:`._units`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from tomlib.experiments.coalition_programming import pass_at_1, write_long_units
from tomlib.experiments.coalition_reasoning._metrics import accuracy_rows, importance_frame, outcome_frame
from tomlib.experiments.coalition_reasoning._presets import (
    CODE_METHODS,
    PAPER_ID,
    PAPER_METHOD,
    PAPER_TOP_ROLE,
    SUBJECTS,
)
from tomlib.experiments.coalition_reasoning._run import ReasoningRuns
from tomlib.experiments.coalition_reasoning._units import correct_units, write_dylan_units
from tomlib.reasoning import CODE_ROLES, MMLU_ROLES
from tomlib.report import attach_paper_values


def _finish(rows: list[dict[str, Any]], table_id: str, source: str) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    df.insert(0, "draft", "iclr")
    df.insert(0, "table_id", table_id)
    df.insert(0, "paper_id", PAPER_ID)
    df["source"] = source
    return attach_paper_values(df.assign(paper_value=np.nan))


def table5(runs: ReasoningRuns) -> pd.DataFrame:
    """Table 5 (§6.5): accuracy (%) of ChatEval w. ToM, DyLAN w. ToM and ours (+matching), per task.

    Args:
        runs: one model's outcomes (:func:`run_reasoning`); their units go to ``runs.results``.
    """
    f = outcome_frame(runs)
    f = f[f["method"].isin(["chateval_w_tom", "dylan_w_tom", "ours_matching"])]
    write_long_units([correct_units(f, "table5")], runs.results)
    return _finish(accuracy_rows(f, ["task", "model", "method"]), "table5", runs.source)


def table9(runs: ReasoningRuns) -> pd.DataFrame:
    """Table 9 (Appendix F.2): ChatEval accuracy (%) without and with ToM per task, and the point change.

    Args:
        runs: one model's outcomes (:func:`run_reasoning`); their units go to ``runs.results``.
    """
    f = outcome_frame(runs)
    f = f[f["method"].isin(["chateval", "chateval_w_tom"])]
    write_long_units([correct_units(f, "table9")], runs.results)
    rows = accuracy_rows(f, ["task", "model", "method"])
    acc = {(r["task"], r["model"], r["method"]): r["value"] for r in rows if r["metric"] == "accuracy_pct"}
    for (task, model, method), v in list(acc.items()):
        if method == "chateval_w_tom" and (task, model, "chateval") in acc:
            rows.append(
                {
                    "task": task,
                    "model": model,
                    "method": method,
                    "metric": "accuracy_pct_point_change_vs_chateval",
                    "value": round(v - acc[(task, model, "chateval")], 2),
                }
            )
    return _finish(rows, "table9", runs.source)


def _pct_change(new: float, old: float) -> float:
    return round(100 * (new - old) / old, 2) if old else float("nan")


def table8(runs: ReasoningRuns, *, zero_credit: str = "as-zero", importance_scale: str = "per-step") -> pd.DataFrame:
    """Table 8 (MMLU, DyLAN; Appendix F.1): every role's mean importance without / with 2-ToM and its relative change,
    and the task accuracy, per subject. Rows of the paper's top role carry the paper's values; our top role is named
    in the note.

    Args:
        runs: one model's outcomes of ``dylan`` and ``dylan_w_tom`` (:func:`run_reasoning`); their units go to
            ``runs.results``.
        zero_credit: how questions without a final answer enter the means (:data:`ZERO_CREDIT`; the paper is
            silent).
        importance_scale: the Agent Importance Score's scale (:data:`tomlib.reasoning.IMPORTANCE_SCALES`).
    """
    imp = importance_frame(runs, zero_credit=zero_credit, importance_scale=importance_scale)
    imp = imp[(imp["benchmark"] == "mmlu") & imp["method"].isin(["dylan", "dylan_w_tom"])]
    acc = outcome_frame(runs)
    acc = acc[(acc["task"] == "general_reasoning") & acc["method"].isin(["dylan", "dylan_w_tom"])]
    rows: list[dict[str, Any]] = []
    for subject in SUBJECTS:
        rows += _table8_importance(imp[imp["subject"] == subject], subject, not acc[acc["subject"] == subject].empty)
        rows += _table8_accuracy(acc, subject)
    out = _finish(rows, "table8", runs.source)
    write_dylan_units(runs, "table8")
    if not out.empty:
        out["value"] = out["value"].astype(float)
        out.loc[out["value"].isna(), "note"] = out.loc[out["value"].isna(), "note"].replace("", "no base value")
    return _name_reading(out, zero_credit, importance_scale)


def _table8_importance(part: pd.DataFrame, subject: str, answered: bool) -> list[dict[str, Any]]:
    """Table 8's importance rows of one subject (``part``: its mean importance per method and role): each role's
    score without and with 2-ToM and its relative change. The paper's top role gets a NaN row when the subject has
    questions (``answered``) but none ended with an answer."""
    rows: list[dict[str, Any]] = []
    base_scores = part[part["method"] == "dylan"].set_index("role")["score"]
    top = str(base_scores.idxmax()) if len(base_scores) and base_scores.max() > 0 else ""
    tom_scores = part[part["method"] == "dylan_w_tom"].set_index("role")["score"]
    for role in MMLU_ROLES:
        note = "highest importance in this run (without ToM)" if role == top else ""
        common = {"benchmark": "mmlu", "task": subject, "role": role}
        for method, scores in (("dylan", base_scores), ("dylan_w_tom", tom_scores)):
            if role in scores.index:
                value, why = round(float(scores[role]), 4), note
            elif role == PAPER_TOP_ROLE[subject] and answered:
                value, why = float("nan"), "no question of this subject ended with an answer: no importance"
            else:
                continue
            rows.append(
                {
                    **common,
                    "method": PAPER_METHOD[method],
                    "metric": "importance_score",
                    "value": value,
                    "note": why,
                }
            )
        if role in base_scores.index and role in tom_scores.index:
            rows.append(
                {
                    **common,
                    "method": "dylan_w_2tom",
                    "metric": "importance_score_pct_change",
                    "value": _pct_change(float(tom_scores[role]), float(base_scores[role])),
                    "note": note,
                }
            )
    return rows


def _table8_accuracy(acc: pd.DataFrame, subject: str) -> list[dict[str, Any]]:
    """Table 8's accuracy rows of one subject, on the paper's top role's row: without and with 2-ToM and the
    relative change."""
    rows: list[dict[str, Any]] = []
    accs = {}
    for method in ("dylan", "dylan_w_tom"):
        a = acc[(acc["subject"] == subject) & (acc["method"] == method)]
        if len(a):
            accs[method] = float(a["correct"].mean())
            rows.append(
                {
                    "benchmark": "mmlu",
                    "task": subject,
                    "role": PAPER_TOP_ROLE[subject],
                    "method": PAPER_METHOD[method],
                    "metric": "accuracy",
                    "value": round(accs[method], 4),
                    "note": f"task accuracy over {len(a)} question(s) (the paper prints it beside its top role)",
                }
            )
    if len(accs) == 2:
        rows.append(
            {
                "benchmark": "mmlu",
                "task": subject,
                "role": PAPER_TOP_ROLE[subject],
                "method": "dylan_w_2tom",
                "metric": "accuracy_pct_change",
                "value": _pct_change(accs["dylan_w_tom"], accs["dylan"]),
                "note": "relative change of the task accuracy (nan when the base accuracy is 0)",
            }
        )
    return rows


def _name_reading(table: pd.DataFrame, zero_credit: str, importance_scale: str) -> pd.DataFrame:
    """Importance rows say which readings made them."""
    if table.empty:
        return table
    rows = table["metric"].str.startswith("importance_score")
    said = f"importance_scale={importance_scale}; zero_credit={zero_credit}"
    table.loc[rows, "note"] = [f"{n}; {said}" if n else said for n in table.loc[rows, "note"].fillna("")]
    return table


def table7(runs: ReasoningRuns, *, zero_credit: str = "as-zero", importance_scale: str = "per-step") -> pd.DataFrame:
    """Table 7 (HumanEval, DyLAN coders; Appendix F.1): each coder's mean importance without / with 2-ToM and its
    relative change; Pass@1 of the network's final code beside it (not in the paper's table).

    Args:
        runs: one model's outcomes of :data:`CODE_METHODS` (:func:`run_reasoning`); their units go to
            ``runs.results``.
        zero_credit: how tasks without a final code enter the means (:data:`ZERO_CREDIT`; the paper is silent).
        importance_scale: DyLAN's sum over steps (a task the coders agreed on at step 1 gives its roles 2/3 in all)
            or per task (:data:`tomlib.reasoning.IMPORTANCE_SCALES`).
    """
    imp = importance_frame(runs, zero_credit=zero_credit, importance_scale=importance_scale)
    imp = imp[imp["method"].isin(CODE_METHODS)]
    paper_method = {"dylan_code": "dylan", "dylan_code_w_tom": "dylan_w_2tom"}
    rows: list[dict[str, Any]] = []
    scores = {m: imp[imp["method"] == m].set_index("role")["score"] for m in CODE_METHODS}
    for role in CODE_ROLES:
        for m in CODE_METHODS:
            if role in scores[m].index:
                rows.append(
                    {
                        "benchmark": "humaneval",
                        "role": role,
                        "method": paper_method[m],
                        "metric": "importance_score",
                        "value": round(float(scores[m][role]), 4),
                    }
                )
        if all(role in scores[m].index for m in CODE_METHODS):
            rows.append(
                {
                    "benchmark": "humaneval",
                    "role": role,
                    "method": "dylan_w_2tom",
                    "metric": "importance_score_pct_change",
                    "value": _pct_change(float(scores["dylan_code_w_tom"][role]), float(scores["dylan_code"][role])),
                }
            )
    f = outcome_frame(runs)
    for m in CODE_METHODS:
        part = f[f["method"] == m]
        if len(part):
            rows.append(
                {
                    "benchmark": "humaneval",
                    "role": "(network)",
                    "method": paper_method[m],
                    "metric": "pass_at_1",
                    "value": round(pass_at_1(list(part["correct"])), 4),
                    "note": f"final code on the hidden tests, {len(part)} task(s)",
                }
            )
    out = _finish(rows, "table7", runs.source)
    write_dylan_units(runs, "table7")
    if not out.empty and "note" in out.columns:
        out["note"] = out["note"].fillna("")
        out.loc[out["value"].isna(), "note"] = "no base value"
    return _name_reading(out, zero_credit, importance_scale)
