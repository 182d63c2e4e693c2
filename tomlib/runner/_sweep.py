"""Parameter sweeps: a papermill batch over the cartesian product of a grid, resumable."""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tomlib.errors import ConfigFileError, UsageError, closest, load_yaml
from tomlib.llm import Budget
from tomlib.paths import write_atomic
from tomlib.redact import redact_text
from tomlib.runner._execute import (
    budget_env,
    check_writable,
    declared_parameters,
    find_notebooks,
    inputs_hash,
    parameters_for,
    results_for_run,
    sandbox_env,
)
from tomlib.runner._params import check_values
from tomlib.runner._profiles import Profile, load_profile
from tomlib.runner._progress import Progress
from tomlib.trace import remove_stale_attempts

INDEX_TAIL = [
    "status",  # ok: the notebook ran to its end; failed: it stopped at a cell (see error); queued: not run yet
    "tables",  # the tables the run wrote, even when a later cell failed
    "seconds",
    "started",
    "finished",
    "host",
    "inputs",  # hash of the notebook, tomlib/, configs/, data/ and the parameters: a changed hash reruns
    "output",
    "results_dir",
    "error",
]


def load_grid(path: str | os.PathLike[str]) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    """``parameters:`` (name → list of values, crossed) and optional ``fixed:`` (name → value)."""
    shape = "`parameters: {name: [values, ...]}` and optionally `fixed: {name: value}`"
    raw = load_yaml(path, "grid")
    if not isinstance(raw, dict) or not raw:
        what = "empty" if not raw else f"a {type(raw).__name__} at its top level"
        raise ConfigFileError(f"Grid {path} is {what}; it needs {shape}.")
    grid = raw.get("parameters", {k: v for k, v in raw.items() if k != "fixed"})
    fixed = raw.get("fixed") or {}
    if not isinstance(grid, dict) or not grid or not isinstance(fixed, dict):
        raise ConfigFileError(f"Grid {path}: expected {shape}.")
    grid = {k: v if isinstance(v, list) else [v] for k, v in grid.items()}
    empty = sorted(k for k, v in grid.items() if not v)
    if empty:
        raise ConfigFileError(
            f"Grid {path}: {', '.join(empty)} has an empty list of values, so the sweep would run nothing; give "
            "at least one value (or move a constant under `fixed:`)."
        )
    return grid, dict(fixed)


def expand_grid(grid: dict[str, list[Any]]) -> list[dict[str, Any]]:
    names = list(grid)
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*(grid[n] for n in names))]


READABLE_MAX = 60  # characters of a run id that spell out its grid values; the hash keeps ids unique
_UNSAFE = re.compile(r"[^A-Za-z0-9._=,+-]+")


def _digest(params: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()[:10]


def readable(point: dict[str, Any]) -> str:
    """A grid point as a folder-name fragment: ``tom_order=1,seed=13``, with anything but letters, digits and
    ``._=,+-`` replaced by ``_`` and cut at :data:`READABLE_MAX` characters."""
    text = ",".join(f"{k}={'' if v is None else v}" for k, v in point.items())
    return _UNSAFE.sub("_", text)[:READABLE_MAX].strip("_.")


def run_id_for(stem: str, params: dict[str, Any], point: dict[str, Any] | None = None) -> str:
    """``<stem>-<grid values>-<hash of every parameter>``: readable, unique, and safe as a file name."""
    label = readable(point if point is not None else params)
    return f"{stem}-{label}-{_digest(params)}" if label else f"{stem}-{_digest(params)}"


def legacy_run_id(stem: str, params: dict[str, Any]) -> str:
    """The id sweeps gave a run before ids spelled out the grid values (the hash alone)."""
    return f"{stem}-{_digest(params)}"


def read_sweep_results(path: str | os.PathLike[str]) -> Any:
    """A sweep's ``results.csv`` (or its folder) as a DataFrame in which a parameter that was the empty string
    (``model: ""``) reads back as ``""``, not NaN (plain ``pd.read_csv`` cannot tell the two apart); the tables' own
    columns read as pandas reads any CSV."""
    import pandas as pd

    where = Path(path)
    where = where / "results.csv" if where.is_dir() else where
    frame = pd.read_csv(where)
    params = [c for c in frame.columns if str(c).startswith("params.")]
    if params:
        frame[params] = pd.read_csv(where, usecols=params, keep_default_na=False)[params]
    return frame


def _read_index(path: Path) -> dict[str, dict[str, str]]:
    if not path.exists():
        return {}
    with open(path, newline="") as fh:
        return {row["run_id"]: row for row in csv.DictReader(fh)}


def _write_index(path: Path, rows: dict[str, dict[str, Any]], param_names: list[str]) -> None:
    buf = io.StringIO(newline="")
    writer = csv.DictWriter(buf, fieldnames=["run_id", *param_names, *INDEX_TAIL], extrasaction="ignore")
    writer.writeheader()
    for rid in sorted(rows):
        row = rows[rid]
        writer.writerow({**row, **{k: _beside(path.parent, row.get(k)) for k in ("output", "results_dir")}})
    write_atomic(path, buf.getvalue())


def _beside(folder: Path, where: Any) -> Any:
    """A path inside the sweep's folder as relative to it, so the index reads the same on another machine."""
    if not where or not Path(where).is_absolute() or not Path(where).is_relative_to(folder):
        return where
    return str(Path(where).relative_to(folder))


def _stamp(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).isoformat(timespec="seconds") if t else ""


def write_results(sweep_dir: Path, rows: dict[str, dict[str, Any]], fixed: dict[str, Any]) -> Path:
    """``results.csv``: every table every run wrote, long-form, joined with the run's grid and fixed parameters
    (``params.<name>``), its status, inputs hash and times: one file to filter and plot a sweep by."""
    import pandas as pd

    frames = []
    for rid in sorted(rows):
        row = rows[rid]
        names = [t for t in str(row.get("tables") or "").split(";") if t]
        for name in names:
            path = sweep_dir / row["results_dir"] / "tables" / f"{name}.csv"
            if not path.exists():
                continue
            table = pd.read_csv(path)
            meta = {
                "run_id": rid,
                **{f"params.{k}": v for k, v in {**fixed, **row.get("point", {})}.items()},
                "run_status": row["status"],
                "inputs": row.get("inputs", ""),
                "started": row.get("started", ""),
                "finished": row.get("finished", ""),
            }
            frames.append(table.assign(**{k: [v] * len(table) for k, v in meta.items()})[[*meta, *table.columns]])
    out = sweep_dir / "results.csv"
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["run_id"])
    write_atomic(out, table.to_csv(index=False))
    return out


