"""Answer Set Programming with clingo: belief verification with minimal cores, and the city's exact optimum."""

from tomlib.asp.planner import OptimalPlan, exact_unit, optimal_plan, replay_plan
from tomlib.asp.verify import (
    VOCABULARY,
    Checker,
    TranslationError,
    Verdict,
    domain_facts,
    explain,
    minimal_core,
    parse_facts,
    parse_program,
    self_consistent,
    verify,
)

__all__ = [
    "VOCABULARY",
    "Checker",
    "OptimalPlan",
    "TranslationError",
    "Verdict",
    "domain_facts",
    "exact_unit",
    "explain",
    "minimal_core",
    "optimal_plan",
    "parse_facts",
    "parse_program",
    "replay_plan",
    "self_consistent",
    "verify",
]
