"""``results/REPORT.md`` and ``REPORT.html``: per paper and table, ours beside the paper's values, the agreement
per source and metric, the figures, and a link to the notebook that wrote it; then what is not reproduced.

The report is one document (:mod:`tomlib.report._document`), built here once, section by section, and drawn as
Markdown and as HTML by :mod:`tomlib.report._render`."""

from __future__ import annotations

import json
import os
import re
import string
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from tomlib.claims import paper_info, read_units, write_claims, write_engine_check
from tomlib.paths import data_dir, portable, results_for_writing, write_atomic
from tomlib.redact import redact_text
from tomlib.report._claims import (
    FIRM,
    claims_table,
    claims_tally,
    engine_check,
    forest_plot,
    readings_reach,
    sim_truth,
    verdict_grid,
)
from tomlib.report._document import (
    Alert,
    Block,
    Code,
    Document,
    Either,
    GridLegend,
    Heading,
    Image,
    Link,
    List,
    Nav,
    Paragraph,
    Plain,
    Prose,
    Quote,
    Quoted,
    Section,
    Table,
    Tex,
    Text,
    VerdictGrid,
)
from tomlib.report._markup import _href
from tomlib.report._orders import llm_orders
from tomlib.report._render import html_block, md_text, to_html, to_markdown
from tomlib.report._tables import (
    PAPER_IDS,
    ResultsContractError,
    compare,
    paper_table_index,
    read_results,
    side_by_side,
    validate_results,
    with_paper_models,
)
from tomlib.tom import EPSILON

NOT_PRINTED = (
    "Not a table printed in the paper: a tomlib measurement. The note column of its CSV says what each value is "
    "checked against."
)
SOURCES = (
    "Every number carries its source: `paper` (transcribed from the paper), `formal` (exact model, no LLM) or "
    "`llm:<model>` (a model's replies, live or replayed); `+ppo:selfplay` marks cells whose episodes include our PPO "
    "self-play stand-in for the adaptive-ToM paper's PBT partner (a trained policy, not the paper's). Each table "
    "shows ours beside the paper's value (mean, with the SD in parentheses where the paper gives one)."
)
MAX_ROWS = 60  # longer tables are linked as CSV rather than laid out in the page
EXACT = 0.005


def _said(template: str, **values: object) -> Text:
    """``template`` (our prose, in Markdown) with ``values`` (what the results folder says) put in as quoted text; a
    :class:`Code` value is shown as code."""
    out: Text = []
    for literal, name, _spec, _conversion in string.Formatter().parse(template):
        out.append(Prose(literal))
        if name is not None:
            value = values[name]
            out.append(value if isinstance(value, Code) else Quoted(value))
    return out


def _csv_link(name: str) -> Link:
    return Link([Plain("CSV")], _href(f"tables/{name}.csv"))


def agreement(side: pd.DataFrame) -> pd.DataFrame:
    """Per source and metric (so SD, CI and change rows are apart from the values): cells, cells with a paper
    value, how many match to within 0.005, and the mean absolute difference.

    Args:
        side: a :func:`tomlib.report.compare` frame.
    """
    rows = []
    for (source, metric), part in side.groupby(["source", "metric"], sort=True):
        both = part.dropna(subset=["paper", "ours"])
        diff = both["difference"].abs()
        rows.append(
            {
                "source": source,
                "metric": metric,
                "cells": len(part),
                "with paper value": len(both),
                f"exact (|diff| < {EXACT})": int((diff < EXACT).sum()),
                "mean |diff|": round(float(diff.mean()), 3) if len(both) else float("nan"),
            }
        )
    return pd.DataFrame(rows)


@dataclass
class _RunTable:
    """A table of ours as REPORT shows it: its caption, notebook, figures, agreement and the first rows."""

    name: str
    caption: str
    notebook: str | None
    figures: list[str]
    agreement: pd.DataFrame
    layout: pd.DataFrame
    more_rows: int = 0
    paper_models: list[str] = field(default_factory=list)  # the paper's own models, shown where ours has none


