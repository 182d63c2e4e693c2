"""Verdicts in words, for REPORT and the notebooks."""

from __future__ import annotations

import math

import pandas as pd


def fmt(v: object) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    x = float(v)  # type: ignore[arg-type]
    return f"{x:+.3g}" if abs(x) < 1000 else f"{x:+.0f}"


def verdict_text(row: pd.Series) -> str:
    """``supported: +50.9 [48.8, 53.0], n = 540`` (and the units that would decide an inconclusive one)."""
    v = str(row["verdict"])
    if v == "not reproduced":
        return "not reproduced (no units)"
    n = int(row["n_units"]) if not pd.isna(row["n_units"]) else 0
    if pd.isna(row["effect"]):  # too few units to estimate anything (the method says why)
        text = f"{v}: {row.get('method') or 'too few units'} (n = {n})"
    elif pd.isna(row["ci_low"]):
        text = f"{v}: {fmt(row['effect'])}, no spread to estimate from n = {n}"
    else:
        text = f"{v}: {fmt(row['effect'])} [{fmt(row['ci_low'])}, {fmt(row['ci_high'])}], n = {n}"
    need = row.get("units_for_power")
    if v == "inconclusive" and need is not None and not pd.isna(need):
        text += f"; {int(need)} would give 80% power at the paper's effect"
    return text
