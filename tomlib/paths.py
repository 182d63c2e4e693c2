"""Where tomlib reads its data and writes its results.

Every location can be overridden by an environment variable so that tests, sweeps and notebooks opened
from any working directory agree on one place.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

_MARKER = "pyproject.toml"


def project_root() -> Path:
    """The checkout that holds ``pyproject.toml`` and ``tomlib/`` (``TOMLIB_ROOT`` overrides)."""
    env = os.environ.get("TOMLIB_ROOT")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve().parent.parent
    if (here / _MARKER).exists() and (here / "tomlib").is_dir():
        return here
    for parent in [Path.cwd(), *Path.cwd().parents]:
        if (parent / _MARKER).exists() and (parent / "tomlib").is_dir():
            return parent
    return Path.cwd()


def data_dir() -> Path:
    """Committed inputs: paper tables, datasets, layouts, transcripts."""
    return project_root() / "data"


def configs_dir() -> Path:
    """Model and profile configuration (``TOMLIB_CONFIGS`` overrides)."""
    env = os.environ.get("TOMLIB_CONFIGS")
    return Path(env).resolve() if env else project_root() / "configs"


def results_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """Generated outputs; ``override`` (a notebook parameter) beats ``TOMLIB_RESULTS`` beats ``results/``."""
    if override:
        return Path(override).resolve()
    env = os.environ.get("TOMLIB_RESULTS")
    return Path(env).resolve() if env else project_root() / "results"


def transcripts_dir() -> Path:
    """Recorded model responses that make the default profile replay offline."""
    env = os.environ.get("TOMLIB_TRANSCRIPTS")
    return Path(env).resolve() if env else data_dir() / "transcripts"


def store_path() -> Path:
    """The local response store (SQLite); ``TOMLIB_STORE`` overrides."""
    env = os.environ.get("TOMLIB_STORE")
    return Path(env).resolve() if env else project_root() / ".tomlib" / "responses.sqlite"


def webdeps_dir() -> Path:
    """require.js and the widget renderer, fetched by ``./reproduce.sh`` (``TOMLIB_WEBDEPS`` overrides)."""
    env = os.environ.get("TOMLIB_WEBDEPS")
    return Path(env).resolve() if env else project_root() / ".tomlib" / "webdeps"


_BOUNDARY = r"(?=[/\\\"'\s<>)\],;:&]|$)"  # a whole path (or its prefix up to a separator), not a longer name


def portable(text: str, extra: dict[str, str] | None = None) -> str:
    """``text`` with this machine's absolute paths written as they read anywhere: the results folder as
    ``results``, the checkout as ``.``, the home folder as ``~`` (and ``extra``: path → name). For what leaves the
    machine: exported pages, executed notebooks, the report and the stamps."""
    pairs = {str(results_dir()): "results", str(project_root()): ".", str(Path.home()): "~", **(extra or {})}
    anchors: dict[str, str] = {}
    for path, name in pairs.items():
        for form in {path, os.path.realpath(path)}:
            if len(form) > 1 and form.startswith("/"):
                anchors.setdefault(form, name)
    for path in sorted(anchors, key=len, reverse=True):  # the longest first: results inside the checkout
        if path in text:
            text = re.sub(re.escape(path) + _BOUNDARY, anchors[path].replace("\\", r"\\"), text)
    return text


def portable_file(path: str | os.PathLike[str], extra: dict[str, str] | None = None) -> None:
    """:func:`portable` on a text file, in place."""
    p = Path(path)
    text = p.read_text(encoding="utf-8", errors="surrogateescape")
    clean = portable(text, extra)
    if clean != text:
        p.write_text(clean, encoding="utf-8", errors="surrogateescape")