@dataclass
class _Paper:
    """What REPORT shows of a paper: its tables run, other figures, tables not run and simulated rehearsals."""

    paper_id: str
    tables: list[_RunTable] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)  # figures no table of ours claims
    pending: list[str] = field(default_factory=list)
    simulated: list[Text] = field(default_factory=list)  # tables with rows of a simulated model (tomlib.sim)


def _not_a_table(name: str, full: pd.DataFrame) -> str | None:
    """Why ``tables/<name>.csv`` is not a results table REPORT can show (a file tomlib did not write, or one
    edited by hand), or None."""
    try:
        validate_results(full, where="it")
    except ResultsContractError as exc:
        return str(exc)
    found = {f"{p}.{t}" for p, t in zip(full["paper_id"].astype(str), full["table_id"].astype(str), strict=True)}
    if found != {name}:
        return f"it holds rows of {', '.join(sorted(found)) or 'no table'}, not of {name}"
    return None


def _natural(name: str) -> tuple[object, ...]:
    """``coalition.table2`` before ``coalition.table10``."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


def _notebooks(root: Path) -> list[tuple[str, dict[str, object]]]:
    return [
        (stamp.name[: -len(".stamp.json")], _record(stamp))
        for stamp in sorted((root / "notebooks").glob("*.stamp.json"))
    ]


def _gather(root: Path, written_by: dict[str, str]) -> tuple[list[_Paper], dict[str, str]]:
    """Each paper's tables, figures, pending tables and rehearsals; and the files of ``tables/`` not read, with why."""
    tables = read_results(root)
    unread = {name: why for name, full in tables.items() if (why := _not_a_table(name, full))}
    tables = {name: full for name, full in tables.items() if name not in unread}
    index = paper_table_index()
    figures = sorted(p.name for p in (root / "figures").glob("*.png")) if (root / "figures").exists() else []
    papers = {pid: _Paper(pid) for pid in PAPER_IDS}
    claimed: set[str] = set()
    for name, full in sorted(tables.items(), key=lambda kv: _natural(kv[0])):
        paper_id, table_id = name.split(".", 1)
        simulated = full["source"].astype(str).str.startswith("sim:")
        df = full[~simulated]
        if simulated.any():  # a rehearsal on a simulated model: named apart, never beside the paper
            sources = ", ".join(sorted(map(str, set(full.loc[simulated, "source"]))))
            said = [Code(name), Plain(": "), Quoted(sources), Plain(" ("), _csv_link(name), Plain(")")]
            papers.setdefault(paper_id, _Paper(paper_id)).simulated.append(said)
        if df.empty:
            continue
        cap = index[(index["paper_id"] == paper_id) & (index["table_id"] == table_id)]["caption"]
        caption = str(cap.iloc[0]) if len(cap) else NOT_PRINTED
        figs = [f for f in figures if f == f"{name}.png" or f.startswith(f"{name}_")]
        claimed.update(figs)
        layout, models = with_paper_models(side_by_side(df).reset_index(), paper_id, table_id)
        more = max(0, len(layout) - MAX_ROWS)
        section = _RunTable(
            name, caption, written_by.get(name), figs, agreement(compare(df)), layout.head(MAX_ROWS), more, models
        )
        papers.setdefault(paper_id, _Paper(paper_id)).tables.append(section)
    for f in figures:
        if f not in claimed and f.split(".", 1)[0] in papers:
            papers[f.split(".", 1)[0]].figures.append(f)
    for r in index.itertuples():
        if f"{r.paper_id}.{r.table_id}" not in tables:
            label = str(r.draft_table) + (f" ({r.draft} draft)" if isinstance(r.draft, str) and r.draft else "")
            papers[r.paper_id].pending.append(f"{label}: `{r.paper_id}.{r.table_id}`")
    return [p for p in papers.values() if p.tables or p.pending or p.figures or p.simulated], unread


