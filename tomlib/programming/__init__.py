"""The coalition paper's iterative-programming team: a ToM-k project manager and four engineers over five rounds
(``coalition-matching-iclr-draft.txt`` §3, §6.3, Appendices A, C and F.3), with or without coalition matching.

>>> ep = await run_episode(chat, humaneval()[0], TeamConfig(pm_tom=2, matching=True))   # doctest: +SKIP
>>> check_episodes([ep]); [r.answer_passed for r in ep.rounds]                          # doctest: +SKIP
"""

from tomlib.programming._check import CHECK_LIMITS, check_episodes
from tomlib.programming._parse import EngineerReply, parse_engineer
from tomlib.programming._prompts import alignment_schema, pm_schema, task_statement, teammate_evaluation_messages
from tomlib.programming._team import (
    EXPERIMENT,
    PM_HISTORIES,
    PROTOCOL_CHOICES,
    EngineerTurn,
    Episode,
    PMHistory,
    RoundResult,
    TeamConfig,
    run_episode,
    score_matrix,
    team_algorithm1,
    team_answer,
    team_instance,
    team_of,
)

__all__ = [
    "CHECK_LIMITS",
    "EXPERIMENT",
    "PM_HISTORIES",
    "PROTOCOL_CHOICES",
    "EngineerReply",
    "EngineerTurn",
    "Episode",
    "PMHistory",
    "RoundResult",
    "TeamConfig",
    "alignment_schema",
    "check_episodes",
    "parse_engineer",
    "pm_schema",
    "run_episode",
    "score_matrix",
    "task_statement",
    "team_algorithm1",
    "team_answer",
    "team_instance",
    "team_of",
    "teammate_evaluation_messages",
]
