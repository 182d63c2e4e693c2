"""``results/REPORT.md`` (and ``.html``): every reproduced table beside the paper, with links."""

from __future__ import annotations

import html
import json
import os
import time
from pathlib import Path

import pandas as pd

from tomlib.paths import results_dir
from tomlib.redact import redact_text
from tomlib.report._tables import compare, paper_table_index, paper_tables_dir, read_results


def _md_table(df: pd.DataFrame) -> str:
    def fmt(v: object) -> str:
        if isinstance(v, float):
            return "" if pd.isna(v) else f"{v:.4g}"
        return str(v).replace("|", "\\|")

    head = "| " + " | ".join(map(str, df.columns)) + " |"
    rule = "| " + " | ".join("---" for _ in df.columns) + " |"
    body = ["| " + " | ".join(fmt(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def _summary(side: pd.DataFrame) -> pd.DataFrame:
    both = side.dropna(subset=["paper", "ours"])
    rows = []
    for source, part in side.groupby("source", sort=True):
        b = both[both["source"] == source]
        rows.append(
            {
                "source": source,
                "cells": len(part),
                "with paper value": len(b),
                "exact (|diff| < 0.005)": int((b["difference"].abs() < 0.005).sum()),
                "mean |diff|": round(float(b["difference"].abs().mean()), 3) if len(b) else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def _notebook_links(root: Path) -> list[tuple[str, dict[str, object]]]:
    out = []
    for stamp in sorted((root / "notebooks").glob("*.stamp.json")):
        out.append((stamp.name[: -len(".stamp.json")], json.loads(stamp.read_text())))
    return out


def build_report(results: str | os.PathLike[str] | None = None) -> Path:
    """Write REPORT.md and REPORT.html under ``results`` and return the markdown path."""
    root = results_dir(results)
    root.mkdir(parents=True, exist_ok=True)
    tables = read_results(root)
    index = paper_table_index()
    notebooks = _notebook_links(root)
    written_by = {t: name for name, stamp in notebooks for t in stamp.get("tables", [])}

    intro = (
        f"Generated {time.strftime('%Y-%m-%d %H:%M:%S')}. Sources: `paper` (transcribed), "
        "`formal` (exact model, no LLM), `llm:<model>` (live or replayed)."
    )
    md = ["# tomlib results", "", intro, "", "## Notebooks", ""]
    hs = ["<h1>tomlib results</h1>", f"<p>{html.escape(md[2])}</p>", "<h2>Notebooks</h2><ul>"]
    if not notebooks:
        md.append("(none executed yet: run `./reproduce.sh`)")
    for name, stamp in notebooks:
        status = stamp.get("status", "?")
        line = f"- `{name}` — {status} — [notebook](notebooks/{name}.ipynb), [html](notebooks/{name}.html)"
        if stamp.get("error"):
            line += f" — {stamp['error']}"
        md.append(line)
        hs.append(f"<li><code>{name}</code> — {status} — <a href='notebooks/{name}.html'>html</a></li>")
    hs.append("</ul>")

    md += ["", "## Reproduced tables", ""]
    hs.append("<h2>Reproduced tables</h2>")
    if not tables:
        md.append("(no table reproduced yet)")
    for name, df in tables.items():
        paper_id, table_id = name.split(".", 1)
        cap = index[(index["paper_id"] == paper_id) & (index["table_id"] == table_id)]["caption"]
        caption = cap.iloc[0] if len(cap) else "(not a transcribed paper table)"
        side = compare(df)
        nb = written_by.get(name)
        md += [f"### {name}", "", f"*{caption}*", ""]
        if nb:
            md += [f"Written by [`{nb}`](notebooks/{nb}.html).", ""]
        md += [
            _md_table(_summary(side)),
            "",
            "<details><summary>All cells</summary>",
            "",
            _md_table(side),
            "",
            "</details>",
            "",
        ]
        hs += [
            f"<h3>{html.escape(name)}</h3><p><i>{html.escape(caption)}</i></p>",
            _summary(side).to_html(index=False),
            "<details><summary>All cells</summary>",
            side.to_html(index=False, na_rep=""),
            "</details>",
        ]

    done = set(tables)
    pending = [
        f"{r.paper_id}.{r.table_id}" + (f" ({r.draft})" if r.draft else "")
        for r in index.itertuples()
        if f"{r.paper_id}.{r.table_id}" not in done
    ]
    md += ["## Transcribed paper tables not reproduced yet", ""]
    md += [f"- {p}" for p in pending] or ["(none)"]
    md += ["", f"Paper tables: `{paper_tables_dir()}`."]
    hs += [
        "<h2>Transcribed paper tables not reproduced yet</h2><ul>",
        *[f"<li>{html.escape(p)}</li>" for p in pending],
        "</ul>",
    ]

    (root / "REPORT.md").write_text(redact_text("\n".join(md) + "\n"))
    style = (
        "<style>body{font-family:sans-serif;max-width:1100px;margin:auto}"
        "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px}</style>"
    )
    head = f"<!doctype html><html><head><meta charset='utf-8'><title>tomlib results</title>{style}</head>"
    (root / "REPORT.html").write_text(redact_text(f"{head}<body>{''.join(hs)}</body></html>\n"))
    return root / "REPORT.md"