def _numbers_in(shown_in: str) -> set[str]:
    """``"07 · 12 · 13"`` or ``"08-11"`` as the notebook numbers it names."""
    out: set[str] = set()
    for part in shown_in.replace("·", " ").split():
        lo, _, hi = part.partition("-")
        if lo.isdigit() and (not hi or hi.isdigit()):
            out |= {f"{i:02d}" for i in range(int(lo), int(hi or lo) + 1)}
    return out


def readings_of(paper_id: str, notebook: str | None = None) -> pd.DataFrame:
    """``data/readings/<paper_id>.csv``: the rules we chose where the paper is silent, what each changes and the
    notebooks that show it; ``notebook`` (e.g. ``"09"``) keeps that notebook's.

    Args:
        paper_id: the paper.
        notebook: a notebook's number (``"09"``) to keep only its readings, without the ``shown in`` column; None
            keeps all.
    """
    path = data_dir() / "readings" / f"{paper_id}.csv"
    frame = pd.read_csv(path, dtype=str, keep_default_na=False) if path.exists() else pd.DataFrame()
    frame = frame.drop(columns=[c for c in frame.columns if c.startswith("claims_")])  # the claims table shows them
    if notebook is None or frame.empty:
        return frame
    keep = [notebook in _numbers_in(s) for s in frame["shown in"]]
    return frame[keep].drop(columns="shown in").reset_index(drop=True)


def _when(t: object) -> str:
    if isinstance(t, bool) or not isinstance(t, int | float):
        return "?"
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(t)))
    except (OverflowError, OSError, ValueError):  # a time no clock reaches
        return "?"


def _record(path: Path) -> dict[str, object]:
    """A JSON object from the results folder (a stamp, a run record); empty when it is none."""
    try:
        got = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except ValueError:
        return {}
    return got if isinstance(got, dict) else {}


def provenance(root: Path, table: str, stamps: dict[str, dict[str, object]]) -> tuple[Text, Text | None]:
    """Where a table came from, in words (notebook, profile, finished, parameters, from ``tables/<name>.run.json``),
    and a warning when its notebook was attempted again since (the table is then an earlier run's) or the CSV was
    rewritten by a run the runner did not record (None when neither). What the record says is quoted (:func:`_said`).

    Args:
        root: the results folder.
        table: the table's name, ``<paper_id>.<table_id>``.
        stamps: each notebook's stamp by name (``results/notebooks/<name>.stamp.json``).
    """
    path = root / "tables" / f"{table}.run.json"
    if not path.exists():
        return _said("Written outside the runner (no run record): its parameters are not known here."), None
    run = _record(path)
    parameters = run.get("parameters")
    given = ", ".join(f"{k}={v}" for k, v in sorted(parameters.items())) if isinstance(parameters, dict) else ""
    name, status = Code(run.get("name")), run.get("status")
    template = "From {name}, profile {profile}, finished {finished}"
    template += "" if status == "ok" else " (a {status} run: the table was written before it stopped)"
    template += (
        "; parameters: {given}, the rest at the notebook's defaults."
        if given
        else "; parameters: the notebook's defaults."
    )
    fields = {"name": name, "profile": Code(run.get("profile")), "finished": _when(run.get("finished"))}
    origin = _said(template, **fields, status=status, given=given)
    last = stamps.get(str(run.get("name")), {})
    finished, attempted = run.get("finished"), last.get("finished")
    if isinstance(finished, (int, float)) and isinstance(attempted, (int, float)) and attempted > finished + 1:
        again = (
            "{name} was run again at {when} ({status}) with parameters that did not rewrite this table, so it is from "
            "the earlier run above."
        )
        return origin, _said(again, name=name, when=_when(attempted), status=last.get("status"))
    csv = root / "tables" / f"{table}.csv"
    if isinstance(finished, (int, float)) and csv.exists() and csv.stat().st_mtime > finished + 5:
        rewritten = "the CSV was rewritten at {when} by a run the runner did not record."
        return origin, _said(rewritten, when=_when(csv.stat().st_mtime))
    return origin, None


