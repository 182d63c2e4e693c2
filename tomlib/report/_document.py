"""REPORT as one document: sections of blocks of inline text, built once (:mod:`tomlib.report._report`) and drawn as
Markdown and as HTML by :mod:`tomlib.report._render`.

Inline text says whose words it holds, and so how each format must show them: :class:`Prose` is ours, in Markdown;
:class:`Quoted` and :class:`Code` are what the results folder says, shown as text and never taken as markup (a
results folder may hold files the runner did not write). Where the two formats show different words,
:class:`Either` holds both.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from tomlib.report._claims import Grid


@dataclass(frozen=True)
class Prose:
    """Our words in Markdown: `code`, [links](to) (safe addresses only in HTML) and ``$math$``."""

    text: str


@dataclass(frozen=True)
class Tex:
    """Our words with ``$math$`` (a caption): the math as Unicode in Markdown too."""

    text: str


@dataclass(frozen=True)
class Plain:
    """Our words with no markup: as written in Markdown, escaped in HTML."""

    text: str


@dataclass(frozen=True)
class Quoted:
    """What the results folder says, as text: on one line, any character that could start markup escaped."""

    value: object


@dataclass(frozen=True)
class Code:
    """What the results folder says, as code."""

    value: object


@dataclass(frozen=True)
class Link:
    """``label`` linking to ``to``: a percent-encoded path in the results folder (:func:`_markup.href`) or an anchor."""

    label: list[Inline]
    to: str


@dataclass(frozen=True)
class Either:
    """Words that differ between the formats: ``md`` in Markdown, ``html`` in HTML."""

    md: list[Inline]
    html: list[Inline]


Inline = Prose | Tex | Plain | Quoted | Code | Link | Either
Text = list[Inline]


@dataclass(kw_only=True)
class Block:
    """A block of the page. In Markdown each is followed by a blank line unless ``md_blank_after`` is False."""

    md_blank_after: bool = True


@dataclass
class Heading(Block):
    """A heading of ``level`` (2: a section's, 3: a part's), with an ``anchor`` to link to."""

    level: int
    text: Text
    anchor: str | None = None


@dataclass
class Paragraph(Block):
    """A paragraph, in italics with ``italic``."""

    text: Text
    italic: bool = False


@dataclass
class Quote(Block):
    """A quoted line (a table's caption): a block quote in Markdown, an italic paragraph in HTML."""

    text: Text


@dataclass
class Alert(Block):
    """A highlighted warning that starts with its bold ``label`` (``Stale``)."""

    label: str
    text: Text


@dataclass
class Nav(Block):
    """The page's contents: a paragraph, in a ``<nav>`` in HTML."""

    text: Text


@dataclass
class Image(Block):
    """A picture of the results folder: ``path`` relative to it, with its ``alt`` text (both possibly any name)."""

    path: str
    alt: str


@dataclass
class Table(Block):
    """A table of values; ``row_ids`` give the HTML rows anchors, and with ``code`` a cell's `code spans` show as code
    in HTML (Markdown keeps them)."""

    frame: pd.DataFrame
    row_ids: list[str] | None = None
    code: bool = False


@dataclass
class VerdictGrid(Block):
    """A paper's claims by source (:func:`tomlib.report._claims.verdict_grid`), each number linking to the claim's
    row of the claims table (in HTML, on the page the renderer is given)."""

    grid: Grid
    paper_id: str


@dataclass
class GridLegend(Block):
    """The verdict grid's legend: emoji in Markdown, colour swatches in HTML."""


@dataclass
class List(Block):
    """A bulleted list; with no items Markdown shows ``empty`` instead, where it is given (HTML an empty list)."""

    items: list[Text]
    empty: Text | None = None


@dataclass
class Section:
    """A part of the page under its ``heading`` (level 2); one with none is a run of blocks set apart."""

    heading: Heading | None
    blocks: list[Block] = field(default_factory=list)


@dataclass
class Document:
    """The page: its ``title`` (the top heading), the ``lead`` blocks under it, then the ``sections``."""

    title: str
    lead: list[Block]
    sections: list[Section]
