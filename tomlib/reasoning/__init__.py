"""Reasoning teams (coalition paper §6.5, Appendices E, F; Tables 5, 7-9, notebooks 13-14): shared answer prompts and
voting, ChatEval- and DyLAN-style teams (multiple choice, and DyLAN's coder network), and the paper's coalition-matching
team.

>>> res = await run_coalition_team(chat, aqua_rat()[0])   # doctest: +SKIP
>>> res.answer, res.correct                               # doctest: +SKIP
"""

from tomlib.reasoning._chateval import ChatEvalResult, run_chateval
from tomlib.reasoning._coalition_team import TeamResult, TeamRound, run_coalition_team
from tomlib.reasoning._common import Answer, answer_messages, plurality, read_answer
from tomlib.reasoning._dylan import MMLU_ROLES, DylanResult, run_dylan
from tomlib.reasoning._dylan_code import (
    CODE_ROLES,
    DylanCodeResult,
    counting_tests,
    parse_asserts,
    run_dylan_code,
)
from tomlib.reasoning._dylan_graph import IMPORTANCE_SCALES, normalised, parse_ratings, scaled

__all__ = [
    "CODE_ROLES",
    "IMPORTANCE_SCALES",
    "MMLU_ROLES",
    "Answer",
    "ChatEvalResult",
    "DylanCodeResult",
    "DylanResult",
    "TeamResult",
    "TeamRound",
    "answer_messages",
    "counting_tests",
    "normalised",
    "parse_asserts",
    "parse_ratings",
    "plurality",
    "read_answer",
    "run_chateval",
    "run_coalition_team",
    "run_dylan",
    "run_dylan_code",
    "scaled",
]
