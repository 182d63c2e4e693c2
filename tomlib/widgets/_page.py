"""``python -m tomlib view RUN``: one run's explorer as a self-contained page that opens without Jupyter or the
internet (the widget state is embedded; the renderer and its icon fonts are copied beside the page)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tomlib.errors import UsageError
from tomlib.paths import results_dir, webdeps_dir
from tomlib.redact import redact_file
from tomlib.trace._index import log_in

STATIC = "_static"
_FONTS = ("*.woff2", "*.woff", "*.ttf", "*.eot", "*.svg")


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
    if not target.exists() or target.stat().st_size != (dist / script).stat().st_size:
        static.mkdir(parents=True, exist_ok=True)
        for pattern in _FONTS:
            for font in dist.glob(pattern):
                shutil.copyfile(font, static / font.name)
        shutil.copyfile(dist / script, target)  # last: its presence means the folder is complete
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

    from tomlib.widgets._explorer import explore

    run_id = find_run(run, results)
    path = Path(out) if out else results_dir(results) / "views" / f"{run_id}.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    box = explore([run_id], results=str(results_dir(results)), prerender=episodes, condition=condition)
    box.explorer.reload_button.layout.display = "none"  # type: ignore[attr-defined]  # a page has no kernel
    url = copy_renderer(path.parent)
    embed_minimal_html(str(path), views=[box], title=f"tomlib run {run_id}", requirejs=False, embed_url=url, cors=False)
    redact_file(path)
    return path
