"""Notebooks 08-11: the coalition paper's iterative-programming experiments (Tables 1, 2, 3, 6, 10-12, Fig. 2).

Every table is built from the same episodes (:mod:`tomlib.programming`): one task, one condition (the PM's ToM
order, the engineers' ToM order, matching on or off), one seed, five rounds. The sample keys name the condition, not
the notebook, so notebooks sharing a condition replay (or pay for) its calls once.

A notebook checks its parameters (:func:`check_parameters`), runs a table's conditions (:func:`run_programming` on
:func:`table1_configs`, ...) and builds the table (:func:`table1`, ...), which also writes its units. The package's
modules: ``_presets`` (§6.1's setup and each table's conditions), ``_checks``, ``_cost``, ``_run``, ``_metrics``
(§6.2's FTM, Pass@1 and coalition stability), ``_units``, ``_readings`` (FTM under other ε and alignment measures),
``_tables`` (§6.3, Appendix F.3) and ``_plots``.
"""

from tomlib.experiments.coalition_programming._checks import check_parameters, check_protocol
from tomlib.experiments.coalition_programming._cost import estimate
from tomlib.experiments.coalition_programming._metrics import engineer_pass_at_1, episode_frame, pass_at_1
from tomlib.experiments.coalition_programming._plots import (
    FIG2_MEASURES,
    paper_wide,
    plot_fig2,
    plot_ftm_epsilon,
    plot_table1,
    wide,
)
from tomlib.experiments.coalition_programming._presets import (
    TOM_CONFIGS,
    model_label,
    table1_configs,
    table2_configs,
    table3_configs,
    tables10_12_configs,
)
from tomlib.experiments.coalition_programming._readings import EPSILONS, ftm_by_alignment, ftm_vs_epsilon
from tomlib.experiments.coalition_programming._run import Runs, run_programming
from tomlib.experiments.coalition_programming._tables import table1, table2, table3, tables10_12
from tomlib.experiments.coalition_programming._units import long_units, write_long_units

__all__ = [
    "EPSILONS",
    "FIG2_MEASURES",
    "TOM_CONFIGS",
    "Runs",
    "check_parameters",
    "check_protocol",
    "engineer_pass_at_1",
    "episode_frame",
    "estimate",
    "ftm_by_alignment",
    "ftm_vs_epsilon",
    "long_units",
    "model_label",
    "paper_wide",
    "pass_at_1",
    "plot_fig2",
    "plot_ftm_epsilon",
    "plot_table1",
    "run_programming",
    "table1",
    "table1_configs",
    "table2",
    "table2_configs",
    "table3",
    "table3_configs",
    "tables10_12",
    "tables10_12_configs",
    "wide",
    "write_long_units",
]
