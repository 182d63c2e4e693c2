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
    EngineerTurn,
    Episode,
    PMHistory,
    RoundResult,
    TeamConfig,
    run_episode,
)

__all__ = [
    "CHECK_LIMITS",
    "EXPERIMENT",
    "PM_HISTORIES",
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
    "task_statement",
    "teammate_evaluation_messages",
]
