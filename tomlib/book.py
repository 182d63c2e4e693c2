"""``tomlib book``: the book of the series, built from ``results/`` without executing anything again.

The book is Sphinx with MyST-NB and the Book theme (the engine of Jupyter Book 1, driven from here with no
``conf.py``): its landing page is the claims at a glance, its chapters the executed notebooks of
``results/notebooks/``, its topic pages the project's ``docs/*.md``. Everything a page needs (theme, MathJax, the
widget renderer and its fonts, the search index) is written into ``results/book/`` beside the pages, so the book opens
from disk (``file://``) or any static host with no network. MathJax and the widget renderer are the copies the series
already ships beside its exported notebooks (``results/notebooks/mathjax``, ``results/notebooks/@jupyter-widgets``).

The source is staged in a temporary folder as the repository lays it out, so a link that works on the repository
works in the book: chapters in ``notebooks/`` (``../docs/readings.md`` from a notebook is the readings page), topic
pages in ``docs/``, and the files those pages include (``benchmarks/RESULTS.md``, ``notebooks/README.md``) where
the pages expect them."""

from __future__ import annotations

import io
import re
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from tomlib.errors import UsageError
from tomlib.paths import project_root, results_dir, results_folder, webdeps_dir

CHAPTER_GLOB = "[0-9][0-9]_*.ipynb"
TOPICS = (
    "models",
    "replay",
    "sweeps",
    "generated-code",
    "sharing",
    "readings",
    "teaching",
    "performance",
    "notebooks",
    "your-agent",
    "results",
    "development",
)
"""The topic pages in the order of the book's navigation; a page of docs/ not named here comes after them."""
INCLUDED = ("benchmarks/RESULTS.md", "notebooks/README.md")
"""Files of the repository that topic pages include (performance, teaching): staged, but not pages of their own."""
LINKS = {"../benchmarks/RESULTS.md": "performance.md"}
"""Links of the topic pages to files the book shows inside another page, and the page that shows them."""
MATHJAX = "mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe"  # as the exported notebooks load it, from _static/
WIDGETS = "@jupyter-widgets"  # the renderer asks for its icon fonts in this folder beside the page
CSS = """
.tomlib-needs-kernel { display: none !important; }  /* a static page has no kernel to answer these controls */
.widget-subarea:not(:empty) ~ .tomlib-fallback { display: none; }  /* the plain step, once the widget is drawn */
"""


def glance(results: Path) -> str:
    """The landing page's claims at a glance: ``results/glance.md``, the verdict grid per paper that REPORT's build
    writes (a results folder whose REPORT predates it says how to write it). Links into REPORT (``#anchor``) are sent
    to ``REPORT.html`` beside the book."""
    grid = results / "glance.md"
    if not grid.exists():
        return "No verdict grid in these results yet: `.venv/bin/tomlib report` (or `./reproduce.sh`) writes it.\n"
    text = grid.read_text(encoding="utf-8")
    return re.sub(r"\[([^\]]*)\]\(#([^)\s]+)\)", r'<a href="../REPORT.html#\2">\1</a>', text)


def chapters(results: Path) -> list[Path]:
    """The executed notebooks of the series, in order; refused in one line when the series has not run."""
    found = sorted((results / "notebooks").glob(CHAPTER_GLOB))
    if not found:
        raise UsageError(
            f"No executed notebooks in {results / 'notebooks'}: the book is made of them. "
            "Run ./reproduce.sh first (it executes the series), then ./reproduce.sh docs."
        )
    return found


def topics(docs: Path) -> list[str]:
    """The stems of the topic pages in ``docs``, in the navigation's order."""
    have = {p.stem for p in docs.glob("*.md")}
    return [t for t in TOPICS if t in have] + sorted(have - set(TOPICS))


FOREST = "figures/claims.*.png"
"""REPORT's forest plots (effect and CI per claim and source), one per paper, relative to the results folder."""


def forests(results: Path, shown: str) -> list[str]:
    """The forest plots the landing page adds below the glance: each paper's that ``shown`` does not show already."""
    plots = sorted(results.glob(FOREST))
    return [
        f"![The claims of {p.stem.split('.', 1)[1]}: effect and 95% CI per source, the paper's effect marked]"
        f"(figures/{p.name})"
        for p in plots
        if f"figures/{p.name}" not in shown
    ]


