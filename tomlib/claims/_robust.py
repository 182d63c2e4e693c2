"""Whether a verdict rests on a reading of ours: each claim judged again under every alternative the units hold.

A reading (``data/readings/``: a rule we chose where the paper is silent) reaches the claims as a column of the units
tables (the ``claims_*`` columns of ``data/readings/<paper>.csv`` say which, its default, whom it concerns and what
computes an alternative).
The verdicts proper are judged on the default rows only. For an alternative value, every condition that has rows
under it takes those rows in place of its default rows, the other conditions keep theirs, and the whole paper is
judged again (Holm over the same family). A claim flips when its verdict for a source differs. A reading whose
alternatives no units hold for a source is "not checked", with what would compute it (a formal run needs no model
calls; LLM agents need new ones). A measure chosen among several (the FTM measures) is a reading of ``metric``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tomlib.claims._registry import Claim
from tomlib.claims._units import EXPECTED, UNIT_COLUMNS
from tomlib.paths import data_dir


@dataclass(frozen=True)
class Reading:
    """How one reading of ``data/readings/<paper>.csv`` reaches the claims (its ``claims_*`` columns)."""

    paper_id: str
    parameter: str
    column: str  # the units column that carries it; "metric" for a choice of measure; "" for none
    default: str  # the default value; "v; w if col=x" for a default that depends on another column
    concerns: str  # formal | llm | all | an exact source
    tables: tuple[str, ...]
    computed_by: str

    @property
    def measures(self) -> tuple[str, ...]:
        """For a reading of ``metric``: the measures it chooses among."""
        return tuple(self.default.split("|")) if self.column == "metric" else ()

    def concerns_source(self, source: str) -> bool:
        formal = source.startswith("formal")
        if self.concerns == "all":
            return True
        if self.concerns == "formal":
            return formal
        if self.concerns == "llm":
            return not formal
        return source == self.concerns


CLAIMS_COLUMNS = ("claims_column", "claims_default", "claims_concerns", "claims_tables", "claims_alternative")
"""The columns of ``data/readings/<paper>.csv`` that say how a reading reaches the claims (REPORT shows the rest)."""


def load_readings(paper_id: str | None = None) -> list[Reading]:
    """How each reading of ``data/readings/<paper>.csv`` (one paper's, or all) reaches the claims; the fixed rules,
    which have no alternative to judge under, are left out.

    Args:
        paper_id: the paper whose readings are read; None, every paper's.
    """
    from tomlib.claims._registry import PAPERS

    out = []
    for paper in [paper_id] if paper_id else PAPERS:
        path = data_dir() / "readings" / f"{paper}.csv"
        if not path.exists():
            continue
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        out += [
            Reading(
                paper_id=paper,
                parameter=r["parameter"],
                column=r["claims_column"],
                default=r["claims_default"],
                concerns=r["claims_concerns"],
                tables=tuple(t.strip() for t in r["claims_tables"].split(";") if t.strip()),
                computed_by=r["claims_alternative"],
            )
            for r in frame.to_dict("records")
            if r["parameter"] != "(fixed)"
        ]
    return out


def norm(values: pd.Series) -> pd.Series:
    """Values as comparable text: numbers in their shortest form (``0.25``, ``10``), the rest as written."""

    def one(x: object) -> str:
        if isinstance(x, bool):
            return str(x)
        try:
            f = float(str(x))
        except ValueError:
            return str(x)
        return f"{f:g}" if math.isfinite(f) else str(x)

    codes, uniques = pd.factorize(values, use_na_sentinel=False)  # each distinct value formatted once
    return pd.Series(np.array([one(u) for u in uniques], dtype=object)[codes], index=values.index, name=values.name)


def is_default(table: pd.DataFrame, reading: Reading) -> pd.Series:
    """Rows under the reading's default (or to which it does not apply: an empty value)."""
    if reading.column not in table.columns or reading.column == "metric":
        return pd.Series(True, index=table.index)
    value = norm(table[reading.column])
    items = _default_items(reading)
    want = pd.Series(items[None], index=table.index)
    for cond, default in items.items():  # "uniform if draft=neurips"
        if cond is not None and cond[0] in table.columns:
            want = want.mask(norm(table[cond[0]]) == cond[1], default)
    return (value == "") | (value == want)


def _default_items(reading: Reading) -> dict:
    items: dict = {}
    for part in reading.default.split(";"):
        value, _, cond = part.strip().partition(" if ")
        col, _, when = cond.partition("=")
        items[(col.strip(), when.strip()) if cond else None] = norm(pd.Series([value.strip()])).iloc[0]
    items.setdefault(None, "")
    return items


def alternatives(table: pd.DataFrame, reading: Reading) -> list[str]:
    """The non-default values of the reading this table holds."""
    if reading.column not in table.columns or reading.column == "metric" or table.empty:
        return []
    return sorted(set(norm(table.loc[~is_default(table, reading), reading.column])))


class RowMasks:
    """:func:`is_default` and :func:`norm` of a judgement's units tables, computed once per table (the same frame
    object) and reading or column. Both read row by row, so a subset's answer is the table's at the subset's rows."""

    def __init__(self) -> None:
        self._by_table: dict[int, tuple[pd.DataFrame, dict[object, pd.Series]]] = {}

    def _of(self, table: pd.DataFrame) -> dict[object, pd.Series]:
        got = self._by_table.get(id(table))
        if got is None or got[0] is not table:  # the frame is kept with its masks, so its id is never reused
            got = self._by_table[id(table)] = (table, {})
        return got[1]

    def default(self, table: pd.DataFrame, reading: Reading) -> pd.Series:
        masks = self._of(table)
        if reading not in masks:
            masks[reading] = is_default(table, reading)
        return masks[reading]

    def norm(self, table: pd.DataFrame, column: str) -> pd.Series:
        masks = self._of(table)
        if column not in masks:
            masks[column] = norm(table[column])
        return masks[column]

    def conditions(self, table: pd.DataFrame, columns: tuple[str, ...]) -> pd.Series:
        """A number per row, the same for rows whose ``columns`` read the same as text (their condition)."""
        masks = self._of(table)
        if columns not in masks:
            if columns:
                text = table[list(columns)].astype(str)
                masks[columns] = text.groupby(list(columns), sort=False, dropna=False).ngroup()
            else:  # no column: one condition
                masks[columns] = pd.Series(0, index=table.index)
        return masks[columns]


def under(
    table: pd.DataFrame,
    readings: Sequence[Reading],
    override: tuple[Reading, str] | None = None,
    masks: RowMasks | None = None,
) -> pd.DataFrame:
    """The rows a verdict reads: every reading at its default, except ``override`` = (reading, value), whose rows
    replace the default rows of each condition that has them. ``masks``: kept across calls on the same tables."""
    masks = masks or RowMasks()
    keep = pd.Series(True, index=table.index)
    for r in readings:
        if r.column in table.columns and r.column != "metric" and (override is None or r != override[0]):
            keep &= masks.default(table, r)
    rows = table[keep]
    if override is None or override[0].column not in rows.columns:
        return rows
    reading, value = override
    alt = masks.norm(table, reading.column)[keep] == value
    key = tuple(c for c in rows.columns if c not in {*UNIT_COLUMNS, "value", EXPECTED, reading.column})
    condition = masks.conditions(table, key)[keep]
    has_alt = condition.isin(condition[alt].unique())
    return rows[alt | (masks.default(table, reading)[keep] & ~has_alt)]


def defaults_only(
    units: dict[str, pd.DataFrame], readings: Sequence[Reading], masks: RowMasks | None = None
) -> dict[str, pd.DataFrame]:
    masks = masks or RowMasks()
    return {k: under(v, readings, masks=masks) for k, v in units.items()}


@dataclass(frozen=True)
class Alternative:
    """One alternative to judge: a reading's value for the rows, or another measure for the claims."""

    reading: Reading
    value: str

    @property
    def label(self) -> str:
        name = self.reading.column if self.reading.column else self.reading.parameter
        return f"{name}={self.value}"

    def units(
        self, units: dict[str, pd.DataFrame], readings: Sequence[Reading], masks: RowMasks | None = None
    ) -> dict[str, pd.DataFrame]:
        if self.reading.column == "metric":
            return defaults_only(units, readings, masks)
        masks = masks or RowMasks()
        return {k: under(v, readings, (self.reading, self.value), masks) for k, v in units.items()}

    def claims(self, claims: Sequence[Claim]) -> list[Claim]:
        if self.reading.column != "metric":
            return list(claims)
        return [replace_metric(c, self.value) if c.metric in self.reading.measures else c for c in claims]


def replace_metric(claim: Claim, metric: str) -> Claim:
    return claim.model_copy(update={"metric": metric})


def alternatives_of(
    readings: Sequence[Reading], units: dict[str, pd.DataFrame], claims: Sequence[Claim]
) -> list[Alternative]:
    """Every alternative any table of the paper holds (a measure counts where a claim uses one of its family)."""
    out: list[Alternative] = []
    for r in readings:
        if r.column == "metric":
            used = {c.metric for c in claims if c.metric in r.measures}
            held = {m for t in units.values() for m in t["metric"].unique()}
            out += [Alternative(r, m) for m in r.measures if m in held and used - {m}]
        elif r.column:
            values = sorted({v for t in units.values() for v in alternatives(t, r)})
            out += [Alternative(r, v) for v in values]
    return out


def touches(alt: Alternative, claim: Claim, picked: pd.DataFrame | None) -> bool:
    """Whether an alternative changes what this claim reads: the rows its metric and queries pick (under any
    reading; for a measure, the alternative measure's rows) hold rows under it."""
    if picked is None or picked.empty:
        return False
    r = alt.reading
    if r.column == "metric":
        return claim.metric in r.measures and claim.metric != alt.value
    return r.column in picked.columns and bool((norm(picked[r.column]) == alt.value).any())


@dataclass
class Robustness:
    """What the alternatives did to one claim's verdict for one source."""

    flips: list[str]
    held: list[str]
    not_checked: list[str]

    @property
    def robust(self) -> str:
        if self.flips:
            return "no"
        return "yes" if not self.not_checked else "not all checked"


def unchecked(
    readings: Iterable[Reading], claim: Claim, source: str, checked: set[str], picked: pd.DataFrame | None = None
) -> list[str]:
    """Readings that bear on the claim's tables and this source with no alternative in the units
    (``claims_alternative`` in ``data/readings/<paper>.csv`` says what would compute one). A reading whose column is
    empty on every row the claim picks does not apply to them (a zero-credit reading on accuracy rows)."""
    mine = set(claim.tables)
    out = []
    for r in readings:
        if r.parameter in checked or not r.concerns_source(source) or not mine & set(r.tables):
            continue
        if r.column == "metric" and claim.metric not in r.measures:
            continue
        applies = picked is None or picked.empty or r.column in ("", "metric") or r.column not in picked.columns
        if not applies and (norm(picked[r.column]) == "").all():  # type: ignore[index]
            continue
        out.append(r.parameter)
    return out
