"""``python -m tomlib runs list | prune``: what the run logs under ``results/runs/`` hold and cost, and removing
the ones no executed notebook uses any more (every run adds a folder; a rerun leaves the old one behind).

An interrupted run leaves ``.NN_<name>.attempt-<PID>.ipynb`` beside the executed notebooks (the runner writes there,
then moves it into place). ``run``, ``sweep`` and ``runs prune`` remove the ones whose PID is not a living process
(:func:`stale_attempts`), and ``runs prune`` keeps a run log without an index while the PID of its ``run_start``
lives. Both checks see only this machine's processes: do not clean a results folder a remote cluster is writing
into.
"""

from __future__ import annotations

import calendar
import csv
import json
import os
import re
import shutil
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from tomlib.paths import results_dir
from tomlib.trace._index import (
    INDEX_NAME,
    LOG_NAME,
    STREAM_ERRORS,
    compress_log,
    index_doc,
    log_in,
    open_log,
    parse_line,
)

ATTEMPT = re.compile(r"\..+\.attempt-(\d+)\.ipynb")  # a notebook being executed by worker PID (runner/_cluster.py)


@dataclass
class RunInfo:
    """One run folder: its id, experiment, when it was last written, its size and (once closed) its counts."""

    run_id: str
    experiment: str
    modified: float
    bytes: int
    events: int | None  # None: no index yet (a live or killed run)
    episodes: int | None
    path: Path


def list_runs(results: str | os.PathLike[str] | None = None) -> list[RunInfo]:
    """Every run under ``results/runs``, oldest first, read from its saved index (never from the log itself)."""
    root = results_dir(results) / "runs"
    out = []
    for folder in sorted(root.glob("*")) if root.exists() else []:
        log = log_in(folder)
        if log is None:
            continue
        size = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
        events = episodes = None
        experiment = folder.name.rsplit("-", 3)[0]
        index = folder / INDEX_NAME
        if index.exists():
            try:
                doc = index_doc(index.read_bytes())
                experiment = doc.get("experiment") or experiment
                events, episodes = int(doc.get("events", 0)), len(doc.get("episodes", []))
            except (orjson.JSONDecodeError, ValueError, TypeError, *STREAM_ERRORS):
                pass
        out.append(RunInfo(folder.name, experiment, log.stat().st_mtime, size, events, episodes, folder))
    return sorted(out, key=lambda r: r.modified)


def run_facts(run: RunInfo) -> tuple[dict[str, Any], list[str]]:
    """A run's ``run_start`` payload (its source, model, episodes... as the experiment gave them) and its conditions,
    from its saved index; a run without one (live or killed) gives its first line's payload and no conditions."""
    try:
        doc = index_doc((run.path / INDEX_NAME).read_bytes())
        return dict(doc.get("run_start") or {}), list(dict.fromkeys(str(e[0]) for e in doc.get("episodes", [])))
    except (*STREAM_ERRORS, orjson.JSONDecodeError, ValueError, TypeError, IndexError, KeyError):
        pass
    log = log_in(run.path)
    first: dict[str, Any] = {}
    if log is not None:
        try:
            with open_log(log) as fh:
                first = parse_line(fh.readline()) or {}
        except STREAM_ERRORS:
            pass
    start = first.get("payload") if first.get("kind") == "run_start" else None
    return (dict(start) if isinstance(start, dict) else {}), []


def run_source(start: dict[str, Any]) -> str:
    """Where a run's rows come from, as its ``run_start`` says: its ``source``, else its model(s), else ``-``."""
    if start.get("source"):
        return str(start["source"])
    models = start.get("models") or ([start["model"]] if start.get("model") else [])
    return f"model {','.join(map(str, models))}" if models else "-"


def run_reading(start: dict[str, Any]) -> str:
    """Which of our readings a run played under, as its ``run_start`` says (``reading``: ``default``, or what it
    departs from, ``prefer=none``). A log written before runs said so: the stand-in's variant, else ``other`` for a
    run that logged no steps (only the runs of a table under another reading do), else ``default``."""
    said = start.get("reading")
    if isinstance(said, str) and said:
        return said
    variant = start.get("variant")
    if isinstance(variant, str) and variant:
        return "default" if "(default)" in variant else variant
    return "other" if start.get("detail_episodes") == 0 else "default"


def _run_time(run: RunInfo) -> float:
    """When the run started: the UTC stamp in its id (``<experiment>-YYYYmmdd-HHMMSS-xxxx``), else its mtime."""
    try:
        day, clock = run.run_id.rsplit("-", 3)[1:3]
        return calendar.timegm(time.strptime(day + clock, "%Y%m%d%H%M%S"))
    except (ValueError, IndexError):
        return run.modified


