"""Notebooks 13-14: the coalition paper's reasoning teams (§6.5, Appendices E, F; Tables 5, 7, 8, 9).

Every table comes from the same per-question runs (:mod:`tomlib.reasoning`), so notebooks and tables sharing a
method and question replay (or pay for) its calls once. A notebook checks its parameters
(:func:`check_reasoning_parameters`), runs the methods (:func:`run_reasoning` on :data:`METHODS` or
:data:`CODE_METHODS`) and builds the tables (:func:`table5`, ...), which also write their units.

The package's modules: ``_presets`` (the methods, datasets and subjects), ``_checks``, ``_cost``, ``_run``,
``_metrics`` (accuracy and the Agent Importance Score), ``_units``, ``_tables``, ``_readings`` (the tables under the
readings the paper leaves open) and ``_plots``.
"""

from tomlib.experiments.coalition_reasoning._checks import check_reasoning_parameters
from tomlib.experiments.coalition_reasoning._cost import CALLS_PER_QUESTION, estimate
from tomlib.experiments.coalition_reasoning._metrics import importance_frame
from tomlib.experiments.coalition_reasoning._plots import importance_wide, plot_importance, wide_accuracy
from tomlib.experiments.coalition_reasoning._presets import CODE_METHODS, METHODS, SUBJECTS, ZERO_CREDIT, load_questions
from tomlib.experiments.coalition_reasoning._readings import extraction_counts, importance_readings, team_by_rule
from tomlib.experiments.coalition_reasoning._run import Outcome, ReasoningRuns, run_reasoning
from tomlib.experiments.coalition_reasoning._tables import table5, table7, table8, table9
from tomlib.reasoning import CODE_ROLES

__all__ = [
    "CALLS_PER_QUESTION",
    "CODE_METHODS",
    "CODE_ROLES",
    "METHODS",
    "SUBJECTS",
    "ZERO_CREDIT",
    "Outcome",
    "ReasoningRuns",
    "check_reasoning_parameters",
    "estimate",
    "extraction_counts",
    "importance_frame",
    "importance_readings",
    "importance_wide",
    "load_questions",
    "plot_importance",
    "run_reasoning",
    "table5",
    "table7",
    "table8",
    "table9",
    "team_by_rule",
    "wide_accuracy",
]
