"""Every registered claim judged on every source the results hold: ``results/claims.csv``."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from tomlib.claims import _ahead, _memo
from tomlib.claims._registry import PAPERS, Claim, load_claims
from tomlib.claims._robust import (
    Alternative,
    Reading,
    Robustness,
    alternatives_of,
    defaults_only,
    load_readings,
    touches,
    unchecked,
)
from tomlib.claims._text import ONLY_UNDER, robustness_across, robustness_text, verdict_text
from tomlib.claims._truth import declared_truth, matches
from tomlib.claims._units import read_units
from tomlib.claims._verdict import (
    ACROSS_MODELS,
    VERDICT_COLUMNS,
    ClaimDataError,
    Grouper,
    Judge,
    holm_rows,
)
from tomlib.paths import results_dir, write_atomic


def units_for(claims: Iterable[Claim], units: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The units each claim reads, keyed by its ``units`` text: several tables are stacked (their ``table_id``
    column tells them apart in the claim's queries). A claim resting on several tables is left out until the results
    hold all of them (one notebook run alone on a fresh results folder writes only its own).

    Args:
        claims: the claims whose units are asked for.
        units: table id -> units frame (:func:`read_units`).
    """
    out = {}
    for c in claims:
        if all(t in units for t in c.tables):
            out[c.units] = pd.concat([units[t] for t in c.tables], ignore_index=True)
    return out


def judge(
    results: str | os.PathLike[str] | None = None,
    papers: Iterable[str] = PAPERS,
    robustness: bool = True,
    only: Iterable[str] | None = None,
    units: dict[str, pd.DataFrame] | None = None,
) -> pd.DataFrame:
    """Verdicts of every paper's claims on every source in ``results/units/`` (one row per claim and source; a
    claim with no units of a source present elsewhere in its paper is "not reproduced" for it), judged on the rows
    under our default readings, and (``robustness``) judged again under every alternative the units hold. ``only``
    (claim ids): the rows of those claims, the same as in the whole table; Holm's families still hold every claim,
    and an alternative is judged when it touches one of them. ``units``: ``results``' units, when already read.
    A paper judged ahead (:func:`judge_ahead`) on the same inputs is not judged again.

    Args:
        results: the results folder (default ``results/``).
        papers: the papers whose claims are judged.
        robustness: judge again under every alternative reading the units hold (fills ``robust`` and its columns).
        only: claim ids whose rows are returned; None, every claim's.
        units: ``results``' units tables when already read (:func:`read_units`).
    """
    _ahead.settle()  # one judgement at a time: one under way in the background finishes first
    _memo.load()  # what the run's earlier kernels judged
    digests: dict[str, str] | None = {} if units is None and only is None else None
    units = read_units(results, digests) if units is None else units
    frames = []
    for paper in papers:
        claims = load_claims(paper)
        judged = None if digests is None else _ahead.recall(_ahead.key(paper, claims, digests, robustness))
        if judged is None:
            judged = judge_paper(paper, claims, units, robustness, None if only is None else set(only))
        if judged is not None:
            frames.append(judged)
    _memo.share()  # for the run's later kernels
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=VERDICT_COLUMNS)


def judge_paper(
    paper: str, claims: list[Claim], units: dict[str, pd.DataFrame], robustness: bool, wanted: set[str] | None
) -> pd.DataFrame | None:
    """One paper's rows of :func:`judge`; None when the units hold none of its claims' tables."""
    readings = load_readings(paper)
    mine = units_for(claims, units)
    sources = sorted({s for f in mine.values() for s in f["source"].unique()})
    if not sources:
        return None
    judge = Judge(mine, memo=True)
    defaults = defaults_only(mine, readings, judge.masks)
    judged = judge.verdicts(paper, claims, defaults, sources)
    if robustness:
        judged = with_robustness(judged, paper, claims, readings, mine, judge, wanted)
    if wanted is not None:
        judged = judged[judged["claim_id"].isin(wanted)].reset_index(drop=True)
    return with_declared_truth(judged, claims, defaults, judge)


def judge_ahead(results: str | os.PathLike[str] | None, papers: Iterable[str]) -> None:
    """Judge ``papers``' claims on ``results``' units on a background thread (:mod:`tomlib.claims._ahead`), for a
    later :func:`judge` of the whole results to use if their units are unchanged by then.

    Args:
        results: the results folder (default ``results/``).
        papers: the papers whose claims are judged.
    """
    papers = list(papers)

    def work() -> None:
        digests: dict[str, str] = {}
        units = read_units(results, digests)
        for paper in papers:
            claims = load_claims(paper)
            judged = judge_paper(paper, claims, units, True, None)
            if judged is not None:
                _ahead.keep(_ahead.key(paper, claims, digests, True), judged)

    _ahead.submit(work)


def engine_check_ahead(results: str | os.PathLike[str] | None) -> None:
    """Write the engine's check on declared truth (:func:`write_engine_check`) on the background thread, for REPORT
    to find made.

    Args:
        results: the results folder (default ``results/``).
    """
    from tomlib.claims._calibrate import write_engine_check

    def work() -> None:
        write_engine_check(results)

    _ahead.submit(work)


