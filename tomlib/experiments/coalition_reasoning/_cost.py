"""The cost preview of a reasoning run (calls, tokens, USD) before its first live call: upper bounds on the calls of
each team (``coalition-matching-iclr-draft.txt`` §6.5, Appendix F), priced from ``configs/models.yaml``."""

from __future__ import annotations

from collections.abc import Sequence

from tomlib.experiments._cost import Estimate, price
from tomlib.experiments.coalition_reasoning._presets import CODE_METHODS

CALLS_PER_QUESTION = {"chateval": 4, "chateval_w_tom": 4, "dylan": 17, "dylan_w_tom": 17, "ours_matching": 15}
"""Upper bounds per question (DyLAN stops early on consensus): ChatEval 2 roles x 2 turns; DyLAN 7 + 7 + ranker + 2;
ours 3 rounds x (3 answers + 2 self-evaluations)."""
CALLS_PER_CODE_TASK = 14  # Tester + 4 + 4 + 2 coders + 2 Reflector + Ranker
TOKENS_PER_CALL = (700, 300)


def estimate(model: str, methods: Sequence[str], n_questions: int, n_code_tasks: int, seeds: int) -> Estimate:
    """Calls, tokens and USD of running from scratch (upper bounds; our token guess per call).

    Args:
        model: a name from ``configs/models.yaml``, whose prices apply.
        methods: the teams (:data:`METHODS` and :data:`CODE_METHODS`).
        n_questions: AQuA-RAT and MMLU questions in all (§6.5).
        n_code_tasks: HumanEval tasks of the code methods (Appendix F.1).
        seeds: repetitions of every question and task.
    """
    calls = sum(CALLS_PER_QUESTION[m] for m in methods if m in CALLS_PER_QUESTION) * n_questions
    calls += sum(1 for m in methods if m in CODE_METHODS) * CALLS_PER_CODE_TASK * n_code_tasks
    return price(model, calls * seeds, TOKENS_PER_CALL)
