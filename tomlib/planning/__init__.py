"""Plans before a run: the units, calls and cost that decide the papers' claims (``python -m tomlib plan``)."""

from tomlib.planning._plan import ClaimPlan, Plan, make_plan, select_claims
from tomlib.planning._waves import WaveRecord, read_records, run_in_waves
from tomlib.planning._write import plan_lines, profile_name, write_profile

__all__ = [
    "ClaimPlan",
    "Plan",
    "WaveRecord",
    "make_plan",
    "plan_lines",
    "profile_name",
    "read_records",
    "run_in_waves",
    "select_claims",
    "write_profile",
]
