"""Parameter sweeps: a papermill batch over the cartesian product of a grid, resumable."""

from __future__ import annotations

import csv
import hashlib
import itertools
import json
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from tomlib.errors import ConfigFileError, UsageError, load_yaml
from tomlib.llm import Budget
from tomlib.paths import results_dir
from tomlib.redact import redact_text
from tomlib.runner._execute import (
    budget_env,
    check_writable,
    declared_parameters,
    execute_one,
    find_notebooks,
    parameters_for,
)
from tomlib.runner._profiles import Profile, load_profile

INDEX_FIXED = ["run_id", "status", "seconds", "output", "results_dir", "error"]


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


def run_id_for(stem: str, params: dict[str, Any]) -> str:
    digest = hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()[:10]
    return f"{stem}-{digest}"


def _read_index(path: Path) -> dict[str, dict[str, str]]:
    if not path.exists():
        return {}
    with open(path, newline="") as fh:
        return {row["run_id"]: row for row in csv.DictReader(fh)}


def _write_index(path: Path, rows: dict[str, dict[str, Any]], param_names: list[str]) -> None:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=[INDEX_FIXED[0], *param_names, *INDEX_FIXED[1:]], extrasaction="ignore")
        writer.writeheader()
        for rid in sorted(rows):
            writer.writerow(rows[rid])
    os.replace(tmp, path)


def _job(notebook: str, output: str, params: dict[str, Any]) -> tuple[str, float, str]:
    return execute_one(Path(notebook), Path(output), params)


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
) -> Path:
    """Run ``notebook`` once per grid point with ``jobs`` worker processes; returns the index CSV path.

    Each run gets its own results directory; the index has one row per run. A rerun skips runs whose
    status is ``ok``, so a killed sweep resumes where it stopped.
    """
    from tqdm.auto import tqdm

    (nb,) = find_notebooks([notebook])
    prof = profile if isinstance(profile, Profile) else load_profile(profile)
    grid, fixed = load_grid(grid_path)
    declared = declared_parameters(nb)
    unknown = sorted((set(grid) | set(fixed)) - set(declared))
    if unknown:
        raise UsageError(f"Grid {grid_path} sets {unknown}, which {nb.stem} does not declare: {sorted(declared)}.")
    sweep_dir = results_dir(results) / "sweeps" / (name or f"{nb.stem}-{Path(grid_path).stem}")
    check_writable(sweep_dir)
    index_path = sweep_dir / "index.csv"
    rows: dict[str, dict[str, Any]] = dict(_read_index(index_path))
    param_names = list(grid)

    todo = []
    for point in expand_grid(grid):
        params = {**fixed, **point}
        rid = run_id_for(nb.stem, params)
        if rows.get(rid, {}).get("status") == "ok":
            continue
        run_results = sweep_dir / rid
        base = parameters_for(prof, nb, run_results)
        todo.append((rid, point, {**base, **params}, sweep_dir / "notebooks" / f"{rid}.ipynb", run_results))

    ctx = multiprocessing.get_context("spawn")
    # workers are spawned inside budget_env, so they inherit the run-wide budget and its ledger
    with budget_env(budget or prof.budget, sweep_dir), ProcessPoolExecutor(max(1, jobs), mp_context=ctx) as pool:
        futures = {
            pool.submit(_job, str(nb), str(out), params): (rid, point, out, rr) for rid, point, params, out, rr in todo
        }
        for fut in tqdm(as_completed(futures), total=len(futures), desc=f"sweep {nb.stem}", disable=not progress):
            rid, point, out, rr = futures[fut]
            try:
                status, seconds, error = fut.result()
            except Exception as exc:  # a worker crash is recorded, not fatal
                status, seconds, error = "failed", 0.0, f"{type(exc).__name__}: {exc}"
            rows[rid] = {
                "run_id": rid,
                **point,
                "status": status,
                "seconds": round(seconds, 2),
                "output": str(out),
                "results_dir": str(rr),
                "error": redact_text(error),
            }
            _write_index(index_path, rows, param_names)
    if not index_path.exists():
        _write_index(index_path, rows, param_names)
    return index_path
