"""REPORT quotes what the results folder says and takes none of it as markup: a results folder may hold files the
runner did not write (a planted stamp, run record, waves.json or file name), and REPORT.md is read by Markdown
viewers and, as a file, by anything that follows a link planted at its name.

Links in REPORT go only to relative, http and https addresses; REPORT.md and REPORT.html are written through a
temporary file, so a link planted at either name is replaced, not written through.
"""

from __future__ import annotations

import json
import time
from html.parser import HTMLParser
from pathlib import Path

import mistune
import pytest

from tomlib.report import build_report, paper_table, write_table
from tomlib.report._markup import _inline_html, safe_target

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

SCRIPT = "<img src=x onerror=alert(1)><script>alert(2)</script>"
LINK = "[click](javascript:alert(3))"
# a new line of its own (for a shell start-up file or a heading), markup, and Unicode line breaks
PLANTED = f"oops\n# planted heading\necho planted >> ~/.bashrc\r\n{SCRIPT} {LINK} `code` *em* |cell|\u2028echo again"
NAME = "99_<img src=x onerror=alert(4)>"  # a stamp's name is its file's (no / in it)


class Tags(HTMLParser):
    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, dict[str, str | None]]] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, dict(attrs)))


REPORT_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "i", "b", "code", "ul", "li"}
REPORT_TAGS |= {"a", "img", "table", "thead", "tbody", "tr", "th", "td", "sup", "sub", "nav", "span"}


def assert_no_planted_markup(page: str, tags: set[str] = REPORT_TAGS) -> None:
    """HTML with no element but REPORT's own, no event attribute, and links and images only to safe addresses."""
    for tag, attrs in Tags(page).found:
        assert tag in tags, tag
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        for name in ("href", "src"):
            if name in attrs:
                assert safe_target(attrs[name] or ""), (tag, attrs)
                assert not set("<>\"' ") & set(attrs[name] or ""), (tag, attrs)  # a name in it is percent-encoded


@pytest.fixture
def planted(isolated: Path) -> Path:
    """A results folder with one real table, and a stamp, run record and waves.json that carry markup and lines."""
    results = isolated / "results"
    ours = paper_table("coalition", "table1", draft="iclr").drop(columns=["draft", "draft_table"])
    write_table(ours.assign(source="llm:local"))
    (results / "notebooks").mkdir(parents=True)
    stamp = {
        "status": f"failed {PLANTED}",
        "error": PLANTED,
        "tables": ["coalition.table1"],
        "finished": time.time(),
        "last_ok": {"finished": 1e300},  # a time no clock reaches
    }
    (results / "notebooks" / f"{NAME}.stamp.json").write_text(json.dumps(stamp))
    record = {"name": NAME, "profile": PLANTED, "status": PLANTED, "finished": 1.0, "parameters": {"p": PLANTED}}
    (results / "tables" / "coalition.table1.run.json").write_text(json.dumps(record))
    waves = {"_method": PLANTED, NAME: {"line": PLANTED}}
    (results / "waves.json").write_text(json.dumps(waves))
    return results


def test_a_planted_stamp_starts_no_line_of_report_md_and_holds_no_markup_there(planted: Path) -> None:
    md = build_report().read_text()
    for line in md.split("\n"):  # how Markdown and a shell read lines; splitlines() as well for the Unicode breaks
        assert not line.startswith(("# planted", "echo", "`code`")), line
    for line in md.splitlines():
        assert not line.lstrip("\r").startswith(("# planted", "echo")), line
    assert "\r" not in md and "\u2028" not in md
    # the stamp's status, its error and its status again in the stale note; the waves line and method; the record's
    # profile, status and parameter
    assert md.count("planted heading") == 8
    shown = mistune.html(md)  # as a Markdown viewer draws it: its raw HTML passes through
    assert "<img src=x" not in shown and "<script" not in shown and "harmful-link" not in shown
    assert "<h1>planted" not in shown and "<em>em</em>" not in shown
    assert_no_planted_markup(shown, REPORT_TAGS | {"blockquote", "em", "strong"})  # REPORT.md's own


def test_a_planted_stamp_holds_no_markup_in_report_html(planted: Path) -> None:
    build_report()
    page = (planted / "REPORT.html").read_text()
    assert_no_planted_markup(page)
    assert "javascript:" not in "".join(str(attrs) for _, attrs in Tags(page).found)
    assert page.count("&lt;img src=x onerror=alert(1)&gt;") == 8  # each planted text, as text
    assert "<code>99_&lt;img src=x onerror=alert(4)&gt;</code>" in page


@pytest.mark.parametrize(
    "to",
    [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        "vbscript:msgbox(1)",
        "data:text/html,<script>alert(1)</script>",
        "//evil.example/x",
        "\\\\evil.example\\x",
        "java\x01script:alert(1)",
        "file:///etc/passwd",
    ],
)
def test_a_link_to_anything_but_a_relative_or_web_address_stays_text(to: str) -> None:
    assert not safe_target(to)
    got = _inline_html(f"see [x]({to}) here")
    assert "<a" not in got and "see [x](" in got


@pytest.mark.parametrize(
    "to", ["tables/x.csv", "notebooks/a%20b.html", "#claims", "https://example.org/a?b=c", "http://x"]
)
def test_relative_and_web_links_stay_links(to: str) -> None:
    assert safe_target(to)
    assert _inline_html(f"[x]({to})") == f"<a href='{to}'>x</a>"


def test_report_replaces_links_planted_at_its_names(isolated: Path) -> None:
    results = isolated / "results"
    results.mkdir()
    victims = {name: isolated / f"victim-of-{name}" for name in ("REPORT.md", "REPORT.html")}
    for name, victim in victims.items():
        victim.write_text("mine\n")
        (results / name).symlink_to(victim)
    build_report()
    for name, victim in victims.items():
        assert victim.read_text() == "mine\n", name  # before: the report was written through the link
        assert not (results / name).is_symlink() and "tomlib results" in (results / name).read_text()


def test_a_table_cell_holds_no_link_or_html_and_keeps_its_code() -> None:
    import pandas as pd

    from tomlib.report._markup import _md_table

    cells = pd.DataFrame({"condition": [f"{SCRIPT} {LINK} | x", "`llm:<model>` < 0.5"], "value": [1.0, 2.0]})
    shown = mistune.html(_md_table(cells))
    assert_no_planted_markup(shown)
    assert "harmful-link" not in shown and "<script" not in shown
    assert "<code>llm:&lt;model&gt;</code> &lt; 0.5" in shown and shown.count("<tr>") == 3


def test_a_file_in_tables_that_is_not_a_results_table_is_named_not_read(planted: Path) -> None:
    """A CSV tomlib did not write (an unknown paper, columns of its own, markup in a name) stops no report."""
    (planted / "tables" / "nopaper.x.csv").write_text(f'"{SCRIPT}",b\n1,2\n')
    other = paper_table("coalition", "table1", draft="iclr").drop(columns=["draft", "draft_table"])
    (planted / "tables" / "coalition.table9.csv").write_text(other.assign(paper_value=1.0).to_csv(index=False))
    md = build_report().read_text()
    unread = md.split("## Files not read", 1)[1]
    assert "`tables/nopaper.x.csv`: it breaks the results contract: missing column(s)" in unread
    assert "`tables/coalition.table9.csv`: it holds rows of coalition.table1, not of coalition.table9" in unread
    assert "coalition.table1" in md.split("## Files not read", 1)[0]  # the real table is shown as before
    assert_no_planted_markup((planted / "REPORT.html").read_text())
