"""The book of the series (``tomlib book``, ``./reproduce.sh docs``): how its source is staged from ``results/`` and
``docs/`` (fast), and the book built from the executed offline series, opened in Chromium from disk with every
network request refused (browser): navigation, search, an equation, an explorer and a forest plot."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tomlib import book
from tomlib.__main__ import main
from tomlib.errors import UsageError
from tomlib.paths import project_root

pytestmark = pytest.mark.tier("fast")

REPORT = """# tomlib results

Generated today. The engine was checked ([how](#engine-check)).

| paper | claims |
| --- | --- |
| coalition | formal: 3 contradicted |

## Notebooks

- 00 ...

## Stable coalition matching
"""


def results_folder(tmp_path: Path, glance: str | None = None) -> Path:
    """A results folder as the series leaves it, in small: two executed notebooks, REPORT, a forest plot."""
    results = tmp_path / "results"
    (results / "notebooks").mkdir(parents=True)
    (results / "figures").mkdir()
    for name, link in (("00_quickstart", ""), ("01_adaptive_tom_table1", "[our readings](../docs/readings.md)")):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"# {name}\n\n{link}")])
        nbformat.write(nb, results / "notebooks" / f"{name}.ipynb")
    (results / "notebooks" / "00_quickstart.html").write_text("<html></html>")  # an exported page: not a chapter
    (results / "REPORT.md").write_text(REPORT)
    (results / "figures" / "claims.coalition.png").write_bytes(b"\x89PNG")
    if glance is not None:
        (results / "glance.md").write_text(glance)
    return results


def test_the_landing_page_without_a_grid_says_how_to_write_one(tmp_path: Path) -> None:
    text = book.glance(results_folder(tmp_path))
    assert "tomlib report" in text and "Generated today" not in text  # REPORT's own top is not the grid
    linked = book.glance(results_folder(tmp_path / "b", glance="see [how](#engine-check)\n"))
    assert '<a href="../REPORT.html#engine-check">how</a>' in linked  # REPORT's anchors are REPORT.html's, beside


def test_the_landing_page_takes_the_glance_when_report_wrote_one(tmp_path: Path) -> None:
    grid = "## Stable coalition matching\n\n| claim | formal |\n| --- | --- |\n| 1 | <span>supported</span> |\n"
    results = results_folder(tmp_path, glance=grid)
    assert book.glance(results) == grid
    page = book.landing(results, ["00_quickstart"], ["readings"])
    assert grid.strip() in page and "Generated today" not in page
    assert page.count("figures/claims.coalition.png") == 1  # the forest plot below the grid
    shown = book.landing(results_folder(tmp_path / "b", glance="![x](figures/claims.coalition.png)\n"), [], [])
    assert shown.count("figures/claims.coalition.png") == 1  # not twice when the glance shows it


def test_the_source_is_staged_as_the_repository_lays_it_out(tmp_path: Path) -> None:
    results = results_folder(tmp_path)
    staged = tmp_path / "src"
    pages = book.stage(results, staged)
    topics = book.topics(project_root() / "docs")
    assert pages == ["index", "notebooks/00_quickstart", "notebooks/01_adaptive_tom_table1"] + [
        f"docs/{t}" for t in topics
    ]
    # navigation in order: landing, chapters, then the topic pages the issue names, in the book's order
    index = (staged / "index.md").read_text()
    listed = re.findall(r"^(notebooks/\S+|docs/\S+)$", index, re.M)
    assert listed == pages[1:]
    assert topics[:8] == [
        "models", "replay", "sweeps", "generated-code", "sharing", "readings", "teaching", "performance"
    ]  # fmt: skip
    # a notebook's link to the readings page resolves from its chapter, as it does in the repository
    chapter = staged / "notebooks" / "01_adaptive_tom_table1.ipynb"
    assert "../docs/readings.md" in chapter.read_text() and (chapter.parent / "../docs/readings.md").exists()
    # what the topic pages include is where they include it from, and links to it go to the page that shows it
    assert (staged / "benchmarks" / "RESULTS.md").exists() and (staged / "notebooks" / "README.md").exists()
    performance = (staged / "docs" / "performance.md").read_text()
    assert "{include} ../benchmarks/RESULTS.md" in performance
    assert "](../benchmarks/RESULTS.md)" not in "".join(p.read_text() for p in (staged / "docs").glob("*.md"))
    assert (staged / "figures" / "claims.coalition.png").exists()
    # the class plan's links to exercise headings go to the chapters in the book
    plan = (staged / "notebooks" / "README.md").read_text()
    assert "](../notebooks/00_quickstart.ipynb)" in plan and ".ipynb#Exercise" not in plan
    # and every image a topic page shows is beside it
    for page in (staged / "docs").glob("*.md"):
        for image in re.findall(r"!\[[^\]]*\]\((images/[^)]+)\)", page.read_text()):
            assert (page.parent / image).is_file(), (page.name, image)


def test_every_topic_page_is_in_the_books_order() -> None:
    assert {p.stem for p in (project_root() / "docs").glob("*.md")} == set(book.TOPICS)


def test_the_book_loads_nothing_from_the_network_when_the_scripts_are_beside_the_notebooks(tmp_path: Path) -> None:
    conf = book.config(tmp_path, mathjax=True, widgets=True)
    assert "://" not in str(conf)  # MathJax and the widget renderer from _static/, not Sphinx's or myst-nb's CDNs
    assert conf["nb_execution_mode"] == "off"


def test_without_an_executed_series_the_book_names_the_fix_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(UsageError, match=r"Run \./reproduce\.sh first"):
        book.chapters(tmp_path / "results")
    assert main(["book", "--results", str(tmp_path / "results")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "./reproduce.sh first" in err and "./reproduce.sh docs" in err
    assert not (tmp_path / "results").exists()  # nothing written


@pytest.mark.browser
def test_the_book_opens_from_disk_offline(offline_series: dict[str, Any], tmp_path: Path) -> None:
    """Built from the executed offline series (into a folder of its own: the series is shared read-only), opened as
    a reader opens it from disk, every request that is not a file refused."""
    from tests.widgets.test_browser import ICONS_LOADED, SHOTS, browser_setup, open_offline

    chromium, _ = browser_setup()
    assert all(o["status"] == "ok" for o in offline_series["outcomes"]), offline_series["summary"]
    from playwright.sync_api import sync_playwright

    index, notes = book.build_book(offline_series["results"], tmp_path / "book")
    assert not [n for n in notes if "not found" in n], notes  # MathJax and the widget scripts came with the series
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        blocked: list[str] = []
        browser, page = open_offline(p, chromium, index, blocked)
        page.on("pageerror", lambda e: blocked.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: blocked.append(f"missing: {r.url}"))  # a file the book should ship
        assert page.locator("h1").first.inner_text().startswith("The claims at a glance")
        forest = page.locator("img[src*='claims.adaptive_tom']")  # a forest plot, loaded
        forest.scroll_into_view_if_needed()
        assert forest.evaluate("i => i.complete && i.naturalWidth > 0")
        page.screenshot(path=str(SHOTS / "book_landing.png"))

        page.locator("nav a", has_text="01 · Adaptive ToM").first.click()  # navigation: the chapter of notebook 01
        page.wait_for_url(re.compile(r"notebooks/01_adaptive_tom_table1\.html$"))
        page.wait_for_selector(".MathJax_CHTML", timeout=30_000)  # its equation, typeset by the MathJax beside it
        page.wait_for_selector(".tx > h4", timeout=60_000)  # its explorer, drawn from the saved widget state
        page.wait_for_function(ICONS_LOADED, timeout=10_000)
        assert not page.locator(".tomlib-fallback").first.is_visible()  # the plain step stays under the widget
        assert not page.get_by_text("reload logs").is_visible()  # no control that needs a kernel
        page.screenshot(path=str(SHOTS / "book_chapter01.png"))

        page.goto((index.parent / "search.html").as_uri() + "?q=coalition")  # search, from file://
        page.wait_for_selector("#search-results li a", timeout=30_000)
        found = page.locator("#search-results li a").all_inner_texts()
        assert any("Coalition paper" in t for t in found), found
        readings = index.parent / "docs" / "readings.html"
        assert readings.exists()
        browser.close()
        assert not blocked, blocked
