"""Notebook 13/14's parameters, checked before any work (``coalition-matching-iclr-draft.txt`` §6.5, Appendix F):
every error names the parameter, its values and the fix."""

from __future__ import annotations

from typing import Any

from tomlib.errors import UsageError
from tomlib.experiments._checks import check_counts, check_models
from tomlib.experiments.coalition_reasoning._presets import ZERO_CREDIT
from tomlib.reasoning import IMPORTANCE_SCALES


def check_reasoning_parameters(
    models: str,
    *,
    llm_mode: str,
    aqua_questions: Any,
    mmlu_questions: Any,
    humaneval_tasks: Any = 0,
    seeds: Any = 1,
    zero_credit: str = "as-zero",
    importance_scale: str = "per-step",
) -> list[str]:
    """Check notebook 13/14's parameters before any work; return the model names.

    Args:
        models: comma-separated names from ``configs/models.yaml`` (§6.5: gpt-3.5-turbo and gpt-4o-mini).
        llm_mode: ``replay`` (recorded transcripts, offline), ``auto`` or ``record``.
        aqua_questions: the first N AQuA-RAT test questions, 0 for all 254 (§6.5).
        mmlu_questions: the first N test questions of each MMLU subject, 0 for all 452 (§6.5).
        humaneval_tasks: the first N HumanEval tasks of Table 7 (Appendix F.1), 0 for all 164.
        seeds: repetitions of every question, at least 1.
        zero_credit: how a question without a final answer enters a role's mean importance (:data:`ZERO_CREDIT`;
            Appendix F.1 is silent).
        importance_scale: the Agent Importance Score's scale (Appendix F.1;
            :data:`tomlib.reasoning.IMPORTANCE_SCALES`).
    """
    check_counts(
        aqua_questions=aqua_questions, mmlu_questions=mmlu_questions, humaneval_tasks=humaneval_tasks, seeds=seeds
    )
    if zero_credit not in ZERO_CREDIT:
        raise UsageError(
            f"zero_credit={zero_credit!r} is not a reading; use one of: "
            + "; ".join(f"{k} ({v})" for k, v in ZERO_CREDIT.items())
        )
    if importance_scale not in IMPORTANCE_SCALES:
        raise UsageError(
            f"importance_scale={importance_scale!r} is not a reading; use one of: "
            + "; ".join(f"{k} ({v})" for k, v in IMPORTANCE_SCALES.items())
        )
    return check_models(models, llm_mode)
