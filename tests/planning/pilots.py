"""A pilot results folder for the planner's tests: Table 1 units at a known size and the executed notebook's
parameters that say so."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from tomlib.claims import write_units

CLAIM = "coalition.higher_tom_no_gain"  # Table 1, paired over (model, benchmark, task), rounds 1 and 5
STEM = "08_coalition_table1"


def pilot(folder: Path, source: str, tasks: int, sd: float, seed: int = 0, ran: str = "local") -> None:
    """Table 1 units of ``source`` on ``tasks`` tasks per benchmark (ToM-2 minus ToM-1 drawn with SD ``sd`` per
    task), and the executed notebook that says it ran ``ran`` at that size."""
    rng = np.random.default_rng(seed)
    rows = []
    for bench in ("humaneval", "mbpp"):
        for t in range(tasks):
            gap = rng.normal(0, sd)
            for tom in (1, 2):
                for rnd in (1, 5):
                    rows.append(
                        {
                            "paper_id": "coalition",
                            "table_id": "table1",
                            "model": source.split(":", 1)[1],
                            "benchmark": bench,
                            "matching": "no_matching",
                            "tom_order": tom,
                            "task_id": f"{bench}/{t}",
                            "seed": 0,
                            "round": rnd,
                            "metric": "ftm",
                            "value": 50.0 + (gap if tom == 2 else 0.0),
                            "source": source,
                        }
                    )
    write_units(pd.DataFrame(rows), folder)
    book = folder / "notebooks" / f"{STEM}.ipynb"
    book.parent.mkdir(parents=True, exist_ok=True)
    meta = {"papermill": {"parameters": {"models": ran, "humaneval_tasks": tasks, "mbpp_tasks": tasks}}}
    book.write_text(json.dumps({"cells": [], "metadata": meta, "nbformat": 4, "nbformat_minor": 5}))
