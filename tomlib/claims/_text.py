"""Verdicts in words, for REPORT and the notebooks."""

from __future__ import annotations

import math

import pandas as pd

from tomlib.claims._coverage import ALL


def fmt(v: object) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    x = float(v)  # type: ignore[arg-type]
    x = 0.0 if abs(x) < 1e-12 else x  # float noise of a contrast whose groups are equal (1.1e-16)
    return f"{x:+.3g}" if abs(x) < 1000 else f"{x:+.0f}"


def verdict_text(row: pd.Series) -> str:
    """``supported: +50.9 [48.8, 53.0], n = 540`` (and the units that would decide an inconclusive one)."""
    v = str(row["verdict"])
    if v == "not reproduced":
        return "not reproduced (no units)"
    n = int(row["n_units"]) if not pd.isna(row["n_units"]) else 0
    held = row.get("units_in_clusters")
    of = f" clusters of {int(held):,} units" if held is not None and not pd.isna(held) else ""
    if pd.isna(row["effect"]):  # too few units to estimate anything (the method says why)
        method = str(row.get("method") or "").split("; no units for 80% power: ")[0]
        text = f"{v}: {method or 'too few units'} (n = {n:,}{of})"
    elif pd.isna(row["ci_low"]):
        text = f"{v}: {fmt(row['effect'])}, no spread to estimate from n = {n:,}{of}"
    else:
        text = f"{v}: {fmt(row['effect'])} [{fmt(row['ci_low'])}, {fmt(row['ci_high'])}], n = {n:,}{of}"
    need = row.get("units_for_power")
    method = str(row.get("method") or "")
    if v == "inconclusive" and "beyond reach: needs over " in method:
        text += f"; beyond reach (needs over {method.split('beyond reach: needs over ')[1].split(';')[0]} units)"
    elif v == "inconclusive" and need is not None and not pd.isna(need) and n >= need:
        # not a call for more units (the plan's SD may be the paper's, so no more is said than that)
        text += f"; past the {int(need)} units that give 80% power at the paper's effect"
    elif v == "inconclusive" and need is not None and not pd.isna(need):
        text += f"; {int(need)} would give 80% power at the paper's effect"
    elif v == "inconclusive" and "no units for 80% power: " in str(row.get("method") or ""):
        text += "; " + str(row["method"]).split("; ")[-1]
    part = _text(row.get("covers"))
    if part and part != ALL:
        text += f"; covers {part}"
    return text


ONLY_UNDER = "run under this reading only"
"""``robust`` of a verdict judged on a run under a non-default reading, with no run under the default to compare."""


def robustness_text(row: pd.Series) -> str:
    """``robust to tie_break=…`` / ``flips under selection=uniform`` / what is not checked yet, in a few words."""
    if str(row.get("verdict")) == "not reproduced" or pd.isna(row.get("robust")):
        return ""
    if row.get("robust") == ONLY_UNDER:
        return "judged under the reading in its column only: no run under our default to compare"
    flips, missing = _text(row.get("flips_under")), _text(row.get("not_checked"))
    flipped = flips.split("; ") if flips else []
    shown = ", ".join(f"`{f}`" for f in flipped[:3]) + (f" and {len(flipped) - 3} more" if len(flipped) > 3 else "")
    parts = [f"flips under {shown}"] if flipped else []
    held = [h for h in _text(row.get("held_under")).split("; ") if h]
    if not flips and not held and not missing:
        parts.append("no reading of ours bears on it")
    elif not flips and held:
        parts.append(
            f"holds under the {len(held)} alternatives the results hold"
            if len(held) > 1
            else f"holds under `{held[0]}`"
        )
    if missing:
        parts.append(f"not checked: {missing}")
    return "; ".join(parts)


def robustness_across(texts: dict[str, str]) -> str:
    """One line for a claim's robustness over its sources: the text once when every source says the same."""
    said = {s: t for s, t in texts.items() if t}
    if len(set(said.values())) == 1:
        return next(iter(said.values()))
    return " · ".join(f"{s}: {t}" for s, t in said.items())


def _text(v: object) -> str:
    """A CSV cell as text: empty for None and NaN (an empty cell read back)."""
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)