def landing(results: Path, chapter_stems: Sequence[str], topic_stems: Sequence[str]) -> str:
    """The landing page: the claims at a glance, each paper's forest plot, where to read the detail, and the
    navigation (chapters, then topics)."""
    top = glance(results).strip()
    plots = forests(results, top)
    toc = ["```{toctree}", ":hidden:", ":caption: Chapters", ":maxdepth: 1", ""]
    toc += [f"notebooks/{s}" for s in chapter_stems] + ["```", ""]
    toc += ["```{toctree}", ":hidden:", ":caption: Topics", ":maxdepth: 1", ""]
    toc += [f"docs/{s}" for s in topic_stems] + ["```", ""]
    return "\n".join(
        [
            "# The claims at a glance",
            "",
            "tomlib reproduces the experiments of three papers on Theory of Mind in LLM multi-agent systems. Each",
            "chapter of this book is one executed notebook of the series; the topic pages after them say how to run,",
            "replay, sweep and teach it. The detail of every verdict below is in",
            '<a href="../REPORT.html">REPORT.html</a>, beside this book.',
            "",
            top,
            "",
            *(["## The claims' effects beside the paper's", "", *plots, ""] if plots else []),
            *toc,
        ]
    )


def stage(results: Path, into: Path, root: Path | None = None) -> list[str]:
    """Lay the book's source out in ``into`` (see the module's docstring); return its pages' names, in order."""
    root = root or project_root()
    found = chapters(results)
    (into / "notebooks").mkdir(parents=True)
    for nb in found:
        shutil.copy2(nb, into / "notebooks" / nb.name)  # the executed notebook, never run again
    (into / "docs").mkdir()
    for page in (root / "docs").glob("*.md"):
        text = page.read_text(encoding="utf-8")
        for old, new in LINKS.items():
            text = text.replace(f"]({old})", f"]({new})")
        (into / "docs" / page.name).write_text(text, encoding="utf-8")
    if (root / "docs" / "images").is_dir():  # the topic pages' screenshots
        shutil.copytree(root / "docs" / "images", into / "docs" / "images")
    for plot in results.glob(FOREST):  # where REPORT's image links expect them, relative to the results folder
        (into / "figures").mkdir(exist_ok=True)
        shutil.copy2(plot, into / "figures" / plot.name)
    for rel in INCLUDED:
        if (root / rel).exists():
            (into / rel).parent.mkdir(parents=True, exist_ok=True)
            text = (root / rel).read_text(encoding="utf-8")
            # the class plan links a notebook's exercise heading (JupyterLab's anchor); included in docs/teaching,
            # the book links the notebook's chapter instead
            text = re.sub(r"\]\((\d\d_\w+\.ipynb)#[^)]*\)", r"](../notebooks/\1)", text)
            (into / rel).write_text(text, encoding="utf-8")
    stems, pages = [nb.stem for nb in found], topics(into / "docs")
    (into / "index.md").write_text(landing(results, stems, pages), encoding="utf-8")
    return ["index", *(f"notebooks/{s}" for s in stems), *(f"docs/{s}" for s in pages)]


def _scripts(results: Path, static: Path) -> tuple[bool, bool]:
    """Copy MathJax and the widget renderer (with require.js) into ``static`` from beside the executed notebooks
    (else from what ``./reproduce.sh`` fetched); return whether each was there."""
    shipped, fetched = results / "notebooks", webdeps_dir()
    mathjax = next((p for p in (shipped / "mathjax", fetched / "mathjax") if (p / "MathJax.js").exists()), None)
    if mathjax:
        shutil.copytree(mathjax, static / "mathjax")
    dists = (shipped / WIDGETS / "html-manager" / "dist", fetched / "html-manager" / "dist")
    dist = next((d for d in dists if (d / "embed-amd.js").exists()), None)
    requires = [*([dist / "require.js"] if dist else []), fetched / "requirejs" / "require.js"]
    require = next((p for p in requires if p.exists()), None)
    if dist and require:
        shutil.copy2(dist / "embed-amd.js", static / "embed-amd.js")
        shutil.copy2(require, static / "require.js")
    return mathjax is not None, bool(dist and require)


def config(static: Path, mathjax: bool, widgets: bool) -> dict[str, object]:
    """Sphinx's configuration of the book (what a ``conf.py`` would hold)."""
    conf: dict[str, object] = {
        "project": "tomlib",
        "extensions": ["myst_nb"],
        "html_theme": "sphinx_book_theme",
        "html_title": "tomlib: the book of the series",
        "html_theme_options": {"home_page_in_toc": True, "use_download_button": False, "show_navbar_depth": 1},
        "html_static_path": [str(static)],
        "html_css_files": ["tomlib-book.css"],
        "html_copy_source": False,  # the notebooks are in results/notebooks already
        "html_show_sourcelink": False,
        "html_show_search_summary": False,  # the summaries are fetch()ed from the pages, which file:// refuses
        "exclude_patterns": list(INCLUDED),
        "nb_execution_mode": "off",  # executed by the series; never again here
        "nb_merge_streams": True,
        "myst_enable_extensions": ["dollarmath", "amsmath"],
        "myst_heading_anchors": 3,
        "suppress_warnings": ["myst.header", "mystnb.unknown_mime_type"],
    }
    if mathjax:  # MathJax 2.7.7 as the exported notebooks use it, from _static/ (Sphinx's default is a CDN)
        conf["mathjax_path"] = MATHJAX
        conf["myst_update_mathjax"] = False  # its settings are MathJax 3's; these are 2's
        conf["mathjax2_config"] = {  # only what MyST marked as math (and outputs), as the Sphinx of MathJax 2 did
            "tex2jax": {
                "inlineMath": [["\\(", "\\)"]],
                "displayMath": [["\\[", "\\]"]],
                "processEscapes": True,
                "ignoreClass": "tex2jax_ignore|mathjax_ignore|document",
                "processClass": "tex2jax_process|mathjax_process|math|output_area",
            },
        }
    if widgets:  # myst-nb's default loads both from CDNs
        conf["nb_ipywidgets_js"] = {"require.js": {}, "embed-amd.js": {}}
    return conf


