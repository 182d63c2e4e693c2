"""The coalition paper's debate (§6.4, Appendix D): ToM debaters, speakers picked at random or by the matching
mechanism, one judge verdict per round: Table 4 (notebook 12).

>>> d = await run_debate(chat, judge, DebateConfig(setting="tom_matching"))   # doctest: +SKIP
>>> win_rates([d]), cooperation_rate([d], 5)                                  # doctest: +SKIP
"""

from tomlib.debate._debate import (
    EXPERIMENT,
    SETTINGS,
    Debate,
    DebateConfig,
    DebateRound,
    WinRates,
    best_pairs,
    cooperation_rate,
    debater_names,
    run_debate,
    win_rates,
)
from tomlib.debate._prompts import TOPIC, Verdict, debater_schema

__all__ = [
    "EXPERIMENT",
    "SETTINGS",
    "TOPIC",
    "Debate",
    "DebateConfig",
    "DebateRound",
    "Verdict",
    "WinRates",
    "best_pairs",
    "cooperation_rate",
    "debater_names",
    "debater_schema",
    "run_debate",
    "win_rates",
]
