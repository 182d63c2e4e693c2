"""The coalition paper's reasoning setup (``coalition-matching-iclr-draft.txt`` §6.5, Appendices E, F): the teams
(methods), the datasets and MMLU subjects, and the paper's names for what we run.

- ``chateval`` / ``chateval_w_tom``: the ChatEval-style team without / with 2-ToM (Tables 5, 9; Appendix F.2);
- ``dylan`` / ``dylan_w_tom``: the DyLAN-style network without / with 2-ToM (Tables 5, 8; the paper's "+2-ToM");
- ``ours_matching``: ToM-0/1/2 agents whose coalition (Algorithm 1) answers together (Table 5);
- ``dylan_code`` / ``dylan_code_w_tom``: DyLAN's coder network on HumanEval (Table 7; Appendix F.1).
"""

from __future__ import annotations

from tomlib.datasets import ChoiceQuestion, aqua_rat, mmlu

PAPER_ID = "coalition"
SUBJECTS = ("us_foreign_policy", "human_sexuality", "international_law", "abstract_algebra")
"""§6.5's MMLU subjects (F.2's text names college_chemistry instead of human_sexuality; we follow §6.5 and Table 8)."""
TASK_OF = {"aqua_rat": "logic_problem_solving", "mmlu": "general_reasoning"}
METHODS = ("chateval", "chateval_w_tom", "dylan", "dylan_w_tom", "ours_matching")
CODE_METHODS = ("dylan_code", "dylan_code_w_tom")
PAPER_TOP_ROLE = {
    "us_foreign_policy": "Economist",
    "human_sexuality": "Lawyer",
    "international_law": "Economist",
    "abstract_algebra": "Mathematician",
}
"""Table 8's "role with highest importance score" per subject (the paper's DyLAN run)."""
ZERO_CREDIT = {
    "as-zero": "a question that earned nobody credit counts as 0 for every role (the default)",
    "drop": "such a question is left out of the mean",
}
"""How a question without a final answer enters a role's mean importance (the paper is silent)."""
PAPER_METHOD = {
    "dylan": "dylan",
    "dylan_w_tom": "dylan_w_2tom",
    "dylan_code": "dylan",
    "dylan_code_w_tom": "dylan_w_2tom",
}
"""Our DyLAN methods as Tables 7 and 8 name them."""


def load_questions(aqua_questions: int, mmlu_questions: int) -> list[ChoiceQuestion]:
    """The first ``aqua_questions`` of AQuA-RAT's test split and the first ``mmlu_questions`` of each subject's
    test split (0: all; the paper: all 254 and all 452).

    Args:
        aqua_questions: the first N AQuA-RAT test questions, 0 for all 254 (§6.5).
        mmlu_questions: the first N test questions of each of :data:`SUBJECTS`, 0 for all 452 (§6.5).
    """
    aqua = list(aqua_rat("test"))
    out = aqua if aqua_questions == 0 else aqua[:aqua_questions]
    for s in SUBJECTS:
        qs = list(mmlu(s, "test"))
        out += qs if mmlu_questions == 0 else qs[:mmlu_questions]
    return out
