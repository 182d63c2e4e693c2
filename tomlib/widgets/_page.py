"""``python -m tomlib view RUN``: one run's explorer as a self-contained page that opens without Jupyter or the
internet (the widget state is embedded; the renderer and its icon fonts are copied beside the page)."""

from __future__ import annotations

import html
import io
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from tomlib.errors import UsageError
from tomlib.paths import portable, results_dir, webdeps_dir, write_atomic
from tomlib.redact import redact_text
from tomlib.trace import log_in

STATIC = "_static"
_FONTS = ("*.woff2", "*.woff")  # what browsers take from the renderer's @font-face list (not its eot/ttf/svg)


def find_run(run: str, results: str | os.PathLike[str] | None = None) -> str:
    """A run id, or the newest run whose id starts with ``run`` (an experiment name such as ``adaptive_tom.table1``)."""
    runs = results_dir(results) / "runs"
    if log_in(runs / run) is not None:
        return run
    hits = sorted(p.name for p in runs.glob(f"{run}*") if log_in(p) is not None) if runs.exists() else []
    if not hits:
        have = sorted({p.name.rsplit("-", 3)[0] for p in runs.glob("*")}) if runs.exists() else []
        raise UsageError(
            f"No run '{run}' in {runs}. Give a run id (a folder there) or an experiment name"
            + (f": {', '.join(have)}." if have else "; none has run yet (./reproduce.sh).")
        )
    return hits[-1]  # ids sort by their UTC timestamp


def copy_renderer(folder: Path, script: str = "embed.js", sub: str = STATIC) -> str:
    """Copy the widget renderer ``script`` and its icon fonts into ``folder/sub`` once; return its URL relative to
    ``folder``. The renderer comes from what ``./reproduce.sh`` fetched (``TOMLIB_WEBDEPS``)."""
    dist = webdeps_dir() / "html-manager" / "dist"
    if not (dist / script).exists():
        raise UsageError(
            f"The widget renderer is not in {dist}: run ./reproduce.sh once (it fetches it from the npm registry), "
            "or set TOMLIB_WEBDEPS to a folder holding html-manager/dist/."
        )
    static = folder / sub
    target = static / script
    try:  # a link is never taken for the copy: it could name a script of someone else's choosing
        held = os.lstat(target)
        fresh = stat.S_ISREG(held.st_mode) and held.st_size == (dist / script).stat().st_size
    except FileNotFoundError:
        fresh = False
    if not fresh:
        static.mkdir(parents=True, exist_ok=True)
        for pattern in _FONTS:  # through write_atomic: a link planted in the results folder is replaced
            for font in dist.glob(pattern):
                write_atomic(static / font.name, font.read_bytes())
        write_atomic(target, (dist / script).read_bytes())  # last: its presence means the folder is complete
    return f"{sub}/{script}"


def write_page(
    run: str,
    *,
    results: str | os.PathLike[str] | None = None,
    out: str | os.PathLike[str] | None = None,
    condition: str | None = None,
    episodes: int = 3,
) -> Path:
    """Write ``results/views/<run_id>.html``: the summary and the explorer of one run, opened on ``condition`` (else
    its first), with the first ``episodes`` episodes of that condition drawn and playable in the page."""
    from ipywidgets.embed import embed_minimal_html

    from tomlib.widgets._explorer import STATIC_PAGE_CSS, explore

    run_id = find_run(run, results)
    path = Path(out) if out else results_dir(results) / "views" / f"{run_id}.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    box = explore([run_id], results=str(results_dir(results)), prerender=episodes, condition=condition)
    box.explorer.reload_button.layout.display = "none"  # type: ignore[attr-defined]  # a page has no kernel
    url = copy_renderer(path.parent)
    page = io.StringIO()
    title = html.escape(f"tomlib run {run_id}")  # a run id is a folder's name: ipywidgets puts the title in as is
    embed_minimal_html(page, views=[box], title=title, requirejs=False, embed_url=url, cors=False)
    text = page.getvalue().replace("</head>", STATIC_PAGE_CSS + "</head>", 1)  # no kernel: no controls that need one
    write_atomic(path, portable(redact_text(text)))  # a link planted at the page's path is replaced
    return path


_VIEW = re.compile(r'(<script type="application/vnd\.jupyter\.widget-view\+json">)(.*?)(</script>)', re.S)


def with_fallbacks(page: str, nb: Any) -> str:
    """Put each explorer's plain-HTML step (the ``text/html`` its display data carries) after its widget in an
    exported page. The renderer draws a widget into a ``.widget-subarea`` just before the view's script, so one CSS
    rule hides the fallback once the widget is drawn and leaves it on screen when the scripts never load."""
    from tomlib.widgets._explorer import FALLBACK

    fallback: dict[str, str] = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            view, text = data.get("application/vnd.jupyter.widget-view+json"), data.get("text/html", "")
            if view and FALLBACK in text:
                fallback[view["model_id"]] = text if isinstance(text, str) else "".join(text)
    if not fallback:
        return page

    def add(m: re.Match[str]) -> str:
        try:
            model = json.loads(m.group(2))["model_id"]
        except (ValueError, KeyError, TypeError):
            return m.group(0)
        return m.group(0) + fallback.get(model, "")

    css = f"<style>.widget-subarea:not(:empty) ~ .{FALLBACK}{{display:none}}</style>"
    return _VIEW.sub(add, page).replace("</head>", css + "</head>", 1)
