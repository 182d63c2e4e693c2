"""The coalition tables' units (``tomlib.claims.write_units``, ``results/units/coalition.<table_id>.csv``): one row per
unit and metric, with the readings of ours the paper leaves open (``coalition-matching-iclr-draft.txt`` §6.2's ε, the
PM's history, Appendix A's alignment, §5.1's selection and the protocol) as condition columns, so a claim can be
judged under each."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from tomlib.coalition import check_selection
from tomlib.experiments._units import write_units_with_truth
from tomlib.experiments.coalition_programming._presets import PAPER_ID
from tomlib.programming import TeamConfig

MATCHING_ONLY = ("pm_cites", "rematch", "initial", "preferences")
READINGS = ("epsilon", "pm_history", "alignment", "selection", "pm_feedback", *MATCHING_ONLY)
"""Choices of ours the paper leaves open, carried as condition columns of the units so a claim can be judged under
each: ε, what the PM's belief update sees of the past, how alignment is scored, the rule that picks among stable
coalitions, and the protocol's readings (``PROTOCOL_CHOICES``; those of matching are empty without it)."""
UNIT_COLUMNS = ["task_id", "seed", "round"]
"""A unit is one task's team at one round, per seed (its rounds share the task)."""


def readings(cfg: TeamConfig) -> dict[str, Any]:
    """The values of :data:`READINGS` in one condition."""
    return {
        "epsilon": cfg.epsilon,
        "pm_history": cfg.pm_history,
        "alignment": cfg.alignment,
        "selection": check_selection(cfg.selection, "iclr") if cfg.matching else "",
        "pm_feedback": cfg.pm_feedback,
        **{name: getattr(cfg, name) if cfg.matching else "" for name in MATCHING_ONLY},
    }


def long_units(frame: pd.DataFrame, table_id: str, columns: Sequence[str], metrics: Mapping[str, str]) -> pd.DataFrame:
    """``frame`` (one row per unit) long-form, as ``tomlib.claims.write_units`` takes it: ``columns`` (the condition
    and unit columns), then each of ``metrics`` (unit metric name -> frame column) as ``metric`` and ``value``
    (booleans 0/1; missing values, e.g. ``ftm_next`` of the last round, are left out).

    Args:
        frame: one row per unit, with a ``source`` column.
        table_id: the paper's table the units serve (``table1``, ...).
        columns: the condition and unit columns kept.
        metrics: unit metric name → the column of ``frame`` that holds it.
    """
    head = ["paper_id", "table_id", *columns, "metric", "value", "source"]
    parts = []
    for metric, col in metrics.items():
        if frame.empty:
            break
        part = frame[[*columns, col, "source"]].rename(columns={col: "value"}).dropna(subset=["value"])
        value = part["value"]
        value = value.astype(int) if value.dtype == bool else value
        parts.append(part.assign(metric=metric, value=value.astype(object)))  # 0/1 stay integers beside floats
    if not parts:
        return pd.DataFrame(columns=head)
    return pd.concat(parts, ignore_index=True).assign(paper_id=PAPER_ID, table_id=table_id)[head]


def write_long_units(frames: Sequence[pd.DataFrame], results: str | os.PathLike[str] | None) -> None:
    """Write the units rows of ``frames`` (:func:`long_units`), one file per table, if there are any.

    Args:
        frames: :func:`long_units` frames, of one table or several.
        results: the results folder (None: the project's ``results/``); the files go to its ``units/``.
    """
    rows = [f for f in frames if len(f)]
    if rows:
        write_units_with_truth(pd.concat(rows, ignore_index=True), results)
