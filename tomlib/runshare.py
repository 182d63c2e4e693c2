"""What the kernels of one series run leave each other: pickled files in a folder the runner makes for the run and
deletes when it ends (:data:`ENV_SHARED`). Each kind of thing has its own part of it (``played``: formal conditions,
:mod:`tomlib.experiments.adaptive_tom._played`; ``claims``: claims judged, :mod:`tomlib.claims._memo`).

What is read from it is unpickled, so the folder must be one no other user can change
(:func:`tomlib.paths.private_dir`): another user who could write there would decide what runs here. The folder is
checked again at every use, not once per process (a folder swapped in after a first check is refused), and a file is
opened without following links and read only when this user owns it and no one else can write it. Unset, nothing is
shared: each process keeps its own.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from pathlib import Path

from tomlib.paths import private_dir, read_own

ENV_SHARED = "TOMLIB_SHARED"
"""The run's shared folder, set by the runner for its kernels."""


def folder(part: str) -> Path | None:
    """``part`` of :data:`ENV_SHARED` as a folder no other user can change (made when missing); None when unset. A
    folder that is not private raises a one-line error naming the fix."""
    root = os.environ.get(ENV_SHARED)
    return private_dir(private_dir(root) / part) if root else None  # at every use: a few lstat calls


def files(part: str, pattern: str) -> list[Path]:
    """The files of ``part`` whose names match ``pattern``, sorted by name (none when nothing is shared)."""
    where = folder(part)
    return [] if where is None else sorted(where.glob(pattern))


def load(path: Path) -> object | None:
    """The object a kernel of this run left at ``path``; None when it cannot be read (then the work is done here).
    The folder holding it is checked again first (:func:`tomlib.paths.private_dir`, which raises when it is no longer
    private), and a file that is a link, or that another user owns or can write, is not read."""
    private_dir(path.parent)
    raw = read_own(path)
    if raw is None:
        return None
    try:
        return pickle.loads(raw)  # written by this run's kernels, in a folder only this user can write
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError, TypeError):
        return None


def put(part: str, name: str, obj: object) -> None:
    """Leave ``obj`` as ``name`` in ``part`` for the run's other kernels, atomically (a reader sees all of it or none).
    Nothing happens when nothing is shared, or when it cannot be written (a full disk): this process has it all the
    same."""
    where = folder(part)
    if where is None:
        return
    try:
        fd, tmp = tempfile.mkstemp(dir=where, prefix=".part-")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(obj, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, where / name)
    except Exception:
        Path(tmp).unlink(missing_ok=True)