def sweep(
    notebook: str,
    grid_path: str | os.PathLike[str],
    *,
    jobs: int = 1,
    profile: str | Profile = "default",
    name: str | None = None,
    results: str | os.PathLike[str] | None = None,
    progress: bool = True,
    budget: Budget | None = None,
    scheduler: str | None = None,
    ship_results: bool = False,
    sandbox: str | None = None,
    spend_to_budget: bool = False,
    dashboard: bool | None = None,
) -> Path:
    """Run ``notebook`` once per grid point as dask tasks; returns the index CSV path.

    Each run gets its own results directory; ``index.csv`` has one row per run and ``results.csv`` every table the
    runs wrote. A rerun skips runs that completed with unchanged inputs (notebook, ``tomlib/``, ``configs/``,
    ``data/``, parameters), so a killed sweep resumes where it stopped and an edit reruns what it affects. Run
    folders are named ``<stem>-<grid values>-<hash>`` (:func:`run_id_for`); a sweep made when they were
    ``<stem>-<hash>`` resumes under its old names.

    Args:
        notebook: the notebook to sweep (stem, number prefix or path).
        grid_path: YAML grid: ``parameters:`` (name → list of values, crossed) and optional ``fixed:`` (name →
            value) (:func:`load_grid`).
        jobs: runs at a time on this machine (a local cluster of that many worker processes).
        profile: the profile (or its name) whose parameters, budget and cluster the runs take.
        name: the sweep's folder under ``<results>/sweeps/``; default ``<notebook stem>-<grid file stem>``.
        results: the results folder; default a class folder's own for a notebook of a class folder, else
            ``TOMLIB_RESULTS`` or ``results/`` (:func:`results_for_run`).
        progress: show a progress bar and say how many completed runs are stale.
        budget: bound on the live calls of the whole sweep; default the profile's.
        scheduler: address of a dask cluster to run on instead; default the profile's.
        ship_results: workers send results and recorded responses back through the scheduler even when they share
            this filesystem (workers that do not share it always do).
        sandbox: how generated code runs (:data:`tomlib.sandbox.SANDBOX_MODES`); default the profile's.
        spend_to_budget: start runs whose estimate exceeds what is left of the budget; default: refused unspent.
        dashboard: serve the local cluster's dashboard on 127.0.0.1; default the profile's.
    """
    (nb,) = find_notebooks([notebook])
    prof = profile if isinstance(profile, Profile) else load_profile(profile)
    grid, fixed = load_grid(grid_path)
    _check_grid(nb, grid, fixed, grid_path)
    res = results_for_run([str(nb)], None, results)  # a class folder's notebook: the class's results
    sweep_dir = res / "sweeps" / (name or f"{nb.stem}-{Path(grid_path).stem}")
    check_writable(sweep_dir, res)
    remove_stale_attempts(res)  # half-executed notebooks of an interrupted run or sweep
    index = _Index(sweep_dir / "index.csv", dict(_read_index(sweep_dir / "index.csv")), list(grid))
    todo, stale = _queue(nb, prof, grid, fixed, index)
    index.write()
    if stale and progress:
        print(f"{stale} completed run(s) are stale (their notebook, code, configs or data changed) and rerun.")

    with sandbox_env(sandbox or prof.sandbox), budget_env(budget or prof.budget, sweep_dir, spend_to_budget) as ledger:
        where = _Where(jobs, scheduler or prof.scheduler, prof.dashboard if dashboard is None else dashboard)
        _run_queued(nb, todo, index, where, ledger=ledger, ship_results=ship_results, progress=progress)
    index.write()
    write_results(sweep_dir, index.rows, fixed)
    return index.path