def _finish(out: Path, results: Path, staged: Path) -> None:
    """What Sphinx does not do: each chapter's plain-HTML fallback after its explorer widget (as the exported
    notebooks have it), the renderer's icon fonts where it asks for them, beside the chapters, and none of the theme's
    files that no page reads (source maps, translation catalogs)."""
    import nbformat

    from tomlib.widgets import with_fallbacks

    for page in sorted((out / "notebooks").glob("*.html")):
        nb = staged / "notebooks" / f"{page.stem}.ipynb"
        if nb.exists():
            page.write_text(with_fallbacks(page.read_text(encoding="utf-8"), nbformat.read(nb, as_version=4)))
    for source_map in (out / "_static").rglob("*.map"):  # for debuggers: 3 MB no page asks for
        source_map.unlink()
    shutil.rmtree(out / "_static" / "locales", ignore_errors=True)  # the theme's catalogs, read at build time
    fonts = results / "notebooks" / WIDGETS
    for font in [*fonts.rglob("*.woff2"), *fonts.rglob("*.woff")] if fonts.is_dir() else []:
        into = out / "notebooks" / WIDGETS / font.relative_to(fonts)
        into.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(font, into)


def build_book(results: str | Path | None = None, out: str | Path | None = None) -> tuple[Path, list[str]]:
    """Build the book from the executed series in ``results`` (default ``results/``) into ``out`` (default
    ``results/book``), replacing what was there; return its landing page and Sphinx's warnings."""
    res = results_dir(results)
    chapters(res)  # the one line that names the fix, before anything is imported
    try:
        from sphinx.application import Sphinx
    except ModuleNotFoundError:
        raise UsageError(
            "The book's tools (Sphinx, MyST-NB) are not installed in this environment: ./reproduce.sh docs installs "
            "them (the docs extra) and builds the book."
        ) from None
    target = Path(out).resolve() if out else results_folder(res) / "book"
    warnings = io.StringIO()
    with tempfile.TemporaryDirectory(prefix="tomlib-book-") as tmp:
        src, static, part = Path(tmp) / "src", Path(tmp) / "static", target.with_name(f".{target.name}.part")
        stage(res, src)
        static.mkdir()
        (static / "tomlib-book.css").write_text(CSS)
        has_mathjax, has_widgets = _scripts(res, static)
        shutil.rmtree(part, ignore_errors=True)
        app = Sphinx(
            str(src),
            None,
            str(part),
            str(Path(tmp) / "doctrees"),
            "html",
            confoverrides=config(static, has_mathjax, has_widgets),
            status=None,
            warning=warnings,
            freshenv=True,
        )
        app.build()
        _finish(part, res, src)
    shutil.rmtree(target, ignore_errors=True)
    part.rename(target)
    lost = [name for name, has in (("MathJax", has_mathjax), ("the widget renderer", has_widgets)) if not has]
    said = re.sub(r"\x1b\[[0-9;]*m", "", warnings.getvalue()).replace(f"{src}/", "")
    notes = [line for line in said.splitlines() if line.strip()]
    if lost:
        notes.append(
            f"{' and '.join(lost)} not found beside the executed notebooks: the book loads them from the internet. "
            "./reproduce.sh fetches them once (from the npm registry); run the series again, then ./reproduce.sh docs."
        )
    return target / "index.html", notes


def size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def main(results: str | None = None, out: str | None = None) -> int:
    """``tomlib book``: build, then say where the book is, how big, and how long it took."""
    started = time.monotonic()
    index, notes = build_book(results, out)
    for line in notes:
        print(f"book: {line}")
    took = time.monotonic() - started
    print(f"book: {index} ({size_mb(index.parent):.1f} MB, built in {took:.0f} s; opens from disk)")
    return 0
