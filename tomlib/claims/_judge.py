"""Every registered claim judged on every source the results hold: ``results/claims.csv``."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from tomlib.claims._registry import PAPERS, Claim, load_claims
from tomlib.claims._text import verdict_text
from tomlib.claims._units import read_units
from tomlib.claims._verdict import VERDICT_COLUMNS, verdicts
from tomlib.paths import results_dir


def tables_of(claim: Claim) -> list[str]:
    """The units tables a claim reads (``units`` may list several, separated by ``;``)."""
    return [t.strip() for t in claim.units.split(";") if t.strip()]


def units_for(claims: Iterable[Claim], units: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The units each claim reads, keyed by its ``units`` text: several tables are stacked (their ``table_id``
    column tells them apart in the claim's queries)."""
    out = {}
    for c in claims:
        frames = [units[t] for t in tables_of(c) if t in units]
        if frames:
            out[c.units] = pd.concat(frames, ignore_index=True)
    return out


def judge(results: str | os.PathLike[str] | None = None, papers: Iterable[str] = PAPERS) -> pd.DataFrame:
    """Verdicts of every paper's claims on every source in ``results/units/`` (one row per claim and source; a
    claim with no units of a source present elsewhere in its paper is "not reproduced" for it)."""
    units = read_units(results)
    frames = []
    for paper in papers:
        claims = load_claims(paper)
        mine = units_for(claims, units)
        sources = sorted({s for f in mine.values() for s in f["source"].unique()})
        if sources:
            frames.append(verdicts(paper, claims, mine, sources))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=VERDICT_COLUMNS)


def write_claims(results: str | os.PathLike[str] | None = None) -> Path:
    """Judge every claim and write ``results/claims.csv``."""
    path = results_dir(results) / "claims.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    judge(results).to_csv(path, index=False)
    return path


def claims_on(tables: str | Iterable[str], results: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """The claims that rest on ``tables`` (``paper_id.table_id``), judged on the units in ``results``: one row per
    claim, a column per source (what a notebook shows at its end)."""
    wanted = {tables} if isinstance(tables, str) else set(tables)
    papers = sorted({t.split(".", 1)[0] for t in wanted})
    judged = judge(results, papers)
    rows = []
    for paper in papers:
        for c in load_claims(paper):
            if not wanted & set(tables_of(c)):
                continue
            row = {"claim": c.statement, "paper line": f"{c.paper_file}:{c.line}", "rests on": c.rests_on}
            got = judged[judged["claim_id"] == c.claim_id]
            for r in got.itertuples():
                row[r.source] = verdict_text(pd.Series(r._asdict()))
            if got.empty:
                row["ours"] = "not reproduced: no units for it in these results"
            rows.append(row)
    return pd.DataFrame(rows)
