"""The two renderers of REPORT's document (:mod:`tomlib.report._document`): :func:`to_markdown` and :func:`to_html`.
Each walks the same blocks; how each kind of text is escaped in each format is :mod:`tomlib.report._markup`'s."""

from __future__ import annotations

import html

from tomlib.report._claims import GRID_LEGEND, frame_of, grid_legend_html, html_of
from tomlib.report._document import (
    Alert,
    Block,
    Code,
    Document,
    Either,
    GridLegend,
    Heading,
    Image,
    Inline,
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
from tomlib.report._markup import (
    _MD_LABEL,
    _href,
    _html_table,
    _html_text,
    _inline_html,
    _md_code,
    _md_table,
    _md_text,
    _one_line,
    plain_text,
)

STYLE = (
    "<style>body{font-family:sans-serif;max-width:1100px;margin:auto;padding:0 1em}"
    "table{border-collapse:collapse;font-size:13px;margin:0.5em 0}td,th{border:1px solid #ccc;padding:2px 6px}"
    "th{background:#f4f4f4}</style>"
)


def md_text(text: Text) -> str:
    """Inline text as Markdown.

    Args:
        text: the inline pieces, in order.
    """
    return "".join(_md_inline(piece) for piece in text)


def _md_inline(piece: Inline) -> str:
    match piece:
        case Prose(words) | Plain(words):
            return words
        case Tex(words):
            return plain_text(words)
        case Quoted(value):
            return _md_text(value)
        case Code(value):
            return _md_code(value)
        case Link(label, to):
            return f"[{md_text(label)}]({to})"
        case Either(md, _):
            return md_text(md)
    raise TypeError(f"no Markdown for {piece!r}")


def md_lines(block: Block) -> list[str]:
    """A block as lines of Markdown, with the blank line after it unless it says otherwise.

    Args:
        block: one block of the document.
    """
    return _md_block(block) + ([""] if block.md_blank_after else [])


def _md_block(block: Block) -> list[str]:
    match block:
        case Heading(level, text, anchor):
            return ["#" * level + f" {md_text(text)}" + (f" {{#{anchor}}}" if anchor else "")]
        case Paragraph(text, italic):
            return [f"*{md_text(text)}*" if italic else md_text(text)]
        case Quote(text):
            return [f"> {md_text(text)}"]
        case Alert(label, text):
            return [f"> **{label}:** {md_text(text)}"]
        case Nav(text):
            return [md_text(text)]
        case Image(path, alt):
            return [f"![{_md_label(alt)}]({_href(path)})"]
        case Table(frame):
            return [_md_table(frame)]
        case VerdictGrid(grid):
            return [_md_table(frame_of(grid))]
        case GridLegend():
            return [GRID_LEGEND + "."]
        case List(items, empty):
            shown = [f"- {md_text(item)}" for item in items]
            return shown if shown or empty is None else [md_text(empty)]
    raise TypeError(f"no Markdown for {block!r}")


def _md_label(alt: str) -> str:
    """An image's text on one line, nothing in it able to end it or hold code or HTML."""
    return _MD_LABEL.sub(r"\\\1", _one_line(alt))


def to_markdown(doc: Document) -> str:
    """The document as Markdown (``REPORT.md``): blocks apart by blank lines, a section's heading after one more.

    Args:
        doc: the report's document.
    """
    lines = [f"# {doc.title}", ""]
    for block in doc.lead:
        lines += md_lines(block)
    for section in doc.sections:
        lines.append("")
        for block in ([section.heading] if section.heading else []) + section.blocks:
            lines += md_lines(block)
    return "\n".join(lines) + "\n"


def html_text(text: Text) -> str:
    """Inline text as HTML.

    Args:
        text: the inline pieces, in order.
    """
    return "".join(_html_inline(piece) for piece in text)


def _html_inline(piece: Inline) -> str:
    match piece:
        case Prose(words) | Tex(words):
            return _inline_html(words)
        case Plain(words):
            return html.escape(words)
        case Quoted(value):
            return _html_text(value)
        case Code(value):
            return f"<code>{_html_text(value)}</code>"
        case Link(label, to):
            return f"<a href='{html.escape(to)}'>{html_text(label)}</a>"
        case Either(_, shown):
            return html_text(shown)
    raise TypeError(f"no HTML for {piece!r}")


def html_block(block: Block, page: str = "") -> str:
    """A block as HTML.

    Args:
        block: one block of the document.
        page: the page the verdict grid's numbers link into (``""``: this one; the book's landing page links to
            ``../REPORT.html``).
    """
    match block:
        case Heading(level, text, anchor):
            at = f" id='{html.escape(anchor)}'" if anchor else ""
            return f"<h{level}{at}>{html_text(text)}</h{level}>"
        case Paragraph(text, italic):
            return f"<p><i>{html_text(text)}</i></p>" if italic else f"<p>{html_text(text)}</p>"
        case Quote(text):
            return f"<p><i>{html_text(text)}</i></p>"
        case Alert(label, text):
            return f"<p style='background:#fff3cd;padding:4px'><b>{html.escape(label)}:</b> {html_text(text)}</p>"
        case Nav(text):
            return f"<nav><p>{html_text(text)}</p></nav>"
        case Image(path, alt):
            return f"<p><img src='{html.escape(_href(path))}' alt='{_html_text(alt)}' style='max-width:100%'></p>"
        case Table(frame, row_ids, code):
            return _html_table(frame, row_ids, code)
        case VerdictGrid(grid, paper_id):
            return html_of(grid, f"{page}#claim-{paper_id}")
        case GridLegend():
            return f"<p>{grid_legend_html()}.</p>"
        case List(items):
            return "<ul>" + "".join(f"<li>{html_text(item)}</li>" for item in items) + "</ul>"
    raise TypeError(f"no HTML for {block!r}")


def _html_section(section: Section) -> str:
    return "".join(html_block(b) for b in ([section.heading] if section.heading else []) + section.blocks)


def to_html(doc: Document) -> str:
    """The document as a page of HTML (``REPORT.html``) that loads nothing: no script, no font, its style inline.

    Args:
        doc: the report's document.
    """
    title = html.escape(doc.title)
    head = f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>{STYLE}</head>"
    lead = "".join(html_block(b) for b in doc.lead)
    body = f"<h1>{title}</h1>{lead}" + "".join(_html_section(s) for s in doc.sections)
    return f"{head}<body>{body}</body></html>\n"
