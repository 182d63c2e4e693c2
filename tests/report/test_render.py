"""REPORT's document drawn by its two renderers: each kind of text escaped as its words are (ours, or what the
results folder says), blocks apart by a blank line in Markdown, a section's heading after one more."""

from __future__ import annotations

import pandas as pd
import pytest

from tomlib.report._document import (
    Alert,
    Code,
    Document,
    Either,
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
)
from tomlib.report._render import html_text, md_text, to_html, to_markdown

pytestmark = pytest.mark.tier("fast")

PLANTED = "<b>x</b> *em* [a](javascript:b)\nnext"
LINKED = "<a href='notebooks/a%20b.html'><code>n</code></a>"
CASES = [
    (
        Prose("`c` & [a](b.csv) $x_1$"),
        "`c` & [a](b.csv) $x_1$",
        "<code>c</code> &amp; <a href='b.csv'>a</a> <i>x</i><sub>1</sub>",
    ),
    (Tex("$x_1$ it's"), "x₁ it's", "<i>x</i><sub>1</sub> it's"),
    (Plain("it's <a>"), "it's <a>", "it&#x27;s &lt;a&gt;"),
    (
        Quoted(PLANTED),
        r"\<b\>x\</b\> \*em\* \[a\](javascript:b) next",
        "&lt;b&gt;x&lt;/b&gt; *em* [a](javascript:b) next",
    ),
    (Code("a`b"), "``a`b``", "<code>a`b</code>"),
    (Link([Code("n")], "notebooks/a%20b.html"), "[`n`](notebooks/a%20b.html)", LINKED),
    (Either([Plain("md")], [Plain("html")]), "md", "html"),
]


@pytest.mark.parametrize(("piece", "md", "html"), CASES)
def test_each_kind_of_text_is_escaped_for_its_words(piece: object, md: str, html: str) -> None:
    assert md_text([piece]) == md  # type: ignore[list-item]
    assert html_text([piece]) == html  # type: ignore[list-item]


def doc() -> Document:
    lead = [Paragraph([Plain("Lead.")]), Nav([Link([Plain("Part")], "#part")], md_blank_after=False)]
    part = Section(
        Heading(2, [Plain("Part")], "part"),
        [
            Heading(3, [Code("t")]),
            Quote([Tex("$a$")]),
            Paragraph([Plain("from")], italic=True),
            Alert("Stale", [Quoted("<old>")]),
            Image("figures/a b.png", "a]b"),
            Table(pd.DataFrame({"x": [1234.0]})),
            List([[Plain("one")], [Plain("two")]]),
        ],
    )
    apart = Section(None, [Paragraph([Plain("Apart.")])])
    last = Section(Heading(2, [Plain("Last")]), [List([], [Plain("(none)")], md_blank_after=False)])
    return Document("Title", lead, [apart, part, last])


def test_markdown_sets_blocks_apart_by_a_blank_line_and_a_heading_by_one_more() -> None:
    assert to_markdown(doc()).split("\n") == [
        "# Title", "", "Lead.", "", "[Part](#part)",
        "", "Apart.", "",
        "", "## Part {#part}", "", "### `t`", "", "> a", "", "*from*", "", r"> **Stale:** \<old\>", "",
        r"![a\]b](figures/a%20b.png)", "", "| x |", "| --- |", "| 1,234 |", "", "- one", "- two", "",
        "", "## Last", "", "(none)", "",
    ]  # fmt: skip


def test_html_is_one_page_of_the_same_blocks() -> None:
    page = to_html(doc())
    body = page.split("<body>", 1)[1]
    assert page.startswith("<!doctype html><html><head><meta charset='utf-8'><title>Title</title><style>")
    assert body == (
        "<h1>Title</h1><p>Lead.</p><nav><p><a href='#part'>Part</a></p></nav><p>Apart.</p>"
        "<h2 id='part'>Part</h2><h3><code>t</code></h3><p><i><i>a</i></i></p><p><i>from</i></p>"
        "<p style='background:#fff3cd;padding:4px'><b>Stale:</b> &lt;old&gt;</p>"
        "<p><img src='figures/a%20b.png' alt='a]b' style='max-width:100%'></p>"
        "<table><thead><tr><th>x</th></tr></thead><tbody><tr><td>1,234</td></tr></tbody></table>"
        "<ul><li>one</li><li>two</li></ul><h2>Last</h2><ul></ul></body></html>\n"
    )
