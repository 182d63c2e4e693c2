"""REPORT's prose reads as prose: captions' LaTeX as Unicode (the page loads no MathJax), `code` as <code>."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from tomlib.report import build_report, paper_table, write_table
from tomlib.report._markup import _inline_html, plain_text

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def visible(page: str) -> str:
    """The text a reader sees: no tags, no style."""
    return re.sub(r"<style>.*?</style>|<[^>]+>", " ", page, flags=re.S)


def test_captions_with_latex_and_backticks_render_without_raw_markup(isolated: Path) -> None:
    for table_id in ("table1", "table11"):  # the two captions with $...$ math
        ours = (
            paper_table("coalition", table_id, draft="iclr")
            .drop(columns=["draft", "draft_table"])
            .assign(source="llm:local")
        )
        write_table(ours)
        run = {"name": "08_coalition_table1", "profile": "default", "finished": time.time(), "status": "ok"}
        (isolated / "results" / "tables" / f"coalition.{table_id}.run.json").write_text(json.dumps(run))
    md = build_report().read_text()
    page = (isolated / "results" / "REPORT.html").read_text()
    text = visible(page)
    assert "$" not in text and "\\" not in text and "`" not in text
    assert "over <i>R</i> = 1 … 5 interaction rounds" in page
    assert "Performance Changes Without Matching (Round 1 → Round 5)" in page
    assert "From <code>08_coalition_table1</code>, profile <code>default</code>" in page
    # the markdown keeps its backticks (they are markdown) but not the LaTeX, which most viewers do not typeset
    assert "> Comparison of cooperative trends" in md and "over R = 1 … 5 interaction rounds" in md
    assert "\\dots" not in md and "$R" not in md


@pytest.mark.parametrize(
    ("tex", "html", "plain"),
    [
        ("$R = 1 \\dots 5$", "<i>R</i> = 1 … 5", "R = 1 … 5"),
        ("ToM$^k$", "ToM<sup><i>k</i></sup>", "ToMᵏ"),
        ("$\\phi_{ij} \\leq \\varepsilon$", "φ<sub><i>i</i><i>j</i></sub> ≤ ε", "φ_(ij) ≤ ε"),
        ("$\\text{Round } 5 \\times 2$", "Round 5 × 2", "Round 5 × 2"),
        ("a `b` and [CSV](tables/x.csv) <i>", "a <code>b</code> and <a href='tables/x.csv'>CSV</a> &lt;i&gt;", None),
    ],
)
def test_simple_latex_becomes_unicode(tex: str, html: str, plain: str | None) -> None:
    assert _inline_html(tex) == html
    if plain is not None:
        assert plain_text(tex) == plain
