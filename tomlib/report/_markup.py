"""REPORT's text: what a value, our prose and what the results folder says look like in Markdown and in HTML, each
escaped for its place (a cell, a line, a code span, a link's address); math in captions as Unicode."""

from __future__ import annotations

import html
import numbers
import re
import unicodedata
import urllib.parse

import pandas as pd


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
    """Caption text for markdown: ``$...$`` math as Unicode (``$R = 1 \\dots 5$`` → ``R = 1 … 5``).

    Args:
        text: a caption, our words with ``$...$`` math.
    """
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
    are refused outright, so ``java\tscript:`` is no way around it.

    Args:
        to: a link's address as written.
    """
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
