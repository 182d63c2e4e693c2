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

import yaml

from tomlib.paths import results_dir
from tomlib.runner._execute import declared_parameters, execute_one, find_notebooks, parameters_for
from tomlib.runner._profiles import Profile, load_profile

INDEX_FIXED = ["run_id", "status", "seconds", "output", "results_dir", "error"]


def load_grid(path: str | os.PathLike[str]) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    """``parameters:`` (name → list of values, crossed) and optional ``fixed:`` (name → value)."""
    raw = yaml.safe_load(Path(path).read_text()) or {}
    grid = raw.get("parameters", {k: v for k, v in raw.items() if k != "fixed"})
    fixed = raw.get("fixed", {})
    if not isinstance(grid, dict) or not grid:
        raise ValueError(f"{path}: expected `parameters: {{name: [values, ...]}}`.")
    grid = {k: v if isinstance(v, list) else [v] for k, v in grid.items()}
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
        raise ValueError(f"Grid {grid_path} sets {unknown}, which {nb.stem} does not declare: {sorted(declared)}.")
    sweep_dir = results_dir(results) / "sweeps" / (name or f"{nb.stem}-{Path(grid_path).stem}")
    sweep_dir.mkdir(parents=True, exist_ok=True)
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
    with ProcessPoolExecutor(max_workers=max(1, jobs), mp_context=ctx) as pool:
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
                "error": error,
            }
            _write_index(index_path, rows, param_names)
    if not index_path.exists():
        _write_index(index_path, rows, param_names)
    return index_path
