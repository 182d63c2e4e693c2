"""Reading run logs back as pandas frames (inspect_ai's "logs are data")."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from tomlib.paths import results_dir
from tomlib.trace._index import (
    STREAM_ERRORS,
    DamagedLog,
    damaged_log,
    log_in,
    open_log,
    parse_line,
    read_index,
    read_lines,
)

COLUMNS = ["run_id", "experiment", "condition", "episode", "step", "agent", "kind", "time", "payload"]


def run_paths(results: str | os.PathLike[str] | None = None, run_ids: Iterable[str] | None = None) -> list[Path]:
    """Event files under ``<results>/runs`` (plain, or compressed once finished), oldest run first."""
    root = results_dir(results) / "runs"
    folders = [root / r for r in run_ids] if run_ids is not None else list(root.glob("*"))
    logs = [log for folder in folders if (log := log_in(folder)) is not None]
    return logs if run_ids is not None else sorted(logs, key=lambda p: p.stat().st_mtime)


def iter_events(
    paths: Iterable[Path],
    *,
    experiment: str | None = None,
    kinds: Iterable[str] | None = None,
    skipped: list[str] | None = None,
    damaged: list[DamagedLog] | None = None,
) -> Iterator[dict[str, Any]]:
    """Events from the given files, filtered while reading; unreadable lines (a killed write, even one cut
    inside a multi-byte character) are skipped. A file that cannot be read to its end (a compressed log cut short)
    gives the events before the damage and is noted in ``damaged`` (raised when ``damaged`` is None)."""
    wanted = set(kinds) if kinds is not None else None
    for path in paths:
        try:
            with open_log(path) as fh:
                for lineno, line in enumerate(fh, 1):
                    if not line.strip():
                        continue
                    ev = parse_line(line)
                    if ev is None:
                        if skipped is not None:
                            skipped.append(f"{path}:{lineno}")
                        continue
                    if experiment is not None and ev.get("experiment") != experiment:
                        continue
                    if wanted is not None and ev.get("kind") not in wanted:
                        continue
                    yield ev
        except STREAM_ERRORS as exc:
            if damaged is None:
                raise damaged_log(path, exc) from None
            damaged.append(damaged_log(path, exc))


def load_runs(
    results: str | os.PathLike[str] | None = None,
    *,
    run_ids: Iterable[str] | None = None,
    experiment: str | None = None,
    kinds: Iterable[str] | None = None,
    episodes: Iterable[tuple[str, int]] | None = None,
) -> pd.DataFrame:
    """All matching events as a tidy frame: one row per event, ``payload`` kept as a dict. ``episodes`` (pairs of
    condition and episode) reads only those episodes' lines, through each run's episode index. A damaged run log
    is skipped from where it cannot be read (through the index: whole) with a warning naming it and the fix.

    Args:
        results: the results folder whose ``runs/`` are read; None: the default.
        run_ids: only these runs.
        experiment: only runs of this experiment.
        kinds: only events of these kinds.
        episodes: only these (condition, episode) pairs.
    """
    skipped: list[str] = []
    damaged: list[DamagedLog] = []
    paths = run_paths(results, run_ids)
    if episodes is None:
        rows = list(iter_events(paths, experiment=experiment, kinds=kinds, skipped=skipped, damaged=damaged))
    else:
        wanted_eps = {(c, int(e)) for c, e in episodes}
        wanted = set(kinds) if kinds is not None else None
        rows = []
        for path in paths:
            try:
                idx = read_index(path)
                if experiment is not None and idx.experiment != experiment:
                    continue
                spans = sorted(
                    (o, n)
                    for key in wanted_eps
                    if key in idx.episodes
                    for o, n in zip(idx.episodes[key].offsets, idx.episodes[key].lengths, strict=True)
                )
                lines = read_lines(path, [o for o, _ in spans], [n for _, n in spans], idx.blocks)
            except DamagedLog as exc:  # one run's damage does not hide the others
                damaged.append(exc)
                continue
            rows += [ev for ev in lines if wanted is None or ev.get("kind") in wanted]
    df = events_frame(rows)
    for exc in damaged:
        warnings.warn(str(exc), stacklevel=2)
    if skipped:
        warnings.warn(
            f"skipped {len(skipped)} unreadable log line(s) (a run killed mid-write): {', '.join(skipped[:3])}",
            stacklevel=2,
        )
    df.attrs["skipped_lines"] = skipped
    return df


def events_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Parsed events as the tidy frame of :func:`load_runs`."""
    df = pd.DataFrame(rows, columns=COLUMNS)
    df["episode"] = df["episode"].astype("Int64")
    df["step"] = df["step"].astype("Int64")
    df["time"] = pd.to_datetime(df["time"], unit="s", utc=True)
    return df


def payload_frame(events: pd.DataFrame, kind: str | None = None) -> pd.DataFrame:
    """Events (optionally of one kind) with their payload fields as columns.

    Args:
        events: a frame from :func:`load_runs`.
        kind: only events of this kind; None: all.
    """
    sub = events if kind is None else events[events["kind"] == kind]
    flat = pd.json_normalize(sub["payload"].tolist(), max_level=0)
    flat.index = sub.index
    return pd.concat([sub.drop(columns=["payload"]), flat], axis=1)
