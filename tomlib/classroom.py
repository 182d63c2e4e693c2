"""A class's working copy of the notebooks (``./reproduce.sh lab``): students edit and save copies, so JupyterLab's
autosave never writes outputs into the committed notebooks (whose hash the runner stamps), and they see
``results/`` beside them. JupyterLab's news and update pop-ups are switched off for the class."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from tomlib.paths import project_root, results_dir

FOLDER = "classroom"
# JupyterLab reads default overrides for every user from this file in its application settings folder
LAB_OVERRIDES = {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}}


def prepare(folder: str | os.PathLike[str] | None = None) -> Path:
    """Copy the notebooks and the class plan into ``folder`` (default ``classroom/``) where a copy is missing, never
    over a student's saved work; link ``results`` beside them; switch off JupyterLab's news. Returns the folder."""
    work = Path(folder) if folder else project_root() / FOLDER
    work.mkdir(parents=True, exist_ok=True)
    source = project_root() / "notebooks"
    copied = []
    for nb in sorted([*source.glob("*.ipynb"), source / "README.md"]):
        target = work / nb.name
        if nb.exists() and not target.exists():
            shutil.copyfile(nb, target)
            copied.append(nb.name)
    link = work / "results"
    results = results_dir()
    results.mkdir(parents=True, exist_ok=True)
    if not link.exists() and not link.is_symlink():
        link.symlink_to(results, target_is_directory=True)
    quiet_lab()
    kept = len(list(work.glob("*.ipynb"))) - sum(c.endswith(".ipynb") for c in copied)
    print(f"{work}: {len(copied)} file(s) copied, {kept} notebook(s) kept as the class left them; results/ linked")
    return work


def quiet_lab(prefix: str | os.PathLike[str] | None = None) -> Path:
    """Merge :data:`LAB_OVERRIDES` into ``<prefix>/share/jupyter/lab/settings/overrides.json``."""
    path = Path(prefix or sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    current = json.loads(path.read_text()) if path.exists() else {}
    for plugin, settings in LAB_OVERRIDES.items():
        current.setdefault(plugin, {}).update(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(current, indent=1))
    return path
