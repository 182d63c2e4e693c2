"""``results/REPORT.md`` and ``REPORT.html``: per paper and table, ours beside the paper's values, the agreement
per source and metric, the figures, and a link to the notebook that wrote it; then what is not reproduced."""

from __future__ import annotations

import html
import json
import numbers
import os
import re
import string
import time
import unicodedata
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from tomlib.claims import paper_info, write_claims
from tomlib.claims._calibrate import write_engine_check
from tomlib.paths import data_dir, portable, results_for_writing, write_atomic
from tomlib.redact import redact_text
from tomlib.report._claims import (
    FIRM,
    GRID_LEGEND,
    claims_table,
    claims_tally,
    engine_check,
    forest_plot,
    frame_of,
    grid_legend_html,
    html_of,
    readings_reach,
    sim_truth,
    verdict_grid,
)
from tomlib.report._tables import (
    PAPER_IDS,
    compare,
    paper_table_index,
    read_results,
    side_by_side,
    with_paper_models,
)

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


def _cell(v: object) -> str:
    """A table's value as text: counts with thousands separators (``7,848,858``), other numbers to 4 digits."""
    if isinstance(v, bool) or v is None:
        return "" if v is None else str(v)
    if isinstance(v, numbers.Integral):
        return f"{int(v):,}"
    if isinstance(v, numbers.Real):
        x = float(v)
        if pd.isna(x):
            return ""
        return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.4g}"
    return str(v)


def _md_cell(v: object) -> str:
    """A table cell on one line, its ``|`` escaped so the table stays a table, and no link, image or HTML in it (a
    cell is what a CSV in the results folder says)."""
    parts = re.split(r"(`[^`]*`)", _one_line(_cell(v)))  # a `code span` keeps its text; only its | is escaped
    return "".join(p.replace("|", "\\|") if i % 2 else _MD_CELL.sub(r"\\\1", p) for i, p in enumerate(parts))


