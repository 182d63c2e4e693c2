"""Verdicts in words, for REPORT and the notebooks."""

from __future__ import annotations

import math
import re

import pandas as pd

from tomlib.claims._coverage import ALL


def fmt(v: object) -> str:
    """A signed effect in three significant digits (``+50.9``, ``-0.12``; ``+1234`` past 1000); empty when missing.

    Args:
        v: the number (None and NaN are a cell with nothing in it).
    """
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    x = float(v)  # type: ignore[arg-type]
    x = 0.0 if abs(x) < 1e-12 else x  # float noise of a contrast whose groups are equal (1.1e-16)
    return f"{x:+.3g}" if abs(x) < 1000 else f"{x:+.0f}"


def verdict_text(row: pd.Series, paper_effect: float | None = None) -> str:
    """``supported: +50.9 [+48.8, +53.0], n = 540``; an inconclusive verdict says which case it is: too few units to
    tell (and how many would decide), no spread to estimate from, or a CI that excludes ``paper_effect`` (the paper's
    own effect, when given: more units would not find it).

    Args:
        row: one row of the verdicts table (:data:`VERDICT_COLUMNS`).
        paper_effect: the paper's own effect, to say when the interval excludes it; None, not said.
    """
    v = str(row["verdict"])
    if v == "not reproduced":
        return "not reproduced (no units)"
    n = int(row["n_units"]) if not pd.isna(row["n_units"]) else 0
    held = row.get("units_in_clusters")
    of = "" if held is None or pd.isna(held) else f" cluster{'' if n == 1 else 's'} of {int(held):,} units"
    method = str(row.get("method") or "")
    if pd.isna(row["effect"]):  # too few units to estimate anything (the method says why)
        why = re.split(r"; (?:no units for 80% power|beyond reach): ", method)[0]
        text = f"{v}: too few units to tell ({why + '; ' if why else ''}n = {n:,}{of})"
    elif pd.isna(row["ci_low"]):
        text = f"{v}: {fmt(row['effect'])}, no spread to estimate from (n = {n:,}{of})"
    else:
        text = f"{v}: {fmt(row['effect'])} [{fmt(row['ci_low'])}, {fmt(row['ci_high'])}], n = {n:,}{of}"
    if v == "inconclusive":
        text += _undecided(row, n, paper_effect)
    part = _text(row.get("covers"))
    if part and part != ALL:
        text += f"; covers {part}"
    return text


def _undecided(row: pd.Series, n: int, paper_effect: float | None) -> str:
    """Why an inconclusive verdict is one: the CI excludes the paper's effect, or too few units (how many would do)."""
    lo, hi = row.get("ci_low"), row.get("ci_high")
    if paper_effect is not None and not pd.isna(lo) and not lo <= paper_effect <= hi:
        return f"; the CI excludes the paper's {fmt(paper_effect)}"
    need, method = row.get("units_for_power"), str(row.get("method") or "")
    few = "" if pd.isna(row["effect"]) else "; too few units to tell"
    if "beyond reach: needs over " in method:
        return f"{few}: beyond reach (needs over {method.split('beyond reach: needs over ')[1].split(';')[0]} units)"
    if need is not None and not pd.isna(need) and n >= need:
        # the planned units are here: the spread is wider than the plan's (which may be the paper's SD)
        return f"{few}, though past the {int(need):,} units that give 80% power at the paper's effect"
    if need is not None and not pd.isna(need):
        return f"{few}: {int(need):,} would give 80% power at the paper's effect"
    if "no units for 80% power: " in method:
        return "; " + method.split("; ")[-1]
    return few


ONLY_UNDER = "run under this reading only"
"""``robust`` of a verdict judged on a run under a non-default reading, with no run under the default to compare."""


def robustness_text(row: pd.Series) -> str:
    """``same verdict under 11 of 11 alternative readings`` / ``... under 0 of 1; flips under trust=uniform`` / what
    is not checked yet, in a few words.

    Args:
        row: one row of the verdicts table, with its robustness columns filled (:func:`judge`).
    """
    if str(row.get("verdict")) == "not reproduced" or pd.isna(row.get("robust")):
        return ""
    if row.get("robust") == ONLY_UNDER:
        return "judged under the reading in its column only: no run under our default to compare"
    flipped = [f for f in _text(row.get("flips_under")).split("; ") if f]
    held = [h for h in _text(row.get("held_under")).split("; ") if h]
    missing = _text(row.get("not_checked"))
    parts = []
    if flipped or held:
        m = len(held) + len(flipped)
        parts.append(f"same verdict under {len(held)} of {m} alternative reading{'' if m == 1 else 's'}")
    if flipped:
        shown = ", ".join(f"`{f}`" for f in flipped[:3]) + (f" and {len(flipped) - 3} more" if len(flipped) > 3 else "")
        parts.append(f"flips under {shown}")
    if not flipped and not held and not missing:
        parts.append("no reading of ours bears on it")
    if missing:
        parts.append(f"not checked: {missing}")
    return "; ".join(parts)


def is_firm(row: pd.Series) -> bool:
    """The verdict was judged under our readings' alternatives, flips under none, and leaves none unchecked.

    Args:
        row: one row of the verdicts table, with its robustness columns filled (:func:`judge`).
    """
    judged = bool(_text(row.get("robust"))) and row.get("robust") != ONLY_UNDER
    return judged and not rests_on_readings(row) and not _text(row.get("not_checked"))


def rests_on_readings(row: pd.Series) -> list[str]:
    """The alternative readings (``reading=value``) under which the verdict flips: what it rests on of ours.

    Args:
        row: one row of the verdicts table, with its robustness columns filled (:func:`judge`).
    """
    if str(row.get("verdict")) == "not reproduced":
        return []
    return [f for f in _text(row.get("flips_under")).split("; ") if f]


def robustness_across(texts: dict[str, str]) -> str:
    """One line for a claim's robustness over its sources: the text once when every source says the same.

    Args:
        texts: source -> its :func:`robustness_text` (an empty text is left out).
    """
    said = {s: t for s, t in texts.items() if t}
    if len(set(said.values())) == 1:
        return next(iter(said.values()))
    return " · ".join(f"{s}: {t}" for s, t in said.items())


def _text(v: object) -> str:
    """A CSV cell as text: empty for None and NaN (an empty cell read back)."""
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)