ENGINE_ANCHOR = "engine-check"
ENGINE_TITLE = "The claims engine on declared truth"
ENGINE_CHECKED = "Can the verdicts be trusted? The claims engine was run on units whose truth is declared."
ENGINE_HOW = (
    "Each design the registries use (two samples, strata, pairs, clusters, rates, one value, each stratum, a "
    "difference of gaps), with the first claim that uses it: units drawn with the claim's structure, replicated under "
    "a declared null (no effect, or the edge of its margin: any decided verdict is false) and under the paper's effect "
    "(the supported rate should match the power the engine computes) at its planned units, and under the null at 8 "
    "units (exact and permutation tests). Judged as a run's units are. A small check, seeded; "
    "`benchmarks/bench_claims.py` replicates every claim 200 times. claims_calibration.csv has the rows."
)
RUN_NOT_REPRODUCED = (
    "A table run is not a table reproduced: whether the paper's claims hold is the last column, and each paper's "
    "grid below shows it claim by claim."
)
CLAIMS_HOW = (
    "Each claim in our words, the paper's own (where they rest; the paper's public address), the effect the "
    "paper's table shows, and our verdict per source: effect, 95% CI and the units it rests on (Holm-corrected "
    "within the paper), and for an inconclusive one which case it is. [claims.csv](claims.csv) has them as data; "
    "`data/claims/` says how each is tested."
)
CLAIMS_REACH = (
    "Robust to our readings? Each verdict is judged again under every alternative of our readings that these "
    "results hold; a flip names it as `reading=value`. A reading no run has computed an alternative for is "
    '"not checked"; this says what would compute one (the `claims_*` columns of `data/readings/`):'
)
READINGS = (
    "Readings we chose where the paper is silent, each a named parameter (or fixed, said so) with what it changes:"
)
SIMULATED = (
    "Rows of a simulated model (`sim:<name>`, tomlib.sim: declared competence, for rehearsing the scale "
    "and checking the metrics). They are not a reproduction and are left out of the tables above:"
)
ORDERS_HOW = (
    "Ours, not the paper's: which ToM order the LLM agents told to play ToM-0, ToM-1 or ToM-2 (Tables 1-4) really "
    "play. At every step the exact ToM-k agents say what each order would choose; each order's likelihood of the "
    f"agent's actions (an order takes its choice, ties drawn evenly, or with chance {EPSILON:g} any legal action) "
    "gives a posterior over orders, pooled over episodes. `agree` counts the episodes whose own best order is the "
    "pooled one (95% Wilson interval); `informative` is the share of steps where the orders choose differently at "
    "all. The claim `adaptive_tom.prompted_order_played` judges it. A model with no recorded run has no row."
)
PENDING = "Transcribed from the paper, with no notebook of the series reproducing it yet:"
NONE_RUN = "(none executed yet: run `./reproduce.sh`)"
UNREAD_SAID = (
    "These files in `tables/` are not results tables in tomlib's layout, so no section above shows them. A notebook "
    "writes its tables afresh when it runs; a file that is not one of tomlib's can be moved out of the folder."
)
GLANCE_PAGE = "../REPORT.html"  # the book's landing page (results/book/) links its grids' numbers into REPORT