def with_robustness(
    judged: pd.DataFrame,
    paper: str,
    claims: list[Claim],
    readings: list[Reading],
    units: dict[str, pd.DataFrame],
    judge: Judge,
    wanted: set[str] | None = None,
) -> pd.DataFrame:
    """Fill ``robust``, ``flips_under``, ``held_under`` and ``not_checked``: under each alternative of each reading
    (:mod:`tomlib.claims._robust`), the claims whose rows it changes are judged again and Holm's correction is redone
    over the source's family (the others keep their judgement); a claim flips when its verdict changes. ``judge``:
    the one that judged ``judged`` on the default rows of ``units`` (its :attr:`Judge.judged` are the families
    judged again); ``wanted`` (claim ids): only those claims' columns are filled, and an alternative that touches
    none of them is skipped."""
    base, masks = judge.judged, judge.masks
    by_id = {c.claim_id: c for c in claims}
    verdict_of = {(r.claim_id, r.source): r.verdict for r in judged.itertuples() if r.verdict != "not reproduced"}
    picks = Picks(units, judge.group)
    extra: list[dict] = []
    found: dict[tuple[str, str], Robustness] = {}
    checked: dict[tuple[str, str], set[str]] = {}
    mine = claims if wanted is None else [c for c in claims if c.claim_id in wanted]
    for alt in alternatives_of(readings, units, claims):
        alt_units: dict[str, pd.DataFrame] = {}  # the alternative's rows, made per table as a claim needs them
        for source, family in base.items():
            if not any(touches(alt, c, picks.of(c, source, alt)) for c in mine):
                continue  # it changes none of the claims asked about: their Holm families stay as judged
            hit = [c for c in claims if touches(alt, c, picks.of(c, source, alt))]
            orphans = [c for c in hit if (c.claim_id, source) not in verdict_of]  # run under this reading only
            if not hit:
                continue
            for key in {c.units for c in hit} - set(alt_units):
                alt_units |= alt.units({key: units[key]}, readings, masks)
            again = dict(family)
            judged_again: list[Claim] = []
            only_here: set[str] = set()
            for c in hit:
                j = judge.claim(alt.claims([c])[0], alt_units, source)
                checked.setdefault((c.claim_id, source), set()).add(alt.reading.parameter)
                if j is None:  # it lacks a group under this alternative (no FTM after the last round)
                    continue
                again[c.claim_id] = j
                if c in orphans:
                    only_here.add(c.claim_id)
                else:
                    judged_again.append(c)
            rows = holm_rows(paper, source, list(again.values()))
            now = {r["claim_id"]: r["verdict"] for r in rows}
            extra += [
                {**r, "source": f"{source} ({alt.label})", "robust": ONLY_UNDER, "_of": source}
                for r in rows
                if r["claim_id"] in only_here
            ]
            for c in judged_again:
                key = (c.claim_id, source)
                got = found.setdefault(key, Robustness([], [], []))
                (got.held if now.get(c.claim_id) == verdict_of[key] else got.flips).append(alt.label)
    out = judged.copy().astype({c: object for c in ("robust", "flips_under", "held_under", "not_checked")})
    for i, r in out.iterrows():
        key = (r["claim_id"], r["source"])
        if key not in verdict_of:
            continue
        got = found.get(key, Robustness([], [], []))
        claim = by_id[r["claim_id"]]
        got.not_checked = unchecked(readings, claim, r["source"], checked.get(key, set()), picks.of(claim, r["source"]))
        out.at[i, "robust"] = got.robust
        out.at[i, "flips_under"] = "; ".join(got.flips)
        out.at[i, "held_under"] = "; ".join(got.held)
        out.at[i, "not_checked"] = "; ".join(got.not_checked)
    if extra:  # claims a run judged only under a reading other than the default: the alternative with most units
        more = pd.DataFrame(extra).sort_values("n_units", ascending=False, kind="stable")
        more = more.drop_duplicates(["claim_id", "_of"]).sort_index()
        out = pd.concat([out, more[VERDICT_COLUMNS]], ignore_index=True)
    return out


def with_declared_truth(
    judged: pd.DataFrame, claims: list[Claim], units: dict[str, pd.DataFrame], judge: Judge
) -> pd.DataFrame:
    """Fill ``declared_effect``, ``declared_truth`` and ``matches_truth`` for the verdicts on a simulated model's rows
    whose competence declares every row's expectation (:mod:`tomlib.claims._truth`); ``judge``: the one that judged
    them (its groups are read again)."""
    by_id = {c.claim_id: c for c in claims}
    out = judged.copy().astype({"declared_truth": object, "matches_truth": object})
    for i, r in judged.iterrows():
        source, claim = str(r["source"]), by_id.get(str(r["claim_id"]))
        table = units.get(claim.units) if claim is not None else None
        if claim is None or table is None or not source.startswith("sim:") or r["verdict"] == "not reproduced":
            continue
        mine = table[table["source"] == source]
        if mine.empty:
            continue
        try:
            got = declared_truth(claim, judge.group(claim, mine))
        except ClaimDataError:
            got = None
        if got is not None:
            out.at[i, "declared_effect"], out.at[i, "declared_truth"] = got
            out.at[i, "matches_truth"] = matches(str(r["verdict"]), got[1])
    return out


