"""Executing the notebook series (profiles), parameter sweeps and the results report."""

from tomlib.runner._execute import NotebookResult, find_notebooks, parameters_for, run_notebooks, summarize
from tomlib.runner._profiles import Profile, available_profiles, load_profile
from tomlib.runner._sweep import expand_grid, load_grid, read_sweep_results, sweep

__all__ = [
    "NotebookResult",
    "Profile",
    "available_profiles",
    "expand_grid",
    "find_notebooks",
    "load_grid",
    "load_profile",
    "parameters_for",
    "read_sweep_results",
    "run_notebooks",
    "summarize",
    "sweep",
]
