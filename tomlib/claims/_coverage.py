"""What part of a claim a source's units cover (issue 53, item 7).

A verdict speaks for the conditions its units ran. A claim names conditions in its queries (``player2 in ['Greedy',
'PBT']``, ``task in ['memory_1', 'memory_n']``) and may be judged within strata; a source that ran only some of them
(the formal agents play Greedy but have no trained PBT partner; the local model's 3-action runs are Memory-1 only)
covers that part of the claim and no more. And a source composed on another (``formal+ppo:selfplay``: the formal
agents with a trained partner added) shares that source's units wherever the added part plays no role: those units are
the same outcomes, not a second confirmation.
"""

from __future__ import annotations

import ast
import numbers

import numpy as np
import pandas as pd

from tomlib.claims._query import Both, Column, Compare, Condition, Either, Values, parse
from tomlib.claims._registry import Claim

ALL = "all it names"
"""``covers`` of a source that ran every condition the claim names."""


def named_values(text: str) -> dict[str, tuple[object, ...]]:
    """The columns a condition picks from a list of values (``x in [...]``, or ``x == [...]`` as pandas reads it),
    outside any ``not``: the conditions the claim is about."""
    out: dict[str, tuple[object, ...]] = {}

    def walk(cond: Condition) -> None:
        if isinstance(cond, Both | Either):
            for part in cond.parts:
                walk(part)
        elif isinstance(cond, Compare) and isinstance(cond.op(), ast.In | ast.Eq):
            col, vals = (cond.left, cond.right) if isinstance(cond.left, Column) else (cond.right, cond.left)
            if isinstance(col, Column) and isinstance(vals, Values) and len(vals.values) > 1:
                out[col.name] = tuple(dict.fromkeys(out.get(col.name, ()) + vals.values))

    if text.strip():
        walk(parse(text).condition)
    return out


def covers(claim: Claim, mine: pd.DataFrame, every: pd.DataFrame | None = None) -> str:
    """What of ``claim`` the source's grouped units ``mine`` cover: :data:`ALL`, or ``all but`` the named values it
    never ran (``all but player2 PBT``). ``every``: the claim's units of every source, against which a stratum the
    source never ran is named too."""
    named: dict[str, tuple[object, ...]] = {}
    for text in (claim.select, claim.a, claim.b, claim.c, claim.d):
        for col, vals in named_values(text).items():
            named[col] = tuple(dict.fromkeys(named.get(col, ()) + vals))
    shared = set(named_values(claim.select)) | set(claim.columns["strata"])  # every group compares within these
    if every is not None:
        for col in claim.columns["strata"]:
            if col not in named and col in every.columns:
                named[col] = tuple(sorted(every[col].dropna().unique(), key=str))
    parts = []
    for col, vals in named.items():
        if col not in mine.columns:
            continue
        by_group = [{_same(v) for v in part[col].dropna().unique()} for _, part in mine.groupby("group")]
        have = set.intersection(*by_group) if col in shared and by_group else set().union(*by_group)
        missing = list(dict.fromkeys(str(v) for v in vals if _same(v) not in have))
        if missing:
            parts.append(f"{col} {', '.join(missing)}")
    return f"all but {'; '.join(parts)}" if parts else ALL


def _same(v: object) -> object:
    """A value as a condition compares it: a number by its value (2 and 2.0 alike), anything else by its text."""
    if isinstance(v, numbers.Real) and not isinstance(v, bool | np.bool_):
        return float(v)
    try:
        return float(str(v))  # a number written as text ('2' in ``tom_order in [2, '2']``)
    except ValueError:
        return str(v)


def shared_with(base: str, mine: pd.DataFrame, theirs: pd.DataFrame) -> str:
    """``N of M units are <base>'s own`` when a composed source's units repeat its base source's outcomes (every
    column alike but the source), else ""."""
    keys = [c for c in mine.columns if c not in ("source", "group")]
    if mine.empty or theirs.empty:
        return ""
    seen = set(theirs[keys].astype(str).itertuples(index=False, name=None))
    same = sum(row in seen for row in mine[keys].astype(str).itertuples(index=False, name=None))
    if not same:
        return ""
    return f"{same:,} of {len(mine):,} units are {base}'s own (the same agents and outcomes): not a second confirmation"