def _lead(papers: list[_Paper], verdicts: pd.DataFrame, check_said: str) -> list[Block]:
    """Under the title: when, what a source is, the contents, a row per paper, and whether the verdicts hold."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    contents = [(f"paper-{p.paper_id}", paper_info(p.paper_id).topic) for p in papers]
    contents += [("notebooks", "Notebooks"), (ENGINE_ANCHOR, ENGINE_TITLE)]
    nav: Text = [Plain("Contents: ")]
    for i, (anchor, title) in enumerate(contents):
        nav += [*([Plain(" · ")] if i else []), Link([Plain(title)], f"#{anchor}")]
    summary = pd.DataFrame(
        [
            {
                "paper": paper_info(p.paper_id).topic,
                "tables and figures run": len(p.tables),
                "transcribed, not run": len(p.pending),
                "the paper's claims, per source": claims_tally(p.paper_id, verdicts),
            }
            for p in papers
        ]
    )
    check = Link([Plain("the check")], f"#{ENGINE_ANCHOR}")
    return [
        Paragraph([Plain(f"Generated {stamp}. "), Prose(SOURCES)]),
        Nav(nav),
        Table(summary),
        Paragraph([Prose(f"{RUN_NOT_REPRODUCED} {FIRM.capitalize()}.")]),
        Paragraph(
            [Prose(ENGINE_CHECKED), Plain(" "), Prose(check_said), Plain(" ("), check, Plain(")")],
            md_blank_after=False,
        ),
    ]


def _waves_section(root: Path) -> Section | None:
    """What a run with ``--stop-when-decided`` decided per notebook and did not spend (``results/waves.json``)."""
    path = root / "waves.json"
    if not path.exists():
        return None
    got = _record(path)
    lines = [v["line"] for k, v in got.items() if not k.startswith("_") and isinstance(v, dict) and "line" in v]
    head = _said("Stopped when decided ({method}):", method=got.get("_method", "anytime-valid confidence sequences"))
    return Section(None, [Paragraph(head), List([[Either([Code(line)], [Quoted(line)])] for line in lines])])


def _citation(paper_id: str) -> Text:
    """The paper as a reader cites it, its public address a link (our own data: ``data/papers.csv``); HTML drops the
    title's emphasis marks."""
    paper = paper_info(paper_id)
    said = ". ".join(p.rstrip(".") for p in (paper.authors, f"*{paper.title}*", paper.venue) if p)
    code = f" Code: [{paper.code}]({paper.code})." if paper.code else ""
    link = f" [{paper.address_short}]({paper.address})." if paper.address else ""
    text = f"{said}.{link}{code}"
    return [Either([Prose(text)], [Prose(text.replace("*", ""))])]


def _glance(paper_id: str, verdicts: pd.DataFrame) -> list[Block]:
    """The paper's claims by source at a glance: the verdict grid, its legend and its counts; none without claims."""
    grid = verdict_grid(paper_id, verdicts)
    if not grid[1]:
        return []
    counts = f"Per source: {claims_tally(paper_id, verdicts)} ({FIRM})."
    return [VerdictGrid(grid, paper_id), GridLegend(), Paragraph([Prose(counts)])]


def _claims_blocks(root: Path, paper_id: str, verdicts: pd.DataFrame) -> list[Block]:
    """The paper's claims in detail, their forest plot and what computes the alternatives of our readings."""
    table = claims_table(paper_id, verdicts)
    if table.empty:
        return []
    blocks: list[Block] = [
        Heading(3, [Plain("Claims in detail")], f"claims-{paper_id}"),
        Paragraph([Prose(CLAIMS_HOW)]),
        Table(table, row_ids=[f"claim-{paper_id}-{n}" for n in table["#"]], code=True),
    ]
    fig = forest_plot(paper_id, verdicts, root / "figures" / f"claims.{paper_id}.png")
    if fig is not None:
        blocks.append(Image(f"figures/{fig.name}", f"claims of {paper_id}"))
    reach = readings_reach(paper_id)
    if not reach.empty:
        blocks += [Paragraph([Prose(CLAIMS_REACH)]), Table(reach)]
    return blocks


def _table_blocks(root: Path, t: _RunTable, stamps: dict[str, dict[str, object]]) -> list[Block]:
    """A table of ours: its caption, where it came from, its links and figures, the agreement and the table."""
    origin, warn = provenance(root, t.name, stamps)
    blocks: list[Block] = [Heading(3, [Code(t.name)]), Quote([Tex(t.caption)]), Paragraph(origin, italic=True)]
    if warn:
        blocks.append(Alert("Stale", warn))
    links: Text = [_csv_link(t.name)]
    if t.notebook:
        by = Link([Code(t.notebook)], _href(f"notebooks/{t.notebook}.html"))
        links = [Plain("written by "), by, Plain(" · "), *links]
    blocks.append(Paragraph(links))
    blocks += [Image(f"figures/{fig}", fig) for fig in t.figures]
    blocks += [Paragraph([Prose("Agreement with the paper, per source and metric:")]), Table(t.agreement)]
    more = f" The first {MAX_ROWS} rows; {t.more_rows:,} more are in the CSV." if t.more_rows else ""
    said = "Ours beside the paper's value:"
    if t.paper_models:
        said = (
            f"The paper ran other models than ours ({', '.join(t.paper_models)}), so no cell of ours has a "
            "paper value of its model: ours beside the paper's value for each of its models (`paper: <model>`)"
            ", the other conditions the same:"
        )
    return [*blocks, Paragraph([Prose(said), Plain(more)]), Table(t.layout)]


