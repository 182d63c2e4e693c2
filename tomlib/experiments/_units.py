"""Per-episode outcomes as units rows (``tomlib.claims.write_units``): one row per episode, its score as ``value``."""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

from tomlib.claims import write_units


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
    write_units(frame, results)