class Picks:
    """The rows each claim picks for a source under any reading (its metric, ``select`` and groups), computed once."""

    def __init__(self, units: dict[str, pd.DataFrame], group: Grouper) -> None:
        self.units, self.group = units, group
        self.cache: dict[tuple[str, str, str], pd.DataFrame | None] = {}

    def of(self, claim: Claim, source: str, alt: Alternative | None = None) -> pd.DataFrame | None:
        if alt is not None and alt.reading.column == "metric":
            if claim.metric not in alt.reading.measures or claim.metric == alt.value:
                return None
            claim = alt.claims([claim])[0]
        key = (claim.claim_id, source, claim.metric)
        if key not in self.cache:
            table = self.units.get(claim.units)
            picked = None
            if table is not None:
                try:
                    picked = self.group(claim, table[_of(table, source)])
                except ClaimDataError:
                    picked = None
            self.cache[key] = picked
        return self.cache[key]


def _of(table: pd.DataFrame, source: str) -> pd.Series:
    if source == ACROSS_MODELS:
        return table["source"].astype(str).str.startswith("llm:")
    return table["source"] == source


def write_claims(results: str | os.PathLike[str] | None = None) -> Path:
    """Judge every claim (:func:`judge`) and write ``results/claims.csv``.

    Args:
        results: the results folder (default ``results/``).
    """
    path = results_dir(results) / "claims.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, as_data(judge(results)).to_csv(index=False, float_format="%.10g"))
    return path


COUNTS = ("n_units", "units_in_clusters", "units_for_power")


def as_data(frame: pd.DataFrame) -> pd.DataFrame:
    """Verdicts as a reader's table: counts as integers (``540``, not ``540.0``); floats are written to 10
    significant digits (``50.9``, not ``50.89999999999999``)."""
    out = frame.copy()
    for col in COUNTS:
        if col in out.columns:
            out[col] = pd.to_numeric(out[col]).round().astype("Int64")
    return out


def claims_on(tables: str | Iterable[str], results: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """The claims that rest on ``tables`` (``paper_id.table_id``), judged on the units in ``results``: one row per
    claim, a column per source (what a notebook shows at its end).

    Args:
        tables: one table id or several (``"coalition.table1"``, as the registry in ``data/claims/`` names them);
            every claim resting on any of them is judged, with its paper's Holm family.
        results: the results folder whose ``units/`` hold the outcomes; None: the default results folder.
    """
    wanted = {tables} if isinstance(tables, str) else set(tables)
    papers = sorted({t.split(".", 1)[0] for t in wanted})
    units = read_units(results)
    ids = [c.claim_id for paper in papers for c in load_claims(paper) if wanted & set(c.tables)]
    judged = judge(results, papers, only=ids, units=units)
    rows = []
    for paper in papers:
        for c in load_claims(paper):
            if not wanted & set(c.tables):
                continue
            row = {"#": c.number, "claim": c.statement, "the paper says": c.cited}
            got = judged[judged["claim_id"] == c.claim_id]
            robust = {}
            for r in got.itertuples():
                row[r.source] = verdict_text(pd.Series(r._asdict()), c.paper_effect)
                robust[r.source] = robustness_text(pd.Series(r._asdict()))
            if got.empty:
                missing = [t for t in c.tables if t not in units]
                row["ours"] = (
                    f"not reproduced here: it also rests on {', '.join(missing)}, whose units these results lack "
                    "(run the notebook of that table into the same results folder, or the whole series)"
                    if missing
                    else "not reproduced: no units for it in these results"
                )
            if text := robustness_across(robust):
                row["robust to our readings?"] = text
            rows.append(row)
    return ClaimsTable(rows)


class ClaimsTable(pd.DataFrame):
    """What :func:`claims_on` returns: a DataFrame a notebook shows whole. pandas cuts a cell's text at 50 characters,
    which hid the verdicts' intervals, the units they need and the readings they flip under; the plain-text view
    (what a notebook keeps beside the table, and IPython's terminal shows) is one block per claim."""

    @property
    def _constructor(self) -> type[ClaimsTable]:
        return ClaimsTable

    def _repr_html_(self) -> str | None:
        with pd.option_context("display.max_colwidth", None):
            page = super()._repr_html_()
        # `reading=value` in the robustness column is code, as in REPORT, not backticks shown as they are
        return None if page is None else re.sub(r"`([^`<>]+)`", r"<code>\1</code>", page)

    def _repr_pretty_(self, p: object, cycle: bool) -> None:
        blocks = []
        for _, r in self.iterrows():
            lines = [f"{r.get('#', '')} {r.get('claim', '')} {r.get('the paper says', '')}"]
            shown = [(k, v) for k, v in r.items() if k not in ("#", "claim", "the paper says") and pd.notna(v)]
            lines += [f"  {k}: {v}" for k, v in shown]
            blocks.append("\n".join(lines))
        p.text("\n".join(blocks) if blocks else "no claims rest on these tables")  # type: ignore[attr-defined]