def _rest_blocks(paper: _Paper, verdicts: pd.DataFrame) -> list[Block]:
    """After the tables: the paper's other figures, our readings, simulated rehearsals and what is not run yet."""
    blocks: list[Block] = [Image(f"figures/{fig}", fig) for fig in paper.figures]
    readings = readings_of(paper.paper_id)
    if not readings.empty:
        blocks += [Paragraph([Prose(READINGS)]), Table(readings)]
    if paper.simulated:
        blocks += [Paragraph([Prose(SIMULATED)]), List(paper.simulated)]
        truth, counted = sim_truth(paper.paper_id, verdicts)
        if not truth.empty:
            said = [Prose("The simulated model's verdicts against its declared truth. "), Prose(counted)]
            blocks += [Paragraph(said), Table(truth)]
    if paper.pending:
        blocks += [Paragraph([Prose(PENDING)]), List([[Prose(p)] for p in paper.pending])]
    return blocks


def _orders_blocks(root: Path, paper_id: str) -> list[Block]:
    """The effective ToM order of every LLM source's fixed-order agents (adaptive-ToM paper only)."""
    if paper_id != "adaptive_tom":
        return []
    table = llm_orders(read_units(root))
    if table.empty:
        return []
    heading = Heading(3, [Plain("Effective ToM order (ours)")], "effective-tom-order")
    return [heading, Paragraph([Prose(ORDERS_HOW)]), Table(table)]


def _paper_section(
    root: Path, paper: _Paper, verdicts: pd.DataFrame, stamps: dict[str, dict[str, object]]
) -> tuple[Section, list[Block]]:
    """A paper's section, and its glance (the grid, legend and counts) for the book's landing page too."""
    pid = paper.paper_id
    heading = Heading(2, [Quoted(paper_info(pid).topic), Plain(" ("), Code(pid), Plain(")")], f"paper-{pid}")
    blocks: list[Block] = [Paragraph(_citation(pid))]
    glance = _glance(pid, verdicts)
    if glance:
        blocks += [Heading(3, [Plain("At a glance")], f"glance-{pid}"), *glance]
    blocks += _claims_blocks(root, pid, verdicts)
    blocks += _orders_blocks(root, pid)
    for t in paper.tables:
        blocks += _table_blocks(root, t, stamps)
    return Section(heading, blocks + _rest_blocks(paper, verdicts)), glance


def _notebook_item(name: str, nb: dict[str, object]) -> Text:
    """A notebook's line: its status and error, its pages, and its last good run's page if it failed since. What a
    stamp says is quoted: a stamp is a file in the results folder."""
    status, error, good = nb.get("status", "?"), nb.get("error"), nb.get("last_ok")
    page = f"{name}.failed" if good else name
    html_link, nb_link, good_link = (_href(f"notebooks/{p}") for p in (f"{page}.html", f"{page}.ipynb", f"{name}.html"))
    pages = [Plain(" ("), Link([Plain("html")], html_link), Plain(", "), Link([Plain("notebook")], nb_link), Plain(")")]
    item: Text = [Either([Code(name)], [Link([Code(name)], html_link)]), Plain(": "), Quoted(status), Either(pages, [])]
    if error:
        item += [Plain(": "), Quoted(error)]
    if isinstance(good, dict):
        kept = f" The last good run (finished {_when(good.get('finished'))}) is kept"
        item += [Plain(f".{kept}: "), Link([Plain("html")], good_link), Plain(".")]
    return item


