"""The reasoning tables' measures (``coalition-matching-iclr-draft.txt`` §6.5, Appendix F): accuracy, the share of
questions whose team answer is the key, with a 95% Wilson interval; and DyLAN's Agent Importance Score of a role
(Appendix F.1), its per-question score averaged over the questions.

Two readings of ours put the importance on the table's scale: ``importance_scale``
(:data:`tomlib.reasoning.IMPORTANCE_SCALES`: DyLAN's sum over steps divided by their number, or normalised to 1 per
question) and ``zero_credit``, how a question that earned nobody credit (no final answer) enters the mean
(:data:`ZERO_CREDIT`).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from tomlib.choices import accuracy
from tomlib.experiments.coalition_programming import model_label
from tomlib.experiments.coalition_reasoning._presets import TASK_OF, ZERO_CREDIT
from tomlib.experiments.coalition_reasoning._run import ReasoningRuns
from tomlib.reasoning import scaled


def outcome_frame(runs: ReasoningRuns) -> pd.DataFrame:
    """One row per (method, question, seed): the team's answer and whether it is the key (§6.5's accuracy).

    Args:
        runs: one model's outcomes (:func:`run_reasoning`).
    """
    return pd.DataFrame(
        [
            {
                "model": model_label(runs.model),
                "method": o.method,
                "task": TASK_OF.get(o.benchmark, o.benchmark),
                "subject": o.subject,
                "qid": o.qid,
                "seed": o.seed,
                "answer": o.answer,
                "correct": o.correct,
                "selection": runs.selection if o.method == "ours_matching" else "",
                "source": runs.source,
            }
            for o in runs.outcomes
        ]
    )


def accuracy_rows(frame: pd.DataFrame, keys: list[str]) -> list[dict[str, Any]]:
    rows = []
    for group, part in frame.groupby(keys, sort=True):
        acc = accuracy(int(part["correct"].sum()), len(part))
        note = f"{acc.correct}/{acc.total} correct; 95% Wilson CI {100 * acc.low:.1f}-{100 * acc.high:.1f}%"
        base = dict(zip(keys, group if isinstance(group, tuple) else (group,), strict=True))
        rows.append({**base, "metric": "accuracy_pct", "value": round(100 * acc.value, 2), "note": note})
        rows.append({**base, "metric": "accuracy_pct_ci_low", "value": round(100 * acc.low, 2), "note": note})
        rows.append({**base, "metric": "accuracy_pct_ci_high", "value": round(100 * acc.high, 2), "note": note})
    return rows


def _check_zero_credit(zero_credit: str) -> None:
    if zero_credit not in ZERO_CREDIT:
        raise ValueError(f"zero_credit must be one of {', '.join(ZERO_CREDIT)}; got {zero_credit!r}")


def importance_frame(
    runs: ReasoningRuns, *, zero_credit: str = "as-zero", importance_scale: str = "per-step"
) -> pd.DataFrame:
    """Mean Agent Importance Score per (method, benchmark, subject, role) over the questions; ``questions`` counts
    those averaged. A question that earned nobody credit (no final answer) counts as 0 for every role, or is left
    out with ``zero_credit="drop"`` (:data:`ZERO_CREDIT`); ``importance_scale`` as :data:`IMPORTANCE_SCALES`.

    Args:
        runs: one model's outcomes (:func:`run_reasoning`); the DyLAN methods carry importance (Appendix F.1).
        zero_credit: how a question without a final answer enters the mean (:data:`ZERO_CREDIT`).
        importance_scale: the Agent Importance Score's scale (:data:`tomlib.reasoning.IMPORTANCE_SCALES`).
    """
    f = question_importance(runs, zero_credit=zero_credit, importance_scale=importance_scale)
    return f.groupby(["method", "benchmark", "subject", "role"], as_index=False).agg(
        score=("score", "mean"), questions=("qid", "nunique")
    )


def question_importance(
    runs: ReasoningRuns, *, zero_credit: str = "as-zero", importance_scale: str = "per-step"
) -> pd.DataFrame:
    """Each role's Agent Importance Score per (method, question, seed), on the ``importance_scale`` and under the
    ``zero_credit`` reading (a question that earned nobody credit: every role 0, or no rows with ``drop``).

    Args:
        runs: one model's outcomes (:func:`run_reasoning`); the DyLAN methods carry importance (Appendix F.1).
        zero_credit: how a question without a final answer enters (:data:`ZERO_CREDIT`).
        importance_scale: the Agent Importance Score's scale (:data:`tomlib.reasoning.IMPORTANCE_SCALES`).
    """
    _check_zero_credit(zero_credit)
    rows = [
        {
            "method": o.method,
            "benchmark": o.benchmark,
            "subject": o.subject,
            "qid": o.qid,
            "seed": o.seed,
            "role": r,
            "score": v,
        }
        for o in runs.outcomes
        if o.importance is not None and (zero_credit == "as-zero" or sum(o.importance.values()) > 0)
        for r, v in scaled(o.importance, importance_scale).items()
    ]
    return pd.DataFrame(rows, columns=["method", "benchmark", "subject", "qid", "seed", "role", "score"])
