"""Executing the notebook series (profiles), parameter sweeps and the results report."""

from tomlib.runner._execute import (
    NotebookResult,
    check_overrides,
    declared_parameters,
    export_html,
    find_notebooks,
    notebooks_dir,
    parameters_for,
    results_for_run,
    run_notebooks,
    summarize,
)
from tomlib.runner._papermill import Failure
from tomlib.runner._params import parse_cli
from tomlib.runner._profiles import Profile, available_profiles, load_profile, written_profiles_dir
from tomlib.runner._side import where_to_write
from tomlib.runner._sweep import expand_grid, load_grid, read_sweep_results, sweep

__all__ = [
    "Failure",
    "NotebookResult",
    "Profile",
    "available_profiles",
    "check_overrides",
    "declared_parameters",
    "expand_grid",
    "export_html",
    "find_notebooks",
    "load_grid",
    "load_profile",
    "notebooks_dir",
    "parameters_for",
    "parse_cli",
    "read_sweep_results",
    "results_for_run",
    "run_notebooks",
    "summarize",
    "sweep",
    "where_to_write",
    "written_profiles_dir",
]