def _md_table(df: pd.DataFrame) -> str:
    """A GitHub-flavoured markdown table of :func:`_md_cell` cells."""

    def esc(v: object) -> str:
        return _md_cell(v)

    head = "| " + " | ".join(esc(c) for c in df.columns) + " |"
    rule = "| " + " | ".join("---" for _ in df.columns) + " |"
    body = ["| " + " | ".join(esc(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def _greek(letter: str) -> str:
    """``α`` → ``alpha``, ``Δ`` → ``Delta``: the TeX command of a Greek letter, from its Unicode name."""
    name = unicodedata.name(letter).split()[-1]
    return name.lower() if letter.islower() else name.capitalize()


SYMBOLS = {
    **{_greek(g): g for g in "αβγδεζηθικμνξοπρστυφχψωΓΔΘΞΠΣΦΨΩ"},
    "lambda": "λ",  # Unicode's name is LAMDA
    "Lambda": "Λ",
    **dict.fromkeys(("dots", "ldots", "cdots"), "…"),
    **dict.fromkeys(("rightarrow", "to", "Rightarrow"), "→"),
    **dict.fromkeys(("leftarrow", "gets"), "←"),
    **dict.fromkeys(("leq", "le"), "≤"),
    **dict.fromkeys(("geq", "ge"), "≥"),
    **dict.fromkeys(("epsilon", "varepsilon"), "ε"),
    **dict.fromkeys(("phi", "varphi"), "φ"),
    **dict.fromkeys(("ne", "neq"), "≠"),
    **dict.fromkeys((",", ";", ":", "quad", "qquad", " "), " "),
    "!": "",
    "times": "×",
    "cdot": "·",
    "pm": "±",
    "approx": "≈",
    "in": "∈",
    "infty": "∞",
    "sum": "∑",
    "mid": "|",
    "%": "%",
    "$": "$",
    "Delta": "Δ",
    "Sigma": "Σ",
    "Omega": "Ω",
}
TEXT_COMMANDS = ("text", "textrm", "mathrm", "operatorname", "mathit", "mathbf", "textbf", "mathcal", "mathsf")
_SUP = str.maketrans("0123456789+-=()kni", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ᵏⁿⁱ")
_SUB = str.maketrans("0123456789+-=()", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎")


def _group(tex: str, i: int) -> tuple[str, int]:
    """The argument at ``tex[i]``: a ``{...}`` group (nested braces kept) or one character; and where it ends."""
    if i >= len(tex):
        return "", i
    if tex[i] != "{":
        return tex[i], i + 1
    depth = 0
    for j in range(i, len(tex)):
        depth += {"{": 1, "}": -1}.get(tex[j], 0)
        if depth == 0:
            return tex[i + 1 : j], j + 1
    return tex[i + 1 :], len(tex)


def _math(tex: str, as_html: bool) -> str:
    """The simple LaTeX of a caption (symbols, ``\\text``, sub- and superscripts) as Unicode, with variables in
    italics and scripts as ``<sup>``/``<sub>`` in HTML; plain Unicode otherwise."""
    out: list[str] = []
    i = 0
    while i < len(tex):
        c = tex[i]
        if c == "\\":
            m = re.match(r"[A-Za-z]+|.", tex[i + 1 :])
            name = m.group(0) if m else ""
            i += 1 + len(name)
            if name in TEXT_COMMANDS:
                arg, i = _group(tex, i)
                out.append(html.escape(arg, quote=False) if as_html else arg)
            else:
                out.append(SYMBOLS.get(name, name))
        elif c in "^_":
            arg, i = _group(tex, i + 1)
            inner = _math(arg, as_html)
            if as_html:
                out.append(f"<{'sup' if c == '^' else 'sub'}>{inner}</{'sup' if c == '^' else 'sub'}>")
            else:
                table = _SUP if c == "^" else _SUB
                if all(ord(ch) in table for ch in inner):
                    out.append(inner.translate(table))
                else:
                    out.append(f"{c}{inner}" if len(inner) == 1 else f"{c}({inner})")
        elif c in "{}":
            i += 1
        elif c.isalpha() and as_html:
            out.append(f"<i>{c}</i>")
            i += 1
        else:
            out.append(html.escape(c, quote=False) if as_html else c)
            i += 1
    return re.sub(" {2,}", " ", "".join(out))  # TeX spaces operators itself; a run of spaces is one here


_MATH = re.compile(r"(?<!\\)\$(.+?)(?<!\\)\$")


def plain_text(text: str) -> str:
    """Caption text for markdown: ``$...$`` math as Unicode (``$R = 1 \\dots 5$`` → ``R = 1 … 5``)."""
    return _MATH.sub(lambda m: _math(m.group(1), as_html=False), text)


def _inline_html(text: str) -> str:
    """Markdown prose as HTML: `code` spans, [links](to) and ``$...$`` math (as Unicode and sub-/superscripts; the
    report loads no script, so no MathJax). A link goes only to a relative address or an http(s) one
    (:func:`safe_target`); any other is left as its text."""
    parts = re.split(r"(`[^`]+`|\[[^\]]+\]\([^)\s]+\)|(?<!\\)\$.+?(?<!\\)\$)", text)
    out = []
    for part in parts:
        if part.startswith("`") and part.endswith("`") and len(part) > 1:
            out.append(f"<code>{html.escape(part[1:-1], quote=False)}</code>")
        elif link := re.fullmatch(r"\[([^\]]+)\]\(([^)\s]+)\)", part):
            label, to = link.groups()
            if safe_target(to):
                out.append(f"<a href='{html.escape(to)}'>{_inline_html(label)}</a>")
            else:
                out.append(html.escape(part, quote=False))
        elif _MATH.fullmatch(part):
            out.append(_math(part[1:-1], as_html=True))
        else:
            out.append(html.escape(part, quote=False))
    return "".join(out)


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


def safe_target(to: str) -> bool:
    """Whether REPORT may link to ``to``: an http or https address, or a relative one (no scheme, not ``//host``).
    Characters a browser strips or reads as ``/`` before it looks for the scheme (controls, spaces, backslashes)
    are refused outright, so ``java\tscript:`` is no way around it."""
    if not to or re.search(r"[\x00-\x20\x7f\\]", to) or to.startswith("//"):
        return False
    scheme = _SCHEME.match(to)
    return scheme is None or scheme.group(0).lower() in ("http:", "https:")


# What the results folder says (stamps, run records, file names, waves.json) is quoted, never taken as markup: a
# results folder may hold files the runner did not write.
_LINE_BREAK = re.compile(r"[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]+")
_MD_MARKUP = re.compile(r"([\\`*_\[\]<>|~])")
_MD_LABEL = re.compile(r"([\\`\[\]<>])")  # in a link's or image's text, what could end it or hold code or HTML
_MD_CELL = re.compile(r"(\||\[|\]|<(?=[A-Za-z/!?]))")  # a cell keeps its `code`; `< 0.005` is no tag


def _one_line(value: object) -> str:
    """``value`` as text on one line: no line break in a file of the results folder starts a line of REPORT."""
    return _LINE_BREAK.sub(" ", str(value))


def _md_text(value: object) -> str:
    """Text from the results folder as Markdown that shows that text: one line, and every character that could
    start markup (a link or image, HTML, code, emphasis, a table cell) backslash-escaped."""
    return _MD_MARKUP.sub(r"\\\1", _one_line(value))


def _md_code(value: object) -> str:
    """Text from the results folder as a Markdown code span: one line, fenced by more backticks than any run in it."""
    text = _one_line(value)
    fence = "`" * (max(map(len, re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _html_text(value: object) -> str:
    return html.escape(_one_line(value))


def _href(path: str) -> str:
    """A path in the results folder (which may hold any name) as a relative link target, percent-encoded."""
    return urllib.parse.quote(_one_line(path), safe="/")


Said = tuple[str, str]
"""The same words as Markdown and as HTML."""


class _Code(str):
    """A value :func:`_said` shows as code."""


def _said(template: str, **values: object) -> Said:
    """``template`` (our prose, in Markdown) with ``values`` (what the results folder says) put in as quoted text:
    as Markdown and as HTML. A :class:`_Code` value is shown as code."""
    md, hs = [], []
    for literal, name, _spec, _conversion in string.Formatter().parse(template):
        md.append(literal)
        hs.append(_inline_html(literal))
        if name is not None:
            value = values[name]
            code = isinstance(value, _Code)
            md.append(_md_code(value) if code else _md_text(value))
            hs.append(f"<code>{_html_text(value)}</code>" if code else _html_text(value))
    return "".join(md), "".join(hs)


def _figure(path: str, alt: str) -> Said:
    """An image of the results folder (``path`` relative to it) with its ``alt`` text, both possibly any name."""
    href, label = _href(path), _MD_LABEL.sub(r"\\\1", _one_line(alt))
    return f"![{label}]({href})", (
        f"<p><img src='{html.escape(href)}' alt='{_html_text(alt)}' style='max-width:100%'></p>"
    )


def _html_table(df: pd.DataFrame, row_ids: list[str] | None = None, code: bool = False) -> str:
    """An HTML table of :func:`_cell` values, escaped; ``row_ids`` give the rows anchors; with ``code``, a cell's
    `code spans` (the claims' ``reading=value``) are shown as code."""

    def cell(v: object) -> str:
        text = html.escape(_one_line(_cell(v)))
        return re.sub(r"`([^`<>]+)`", r"<code>\1</code>", text) if code else text

    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    ids = row_ids or [""] * len(df)
    body = "".join(
        (f"<tr id='{html.escape(rid)}'>" if rid else "<tr>") + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>"
        for rid, row in zip(ids, df.itertuples(index=False), strict=True)
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def agreement(side: pd.DataFrame) -> pd.DataFrame:
    """Per source and metric (so SD, CI and change rows are apart from the values): cells, cells with a paper
    value, how many match to within 0.005, and the mean absolute difference."""
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
class _Section:
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
    paper_id: str
    tables: list[_Section] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)  # figures no table of ours claims
    pending: list[str] = field(default_factory=list)
    simulated: list[Said] = field(default_factory=list)  # tables with rows of a simulated model (tomlib.sim)


def _natural(name: str) -> tuple[object, ...]:
    """``coalition.table2`` before ``coalition.table10``."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


def _notebooks(root: Path) -> list[tuple[str, dict[str, object]]]:
    return [
        (stamp.name[: -len(".stamp.json")], _record(stamp))
        for stamp in sorted((root / "notebooks").glob("*.stamp.json"))
    ]


def _gather(root: Path, written_by: dict[str, str]) -> list[_Paper]:
    tables = read_results(root)
    index = paper_table_index()
    figures = sorted(p.name for p in (root / "figures").glob("*.png")) if (root / "figures").exists() else []
    papers = {pid: _Paper(pid) for pid in PAPER_IDS}
    claimed: set[str] = set()
    for name, full in sorted(tables.items(), key=lambda kv: _natural(kv[0])):
        paper_id, table_id = name.split(".", 1)
        simulated = full["source"].astype(str).str.startswith("sim:")
        df = full[~simulated]
        if simulated.any():  # a rehearsal on a simulated model: named apart, never beside the paper
            sources, csv = ", ".join(sorted(map(str, set(full.loc[simulated, "source"])))), _href(f"tables/{name}.csv")
            papers.setdefault(paper_id, _Paper(paper_id)).simulated.append(
                (
                    f"{_md_code(name)}: {_md_text(sources)} ([CSV]({csv}))",
                    f"<code>{_html_text(name)}</code>: {_html_text(sources)} (<a href='{html.escape(csv)}'>CSV</a>)",
                )
            )
        if df.empty:
            continue
        cap = index[(index["paper_id"] == paper_id) & (index["table_id"] == table_id)]["caption"]
        caption = str(cap.iloc[0]) if len(cap) else NOT_PRINTED
        figs = [f for f in figures if f == f"{name}.png" or f.startswith(f"{name}_")]
        claimed.update(figs)
        layout, models = with_paper_models(side_by_side(df).reset_index(), paper_id, table_id)
        more = max(0, len(layout) - MAX_ROWS)
        section = _Section(
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
    return [p for p in papers.values() if p.tables or p.pending or p.figures or p.simulated]


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
    notebooks that show it; ``notebook`` (e.g. ``"09"``) keeps that notebook's."""
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


def provenance(root: Path, table: str, stamps: dict[str, dict[str, object]]) -> tuple[Said, Said | None]:
    """Where a table came from, in words (notebook, profile, finished, parameters, from ``tables/<name>.run.json``),
    and a warning when its notebook was attempted again since (the table is then an earlier run's) or the CSV was
    rewritten by a run the runner did not record (None when neither). What the record says is quoted (:func:`_said`).
    """
    path = root / "tables" / f"{table}.run.json"
    if not path.exists():
        return _said("Written outside the runner (no run record): its parameters are not known here."), None
    run = _record(path)
    parameters = run.get("parameters")
    given = ", ".join(f"{k}={v}" for k, v in sorted(parameters.items())) if isinstance(parameters, dict) else ""
    name, status = _Code(run.get("name")), run.get("status")
    template = "From {name}, profile {profile}, finished {finished}"
    template += "" if status == "ok" else " (a {status} run: the table was written before it stopped)"
    template += (
        "; parameters: {given}, the rest at the notebook's defaults."
        if given
        else "; parameters: the notebook's defaults."
    )
    fields = {"name": name, "profile": _Code(run.get("profile")), "finished": _when(run.get("finished"))}
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


def _glance_part(paper_id: str, verdicts: pd.DataFrame) -> tuple[list[str], list[str], list[str]]:
    """The paper's claims by source at a glance: the verdict grid, its legend and its counts, as Markdown, as HTML
    and as HTML for the book (``results/book/``), whose numbers link into ``../REPORT.html``."""
    grid = verdict_grid(paper_id, verdicts)
    if not grid[1]:
        return [], [], []
    counts = f"Per source: {claims_tally(paper_id, verdicts)} ({FIRM})."
    md = [_md_table(frame_of(grid)), "", GRID_LEGEND + ".", "", counts, ""]
    rest = [f"<p>{grid_legend_html()}.</p>", f"<p>{_inline_html(counts)}</p>"]
    here, book = (html_of(grid, f"{page}#claim-{paper_id}") for page in ("", "../REPORT.html"))
    return md, [here, *rest], [book, *rest]


def _claims_part(root: Path, paper_id: str, verdicts: pd.DataFrame) -> tuple[list[str], list[str]]:
    """The paper's claims in detail and their forest plot (the claims' verdicts are in ``claims.csv``)."""
    table = claims_table(paper_id, verdicts)
    if table.empty:
        return [], []
    why = (
        "Each claim in our words, the paper's own (where they rest; the paper's public address), the effect the "
        "paper's table shows, and our verdict per source: effect, 95% CI and the units it rests on (Holm-corrected "
        "within the paper), and for an inconclusive one which case it is. [claims.csv](claims.csv) has them as data; "
        "`data/claims/` says how each is tested."
    )
    anchor = f"claims-{paper_id}"
    md = [f"### Claims in detail {{#{anchor}}}", "", why, "", _md_table(table), ""]
    hs = [f"<h3 id='{anchor}'>Claims in detail</h3>", f"<p>{_inline_html(why)}</p>"]
    hs.append(_html_table(table, row_ids=[f"claim-{paper_id}-{n}" for n in table["#"]], code=True))
    fig = forest_plot(paper_id, verdicts, root / "figures" / f"claims.{paper_id}.png")
    if fig is not None:
        fig_md, fig_html = _figure(f"figures/{fig.name}", f"claims of {paper_id}")
        md += [fig_md, ""]
        hs.append(fig_html)
    reach = readings_reach(paper_id)
    if not reach.empty:
        how = (
            "Robust to our readings? Each verdict is judged again under every alternative of our readings that these "
            "results hold; a flip names it as `reading=value`. A reading no run has computed an alternative for is "
            '"not checked"; this says what would compute one (the `claims_*` columns of `data/readings/`):'
        )
        md += [how, "", _md_table(reach), ""]
        hs += [f"<p>{_inline_html(how)}</p>", _html_table(reach)]
    return md, hs


def _citation(paper_id: str) -> tuple[str, str]:
    """The paper as a reader cites it, its public address a link (our own data: ``data/papers.csv``)."""
    paper = paper_info(paper_id)
    said = ". ".join(p.rstrip(".") for p in (paper.authors, f"*{paper.title}*", paper.venue) if p)
    code = f" Code: [{paper.code}]({paper.code})." if paper.code else ""
    link = f" [{paper.address_short}]({paper.address})." if paper.address else ""
    text = f"{said}.{link}{code}"
    return text, _inline_html(text.replace("*", ""))


def write_glance(root: Path, parts: list[tuple[str, list[str]]]) -> Path:
    """``results/glance.md``: every paper's verdict grid, its legend and counts (``parts``: paper id and the book's
    HTML of :func:`_glance_part`), for the book's landing page: HTML grids, coloured without an emoji font."""
    md = []
    for paper_id, part in parts:
        md += [f"## {paper_info(paper_id).topic}", "", _citation(paper_id)[0], "", *[f"{p}\n" for p in part]]
    path = root / "glance.md"
    write_atomic(path, portable(redact_text("\n".join(md) + "\n")))
    return path


ENGINE_ANCHOR = "engine-check"
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


def _waves_part(root: Path) -> tuple[list[str], list[str]]:
    """What a run with ``--stop-when-decided`` decided per notebook and did not spend (``results/waves.json``)."""
    path = root / "waves.json"
    if not path.exists():
        return [], []
    got = _record(path)
    lines = [v["line"] for k, v in got.items() if not k.startswith("_") and isinstance(v, dict) and "line" in v]
    head, head_html = _said(
        "Stopped when decided ({method}):", method=got.get("_method", "anytime-valid confidence sequences")
    )
    md = ["", head, "", *[f"- {_md_code(line)}" for line in lines], ""]
    hs = [f"<p>{head_html}</p><ul>", *[f"<li>{_html_text(line)}</li>" for line in lines], "</ul>"]
    return md, hs


def build_report(results: str | os.PathLike[str] | None = None) -> Path:
    """Write REPORT.md and REPORT.html under ``results`` and return the markdown path. A results folder another user
    could plant links in is refused (:func:`tomlib.paths.results_folder`)."""
    root = results_for_writing(results)
    notebooks = _notebooks(root)
    written_by = {
        str(t): name for name, stamp in notebooks if isinstance(tables := stamp.get("tables"), list) for t in tables
    }
    papers = _gather(root, written_by)
    verdicts = pd.read_csv(write_claims(root))
    check_said, check_table = engine_check(pd.read_csv(write_engine_check(root)))
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    contents = [(f"paper-{p.paper_id}", paper_info(p.paper_id).topic) for p in papers]
    contents += [("notebooks", "Notebooks"), (ENGINE_ANCHOR, "The claims engine on declared truth")]
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
    md = [
        "# tomlib results",
        "",
        f"Generated {stamp}. {SOURCES}",
        "",
        "Contents: " + " · ".join(f"[{title}](#{anchor})" for anchor, title in contents),
        "",
        _md_table(summary),
        "",
        f"{RUN_NOT_REPRODUCED} {FIRM.capitalize()}.",
        "",
        f"{ENGINE_CHECKED} {check_said} ([the check](#{ENGINE_ANCHOR}))",
    ]
    hs = [
        "<h1>tomlib results</h1>",
        f"<p>Generated {stamp}. {_inline_html(SOURCES)}</p>",
        "<nav><p>Contents: "
        + " · ".join(f"<a href='#{anchor}'>{html.escape(title)}</a>" for anchor, title in contents)
        + "</p></nav>",
        _html_table(summary),
        f"<p>{RUN_NOT_REPRODUCED} {FIRM.capitalize()}.</p>",
        f"<p>{_inline_html(ENGINE_CHECKED)} {_inline_html(check_said)} (<a href='#{ENGINE_ANCHOR}'>the check</a>)</p>",
    ]
    waves_md, waves_html = _waves_part(root)
    md += waves_md
    hs += waves_html

    book_glance: list[tuple[str, list[str]]] = []
    for paper in papers:
        title, anchor = paper_info(paper.paper_id).topic, f"paper-{paper.paper_id}"
        cite_md, cite_html = _citation(paper.paper_id)
        md += ["", f"## {_md_text(title)} ({_md_code(paper.paper_id)}) {{#{anchor}}}", "", cite_md, ""]
        hs.append(f"<h2 id='{anchor}'>{_html_text(title)} (<code>{_html_text(paper.paper_id)}</code>)</h2>")
        hs.append(f"<p>{cite_html}</p>")
        glance_md, glance_html, glance_book = _glance_part(paper.paper_id, verdicts)
        if glance_book:
            book_glance.append((paper.paper_id, glance_book))
        if glance_md:
            md += [f"### At a glance {{#glance-{paper.paper_id}}}", "", *glance_md]
            hs += [f"<h3 id='glance-{paper.paper_id}'>At a glance</h3>", *glance_html]
        claims_md, claims_html = _claims_part(root, paper.paper_id, verdicts)
        md += claims_md
        hs += claims_html
        for t in paper.tables:
            md += [f"### {_md_code(t.name)}", "", f"> {plain_text(t.caption)}", ""]
            hs += [f"<h3><code>{_html_text(t.name)}</code></h3>", f"<p><i>{_inline_html(t.caption)}</i></p>"]
            (origin_md, origin_html), warn = provenance(root, t.name, dict(notebooks))
            md += [f"*{origin_md}*", ""] + ([f"> **Stale:** {warn[0]}", ""] if warn else [])
            hs.append(f"<p><i>{origin_html}</i></p>")
            if warn:
                hs.append(f"<p style='background:#fff3cd;padding:4px'><b>Stale:</b> {warn[1]}</p>")
            csv = _href(f"tables/{t.name}.csv")
            links, hlinks = [f"[CSV]({csv})"], [f"<a href='{html.escape(csv)}'>CSV</a>"]
            if t.notebook:
                by = _href(f"notebooks/{t.notebook}.html")
                links.insert(0, f"written by [{_md_code(t.notebook)}]({by})")
                hlinks.insert(0, f"written by <a href='{html.escape(by)}'><code>{_html_text(t.notebook)}</code></a>")
            md += [" · ".join(links), ""]
            hs.append(f"<p>{' · '.join(hlinks)}</p>")
            for fig in t.figures:
                fig_md, fig_html = _figure(f"figures/{fig}", fig)
                md += [fig_md, ""]
                hs.append(fig_html)
            md += ["Agreement with the paper, per source and metric:", "", _md_table(t.agreement), ""]
            hs += ["<p>Agreement with the paper, per source and metric:</p>", _html_table(t.agreement)]
            more = f" The first {MAX_ROWS} rows; {t.more_rows:,} more are in the CSV." if t.more_rows else ""
            said = "Ours beside the paper's value:"
            if t.paper_models:
                said = (
                    f"The paper ran other models than ours ({', '.join(t.paper_models)}), so no cell of ours has a "
                    "paper value of its model: ours beside the paper's value for each of its models (`paper: <model>`)"
                    ", the other conditions the same:"
                )
            md += [f"{said}{more}", "", _md_table(t.layout), ""]
            hs += [f"<p>{_inline_html(said)}{html.escape(more)}</p>", _html_table(t.layout)]
        for fig in paper.figures:
            fig_md, fig_html = _figure(f"figures/{fig}", fig)
            md += [fig_md, ""]
            hs.append(fig_html)
        readings = readings_of(paper.paper_id)
        if not readings.empty:
            why = (
                "Readings we chose where the paper is silent, each a named parameter (or fixed, said so) with what it "
                "changes:"
            )
            md += [why, "", _md_table(readings), ""]
            hs += [f"<p>{_inline_html(why)}</p>", _html_table(readings)]
        if paper.simulated:
            why = (
                "Rows of a simulated model (`sim:<name>`, tomlib.sim: declared competence, for rehearsing the scale "
                "and checking the metrics). They are not a reproduction and are left out of the tables above:"
            )
            md += [why, "", *[f"- {sim_md}" for sim_md, _ in paper.simulated], ""]
            hs += [f"<p>{_inline_html(why)}</p><ul>", *[f"<li>{sim_html}</li>" for _, sim_html in paper.simulated]]
            hs.append("</ul>")
            truth, counted = sim_truth(paper.paper_id, verdicts)
            if not truth.empty:
                md += [
                    f"The simulated model's verdicts against its declared truth. {counted}",
                    "",
                    _md_table(truth),
                    "",
                ]
                hs += [f"<p>The simulated model's verdicts against its declared truth. {_inline_html(counted)}</p>"]
                hs.append(_html_table(truth))
        if paper.pending:
            why = "Transcribed from the paper, with no notebook of the series reproducing it yet:"
            md += [why, "", *[f"- {p}" for p in paper.pending], ""]
            hs += [f"<p>{_inline_html(why)}</p><ul>", *[f"<li>{_inline_html(p)}</li>" for p in paper.pending]]
            hs.append("</ul>")

    write_glance(root, book_glance)
    md += ["", "## Notebooks {#notebooks}", ""]
    hs.append("<h2 id='notebooks'>Notebooks</h2><ul>")
    if not notebooks:
        md.append("(none executed yet: run `./reproduce.sh`)")
    for name, nb in notebooks:  # what a stamp says is quoted: a stamp is a file in the results folder
        status, error = nb.get("status", "?"), nb.get("error")
        good = nb.get("last_ok")
        page = f"{name}.failed" if good else name
        html_link, nb_link, good_link = (
            _href(f"notebooks/{p}") for p in (f"{page}.html", f"{page}.ipynb", f"{name}.html")
        )
        kept = f" The last good run (finished {_when(good.get('finished'))}) is kept" if isinstance(good, dict) else ""
        md.append(
            f"- {_md_code(name)}: {_md_text(status)} ([html]({html_link}), [notebook]({nb_link}))"
            + (f": {_md_text(error)}" if error else "")
            + (f".{kept}: [html]({good_link})." if kept else "")
        )
        hs.append(
            f"<li><a href='{html.escape(html_link)}'><code>{_html_text(name)}</code></a>: {_html_text(status)}"
            + (f": {_html_text(error)}" if error else "")
            + (f".{html.escape(kept)}: <a href='{html.escape(good_link)}'>html</a>." if kept else "")
            + "</li>"
        )
    hs.append("</ul>")
    md += ["", f"## The claims engine on declared truth {{#{ENGINE_ANCHOR}}}", "", ENGINE_HOW, "", check_said, ""]
    md += [_md_table(check_table), ""]
    hs += [f"<h2 id='{ENGINE_ANCHOR}'>The claims engine on declared truth</h2>", f"<p>{_inline_html(ENGINE_HOW)}</p>"]
    hs += [f"<p>{_inline_html(check_said)}</p>", _html_table(check_table)]

    # through a temp file and os.replace: a link planted at either name is replaced, not written through
    write_atomic(root / "REPORT.md", portable(redact_text("\n".join(md) + "\n")))
    style = (
        "<style>body{font-family:sans-serif;max-width:1100px;margin:auto;padding:0 1em}"
        "table{border-collapse:collapse;font-size:13px;margin:0.5em 0}td,th{border:1px solid #ccc;padding:2px 6px}"
        "th{background:#f4f4f4}</style>"
    )
    head = f"<!doctype html><html><head><meta charset='utf-8'><title>tomlib results</title>{style}</head>"
    write_atomic(root / "REPORT.html", portable(redact_text(f"{head}<body>{''.join(hs)}</body></html>\n")))
    return root / "REPORT.md"
