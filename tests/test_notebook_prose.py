"""The notebooks read well (issue 54): each opens with at most 150 words and the paper's equation or algorithm, folds
the decisions the paper leaves open in a block that links the readings page, typesets its formulas and keeps its code
lines short. Files only: no kernel runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tomlib.report import readings_of

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
OPENING_WORDS = 150
CODE_LINE = 120
READINGS_PAGE = "../docs/readings.md"
PAPERS = {"adaptive_tom": "adaptive_tom", "tom_ib": "tom_ib", "coalition": "coalition"}

DISPLAY_MATH = re.compile(r"\$\$.*?\$\$", re.S)
MATH_OR_CODE = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$|```.*?```|`[^`\n]*`", re.S)
ALGORITHM = re.compile(r"\bAlgorithm \d")
UNTYPESET = re.compile(
    r"\^"  # a superscript: FTM_i^k, P^(0), e^-1, a^{1:R-1}
    r"|\w_\{"  # a braced subscript: Σ_{j≠i}
    r"|(?<![\w/.-])[A-Za-z]{1,4}_[A-Za-z0-9](?!\w)"  # a short name with a one-letter subscript: FTM_i, b_j
    r"|[Σ∑∏√]"  # a big operator
    r"|[φεηλαμπσΦ]′?\s*[=≤≥<>∈]\s*[\w(−-]"  # a Greek symbol in a relation: φ ≤ ε, ε = 0.25
)
"""A formula written as plain text, outside $...$ and code."""


def cells(path: Path, kind: str) -> list[dict]:
    return [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == kind]


def source(cell: dict) -> str:
    return "".join(cell["source"])


def words(markdown: str) -> int:
    """Words of prose: display equations apart, a token counts when it holds a letter or a digit."""
    return sum(bool(re.search(r"\w", t)) for t in DISPLAY_MATH.sub(" ", markdown).split())


def paper_of(path: Path) -> str | None:
    """The paper a notebook reproduces, from its name (``01_adaptive_tom_table1``); None for the quickstart."""
    return next((p for p in PAPERS if f"_{p}_" in f"_{path.stem}_"), None)


def untypeset(markdown: str) -> list[str]:
    """Each formula of ``markdown`` written as plain text, with a little context."""
    prose = re.sub(r"<[^>]+>", " ", MATH_OR_CODE.sub(" ", markdown))
    return [prose[max(0, m.start() - 20) : m.end() + 20] for m in UNTYPESET.finditer(prose)]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebook_opens_short_with_the_papers_equation_or_algorithm(path: Path) -> None:
    first = source(cells(path, "markdown")[0])
    assert first.startswith(f"# {path.stem[:2]} · "), "the opening is the notebook's title and its introduction"
    assert words(first) <= OPENING_WORDS, f"the opening has {words(first)} words (at most {OPENING_WORDS})"
    has_math = bool(re.search(r"\$[^$]+\$", first))
    assert has_math or ALGORITHM.search(first), "the opening shows the equation (in $...$) or names the algorithm"
    assert re.search(r"§\s?\d|eq\. \d|Algorithm \d|Appendix [A-G]", first), "the opening cites where in the paper"


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if paper_of(p)], ids=lambda p: p.stem)
def test_the_decisions_the_paper_leaves_open_are_folded_and_linked(path: Path) -> None:
    """Each reading this notebook shows (``data/readings``) is named in a collapsed block near the top that links
    the readings page, before the parameters."""
    paper = paper_of(path)
    assert paper is not None
    every = json.loads(path.read_text())["cells"]
    params = next(i for i, c in enumerate(every) if "parameters" in c.get("metadata", {}).get("tags", []))
    folded = [
        source(c)
        for c in every[:params]
        if c["cell_type"] == "markdown" and "<summary>Decisions the paper leaves open" in source(c)
    ]
    assert len(folded) == 1, "one collapsed block of the decisions the paper leaves open, before the parameters"
    block = folded[0]
    assert block.lstrip().startswith("<details>") and block.rstrip().endswith("</details>")
    assert f"]({READINGS_PAGE})" in block, f"the block links the readings page as {READINGS_PAGE}"
    shown = list(readings_of(paper, path.stem[:2])["reading"])
    assert shown, f"data/readings/{paper}.csv names no reading for {path.stem[:2]}"
    missing = [r for r in shown if f"**{r}**" not in block]
    assert not missing, f"readings of this notebook not named in its block: {missing}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_formulas_in_a_notebooks_prose_are_typeset(path: Path) -> None:
    found = {i: untypeset(source(c)) for i, c in enumerate(cells(path, "markdown"))}
    found = {i: f for i, f in found.items() if f}
    assert not found, f"formulas outside $...$ (markdown cell: context): {found}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_code_lines_are_at_most_120_characters(path: Path) -> None:
    long = [
        f"code cell {i}: {len(line)} characters: {line[:60]}..."
        for i, c in enumerate(cells(path, "code"))
        for line in source(c).splitlines()
        if len(line) > CODE_LINE
    ]
    assert not long, long


def test_the_prose_checks_catch_what_they_guard() -> None:
    """The checks themselves: a formula written as text is caught, one typeset or in code is not."""
    assert untypeset("trusted (FTM_i^k = 1/(n−1) Σ_{j≠i}, ICLR)")
    assert untypeset("weights P^(0), P^(1)") and untypeset("shrink by e^-1") and untypeset("when φ ≤ ε = 0.25")
    assert not untypeset(r"trusted ($\mathrm{FTM}_i^k$) with `ftm_team`, us_foreign_policy and $$\sum_{j \ne i}$$")
    assert words("# 09 · Title\n\n$$a = b + c$$\n\nTwo words.") == 4
