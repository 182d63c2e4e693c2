"""Plans before a run: the units, calls and cost that decide the papers' claims (``python -m tomlib plan``)."""

from tomlib.planning._plan import ClaimPlan, Plan, make_plan, select_claims
from tomlib.planning._write import plan_lines, write_profile

__all__ = ["ClaimPlan", "Plan", "make_plan", "plan_lines", "select_claims", "write_profile"]