def _check_grid(nb: Path, grid: dict[str, list[Any]], fixed: dict[str, Any], grid_path: str | os.PathLike[str]) -> None:
    """Every name of the grid is a parameter ``nb`` declares, and every point's values have its parameters' types,
    before any run starts."""
    declared = declared_parameters(nb)
    unknown = sorted((set(grid) | set(fixed)) - set(declared))
    if unknown:
        close = [f"'{c}' for '{u}'" for u in unknown if (c := closest(u, declared))]
        hint = f" (did you mean {'; '.join(close)}?)" if close else ""
        raise UsageError(
            f"Grid {grid_path} sets {unknown}, which {nb.stem} does not declare{hint}. It declares: {sorted(declared)}."
        )
    for point in expand_grid(grid):
        check_values(nb.stem, declared, {**fixed, **point}, f"Grid {grid_path}")


@dataclass
class _Index:
    """The sweep's ``index.csv``: one row per run (its grid values, status, timing, tables, error)."""

    path: Path
    rows: dict[str, dict[str, Any]]
    param_names: list[str]

    def write(self) -> None:
        _write_index(self.path, self.rows, self.param_names)


_Queued = tuple[str, dict[str, Any], Path, Path]  # run id, its parameters, its executed notebook, its results folder


def _queue(
    nb: Path, prof: Profile, grid: dict[str, list[Any]], fixed: dict[str, Any], index: _Index
) -> tuple[list[_Queued], int]:
    """The runs to do (their index rows marked ``queued``), and how many of them completed before on other inputs;
    a run that completed with the same inputs is kept."""
    todo: list[_Queued] = []
    stale = 0
    sweep_dir = index.path.parent
    for point in expand_grid(grid):
        params = {**fixed, **point}
        rid = run_id_for(nb.stem, params, point)
        old_id = legacy_run_id(nb.stem, params)
        if rid not in index.rows and old_id in index.rows:  # a sweep made before ids were readable: resume in place
            rid = old_id
        run_results = sweep_dir / rid
        run_params = {**parameters_for(prof, nb, run_results), **params}
        digest = inputs_hash(nb, run_params)
        old = index.rows.get(rid, {})
        if old.get("status") == "ok" and old.get("inputs") == digest:
            old["point"] = point
            continue
        stale += old.get("status") == "ok"
        # queued until it finishes: a sweep stopped before then reruns it
        index.rows[rid] = {**old, "run_id": rid, **point, "point": point, "inputs": digest, "status": "queued"}
        todo.append((rid, run_params, sweep_dir / "notebooks" / f"{rid}.ipynb", run_results))
    return todo, stale


@dataclass
class _Where:
    """Where a sweep's runs go: ``jobs`` local workers, or the cluster at ``scheduler``; ``dashboard`` served."""

    jobs: int
    scheduler: str | None
    dashboard: bool


def _run_queued(
    nb: Path,
    todo: list[_Queued],
    index: _Index,
    where: _Where,
    *,
    ledger: Path | None,
    ship_results: bool,
    progress: bool,
) -> None:
    """Run the queued runs of ``nb`` as dask tasks, writing each one's row of the index as it finishes."""
    from tomlib.runner._cluster import (
        NotebookTask,
        TaskOutcome,
        driver_env,
        open_client,
        run_tasks,
        watch_estimates,
        write_token,
    )

    token, env = write_token(index.path.parent), driver_env(None if where.scheduler else where.jobs)
    tasks = [
        NotebookTask(rid, str(nb), nb.read_bytes(), str(out), str(rr), params, env, token, ship_results)
        for rid, params, out, rr in todo
    ]
    bar = Progress(len(tasks), f"sweep {nb.stem}", enabled=progress, unit="run")

    def done(task: NotebookTask, outcome: TaskOutcome) -> None:
        index.rows[task.key].update(
            status=outcome.status,
            tables=";".join(outcome.tables),
            seconds=round(outcome.seconds, 2),
            started=_stamp(outcome.started),
            finished=_stamp(outcome.finished),
            host=outcome.host,
            output=task.output,
            results_dir=task.results,
            error=redact_text(outcome.error),
        )
        index.write()
        bar.done(task.key, outcome.status, outcome.seconds, outcome.error)

    if tasks:
        with open_client(where.jobs, where.scheduler, dashboard=where.dashboard) as client:
            watch_estimates(client, bar.say)
            run_tasks(client, tasks, done, ledger=ledger)
    bar.close()