def _windows(root: Path) -> list[tuple[float, float]]:
    """When each executed notebook of ``root`` ran (its stamp, or a sweep's index rows): runs started then are in
    use by a page or a table there."""
    out = []
    for stamp in root.glob("notebooks/*.stamp.json"):
        try:
            doc = json.loads(stamp.read_text())
        except (OSError, ValueError):
            continue
        end = float(doc.get("finished") or stamp.stat().st_mtime)
        out.append((float(doc.get("started") or end - float(doc.get("seconds") or 0)), end))
    for index in root.glob("sweeps/*/index.csv"):
        with open(index, newline="") as fh:
            for row in csv.DictReader(fh):
                if row.get("started") and row.get("finished"):
                    out.append(
                        (
                            datetime.fromisoformat(row["started"]).timestamp(),
                            datetime.fromisoformat(row["finished"]).timestamp(),
                        )
                    )
    return out


def pid_alive(pid: int) -> bool:
    """Whether a process with this PID runs on this machine (one of another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _writing(run: RunInfo) -> bool:
    """Whether a run without an index (never closed) is still being written: the process its ``run_start`` names
    is alive. A killed run's process is gone."""
    log = run.path / LOG_NAME
    try:
        with open(log, "rb") as fh:
            first = parse_line(fh.readline())
    except OSError:
        return False
    pid = ((first or {}).get("payload") or {}).get("pid")
    return isinstance(pid, int) and pid_alive(pid)


def in_use(runs: list[RunInfo], results: str | os.PathLike[str] | None = None) -> set[str]:
    """The runs that started while a notebook whose executed copy is in ``results`` ran (1 s of slack: run ids
    hold whole seconds), and the runs still being written. A rerun's stamp replaces the old one, so the runs of the
    run before it fall out of use; a killed run, which no stamp covers, is unused."""
    windows = _windows(results_dir(results))
    return {
        r.run_id
        for r in runs
        if any(a - 1 <= _run_time(r) <= b + 1 for a, b in windows) or (r.events is None and _writing(r))
    }


def stale_attempts(results: str | os.PathLike[str] | None = None) -> list[Path]:
    """Notebooks left half-executed (``.<name>.attempt-<PID>.ipynb``) in the notebook folders of ``results`` and
    its sweeps by a worker that has died: an interrupted run. One whose worker is alive is another run's work in
    progress and is not listed."""
    root = results_dir(results)
    folders = [root / "notebooks", *root.glob("sweeps/*/notebooks")]
    return sorted(
        p
        for folder in folders
        for p in (folder.glob(".*.attempt-*.ipynb") if folder.is_dir() else [])
        if (m := ATTEMPT.fullmatch(p.name)) and not pid_alive(int(m[1]))
    )


def remove_stale_attempts(results: str | os.PathLike[str] | None = None) -> list[Path]:
    """Delete :func:`stale_attempts`; returns what was removed."""
    gone = stale_attempts(results)
    for path in gone:
        path.unlink(missing_ok=True)
    return gone


def runs_to_prune(
    runs: list[RunInfo],
    used: set[str],
    *,
    older_than_days: float | None = None,
    experiment: str | None = None,
) -> list[RunInfo]:
    """The runs a prune removes: those no executed notebook in the results folder uses (superseded by a rerun),
    optionally only those last written more than ``older_than_days`` ago, or of one ``experiment``."""
    cutoff = time.time() - older_than_days * 86400 if older_than_days is not None else None
    return [
        r
        for r in runs
        if r.run_id not in used
        and (experiment is None or r.experiment == experiment)
        and (cutoff is None or r.modified < cutoff)
    ]


def prune_runs(runs: list[RunInfo]) -> int:
    """Delete the folders of ``runs``; returns the bytes freed."""
    freed = 0
    for r in runs:
        freed += r.bytes
        shutil.rmtree(r.path, ignore_errors=True)
    return freed


def compress_finished(folders: list[Path]) -> int:
    """Compress the logs in these run folders that have closed (their index was saved after the last write); a run
    still being written, or killed, stays plain. Returns the bytes saved."""
    saved = 0
    for folder in dict.fromkeys(folders):
        plain, index = folder / LOG_NAME, folder / INDEX_NAME
        if not plain.exists() or not index.exists() or index.stat().st_mtime < plain.stat().st_mtime:
            continue  # gone, never closed, or written after its index (still open, or reopened by a rerun)
        before = plain.stat().st_size
        saved += before - compress_log(plain).stat().st_size
    return saved