def _notebooks_section(notebooks: list[tuple[str, dict[str, object]]]) -> Section:
    """Every notebook the series ran, as its stamp says."""
    items = [_notebook_item(name, nb) for name, nb in notebooks]
    return Section(
        Heading(2, [Plain("Notebooks")], "notebooks"), [List(items, [Prose(NONE_RUN)], md_blank_after=False)]
    )


def _engine_section(check_said: str, check_table: pd.DataFrame) -> Section:
    """The claims engine on units whose truth is declared (``results/claims_calibration.csv``)."""
    blocks: list[Block] = [Paragraph([Prose(ENGINE_HOW)]), Paragraph([Prose(check_said)]), Table(check_table)]
    return Section(Heading(2, [Plain(ENGINE_TITLE)], ENGINE_ANCHOR), blocks)


def _unread_section(unread: dict[str, str]) -> Section:
    """The files of ``results/tables/`` REPORT did not read, and why: a run writes them again."""
    items: list[Text] = [[Code(f"tables/{name}.csv"), Plain(f": {why}")] for name, why in unread.items()]
    return Section(
        Heading(2, [Plain("Files not read")], "files-not-read"),
        [Paragraph([Prose(UNREAD_SAID)]), List(items)],
    )


def report_document(root: Path) -> tuple[Document, list[tuple[str, list[Block]]]]:
    """REPORT as one document, section by section, and each paper's glance for the book's landing page. Writes
    ``claims.csv``, ``claims_calibration.csv`` and the claims' forest plots on the way.

    Args:
        root: the results folder (:func:`tomlib.paths.results_for_writing` has checked it).
    """
    notebooks = _notebooks(root)
    written_by = {
        str(t): name for name, stamp in notebooks if isinstance(tables := stamp.get("tables"), list) for t in tables
    }
    papers, unread = _gather(root, written_by)
    verdicts = pd.read_csv(write_claims(root))
    check_said, check_table = engine_check(pd.read_csv(write_engine_check(root)))
    lead = _lead(papers, verdicts, check_said)
    sections = [waves] if (waves := _waves_section(root)) else []
    glances = []
    for paper in papers:
        section, glance = _paper_section(root, paper, verdicts, dict(notebooks))
        sections.append(section)
        if glance:
            glances.append((paper.paper_id, glance))
    sections += [_notebooks_section(notebooks), _engine_section(check_said, check_table)]
    if unread:
        sections.append(_unread_section(unread))
    return Document("tomlib results", lead, sections), glances


def write_glance(root: Path, parts: list[tuple[str, list[Block]]]) -> Path:
    """``results/glance.md``: every paper's verdict grid, its legend and counts, for the book's landing page: HTML
    grids, coloured without an emoji font, whose numbers link into ``../REPORT.html``.

    Args:
        root: the results folder.
        parts: each paper's id and its glance blocks (:func:`report_document`).
    """
    md = []
    for paper_id, blocks in parts:
        cite = md_text(_citation(paper_id))
        md += [f"## {paper_info(paper_id).topic}", "", cite, "", *[f"{html_block(b, GLANCE_PAGE)}\n" for b in blocks]]
    path = root / "glance.md"
    write_atomic(path, portable(redact_text("\n".join(md) + "\n")))
    return path


def build_report(results: str | os.PathLike[str] | None = None) -> Path:
    """Write REPORT.md and REPORT.html (and ``glance.md``) under ``results`` and return the markdown path.

    Args:
        results: the results folder; None for the configured one. A folder another user could plant links in is
            refused (:func:`tomlib.paths.results_folder`).
    """
    root = results_for_writing(results)
    doc, glances = report_document(root)
    write_glance(root, glances)
    # through a temp file and os.replace: a link planted at either name is replaced, not written through
    write_atomic(root / "REPORT.md", portable(redact_text(to_markdown(doc))))
    write_atomic(root / "REPORT.html", portable(redact_text(to_html(doc))))
    return root / "REPORT.md"
