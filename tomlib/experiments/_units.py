"""Units rows as the experiments write them (``tomlib.claims.write_units``): per-episode outcomes, and beside each
row of a simulated model the value its declared competence implies (``tomlib.sim.expected_values``)."""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

from tomlib.claims import EXPECTED, write_units
from tomlib.llm import ConfigError, get_model_config
from tomlib.sim import SimSpec, expected_values


def declared_spec(source: str) -> SimSpec | None:
    """The declared competence (``tomlib.sim.SimSpec``) behind a ``sim:<name>`` source, when its model entry
    declares one; None for every other source."""
    if not source.startswith("sim:"):
        return None
    name = source.removeprefix("sim:")
    try:
        declared = get_model_config(name).sim
    except ConfigError:
        return None
    return None if declared is None else SimSpec(name=name, **declared)


def write_units_with_truth(frame: pd.DataFrame, results: str | os.PathLike[str] | None) -> None:
    """``write_units``, with the ``expected`` column filled for the rows of a simulated model that declares its
    competence (the claims engine computes each claim's declared truth from it)."""
    if frame.empty:
        return
    expected = pd.Series("", index=frame.index, dtype=object)
    for source, rows in frame.groupby(frame["source"].astype(str)):
        spec = declared_spec(source)
        if spec is not None:
            values = expected_values(spec, rows)
            expected.loc[rows.index] = [f"{v:.12g}" if pd.notna(v) else "" for v in values]
    write_units(frame.assign(**{EXPECTED: expected}) if (expected != "").any() else frame, results)


def write_episode_units(
    per_episode: list[dict[str, Any]], results: str | os.PathLike[str] | None, readings: dict[str, str] | None = None
) -> None:
    """Write episodes (dicts with the condition columns, ``episode``, ``score``, ``metric`` and ``source``) as units:
    the episode is the unit the paper sampled (30 repetitions a condition). ``readings`` (column -> value) are
    condition columns too: a run under another reading adds its rows beside the default's."""
    if not per_episode:
        return
    frame = pd.DataFrame(per_episode).rename(columns={"score": "value"}).drop(columns=["steps"], errors="ignore")
    frame = frame.assign(**(readings or {}))
    write_units_with_truth(frame, results)
