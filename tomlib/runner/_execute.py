"""Executing notebooks with papermill's Python API, into ``results/notebooks/`` (plus HTML)."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tomlib.paths import configs_dir, data_dir, project_root, results_dir
from tomlib.runner._profiles import Profile, load_profile


@dataclass
class NotebookResult:
    """What happened to one notebook in a run."""

    name: str
    status: str  # ok | failed | skipped
    seconds: float = 0.0
    error: str = ""
    output: str = ""
    tables: list[str] = field(default_factory=list)


def notebooks_dir() -> Path:
    return project_root() / "notebooks"


def find_notebooks(names: Sequence[str] = (), directory: str | os.PathLike[str] | None = None) -> list[Path]:
    """Notebooks of the series, in order; ``names`` may be stems, number prefixes ("01") or paths."""
    folder = Path(directory) if directory else notebooks_dir()
    series = sorted(p for p in folder.glob("*.ipynb") if not p.name.startswith("."))
    if not names:
        return series
    picked: list[Path] = []
    for name in names:
        p = Path(name)
        if p.suffix == ".ipynb" and p.exists():
            picked.append(p.resolve())
            continue
        hits = [s for s in series if s.stem == name or s.stem.startswith(f"{name}_") or s.name == name]
        if not hits:
            raise FileNotFoundError(
                f"No notebook '{name}' in {folder}. Available: {', '.join(s.stem for s in series) or '(none)'}."
            )
        picked.extend(hits)
    return picked


def declared_parameters(notebook: Path) -> dict[str, Any]:
    """The notebook's ``parameters`` cell, as papermill reads it (name → info)."""
    import papermill

    return dict(papermill.inspect_notebook(str(notebook)))


def parameters_for(profile: Profile, notebook: Path, results: Path) -> dict[str, Any]:
    """Profile parameters the notebook declares, its own overrides, and ``results_dir``."""
    declared = declared_parameters(notebook)
    if not declared:
        raise ValueError(f"{notebook.name} has no cell tagged 'parameters'; papermill cannot configure it.")
    own = profile.notebooks.get(notebook.stem, {})
    unknown = sorted(set(own) - set(declared))
    if unknown:
        raise ValueError(
            f"Profile '{profile.name}' sets {unknown} for {notebook.stem}, which does not declare them; "
            f"declared: {sorted(declared)}."
        )
    params = {k: v for k, v in profile.parameters.items() if k in declared}
    params.update(own)
    if "results_dir" in declared:
        params["results_dir"] = str(results)
    return params


def _hash_tree(h: Any, root: Path, pattern: str = "**/*") -> None:
    for p in sorted(root.glob(pattern)):
        if p.is_file() and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(root)).encode())
            h.update(p.read_bytes())


_inputs_cache: dict[str, str] = {}


def shared_inputs_hash() -> str:
    """Hash of what every notebook depends on: the library, configs and data."""
    root = str(project_root())
    if root not in _inputs_cache:
        h = hashlib.sha256()
        _hash_tree(h, project_root() / "tomlib", "**/*.py")
        _hash_tree(h, configs_dir())
        _hash_tree(h, data_dir())
        _inputs_cache[root] = h.hexdigest()
    return _inputs_cache[root]


def inputs_hash(notebook: Path, params: dict[str, Any]) -> str:
    h = hashlib.sha256(shared_inputs_hash().encode())
    h.update(notebook.read_bytes())
    h.update(json.dumps(params, sort_keys=True, default=str).encode())
    return h.hexdigest()


def _table_mtimes(results: Path) -> dict[str, int]:
    return {p.name[:-4]: p.stat().st_mtime_ns for p in (results / "tables").glob("*.csv")}


def describe_failure(exc: BaseException) -> str:
    """One line naming the failing cell and error."""
    from papermill.exceptions import PapermillExecutionError

    if isinstance(exc, PapermillExecutionError):
        return f"cell {exc.exec_count or exc.cell_index}: {exc.ename}: {exc.evalue}".strip()
    return f"{type(exc).__name__}: {exc}"


def execute_one(notebook: Path, output: Path, params: dict[str, Any]) -> tuple[str, float, str]:
    """Run one notebook with papermill; returns (status, seconds, error). Never raises for notebook errors."""
    import papermill

    output.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    try:
        papermill.execute_notebook(
            str(notebook),
            str(output),
            parameters=params,
            cwd=str(notebook.parent),
            progress_bar=False,
            log_output=False,
        )
    except Exception as exc:  # a failing notebook must not stop the series
        return "failed", time.perf_counter() - t0, describe_failure(exc)
    return "ok", time.perf_counter() - t0, ""


def export_html(notebook: Path) -> Path:
    """HTML beside the executed notebook (widget state included when the notebook saved it)."""
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_filename(str(notebook))
    out = notebook.with_suffix(".html")
    out.write_text(body, encoding="utf-8")
    return out


def run_notebooks(
    profile: str | Profile = "default",
    names: Sequence[str] = (),
    *,
    force: bool = False,
    results: str | os.PathLike[str] | None = None,
    directory: str | os.PathLike[str] | None = None,
    html: bool = True,
    progress: bool = True,
) -> list[NotebookResult]:
    """Execute the series (or ``names``) under a profile; keeps going past failures."""
    from tqdm.auto import tqdm

    prof = profile if isinstance(profile, Profile) else load_profile(profile)
    res = results_dir(results)
    out_dir = res / "notebooks"
    out_dir.mkdir(parents=True, exist_ok=True)
    books = [nb for nb in find_notebooks(names, directory) if names or nb.stem not in prof.skip]
    outcomes: list[NotebookResult] = []
    bar = tqdm(books, desc=f"notebooks ({prof.name})", unit="nb", disable=not progress)
    for nb in bar:
        bar.set_postfix_str(nb.stem)
        output = out_dir / nb.name
        stamp_path = out_dir / f"{nb.stem}.stamp.json"
        try:
            params = parameters_for(prof, nb, res)
        except Exception as exc:
            outcomes.append(NotebookResult(nb.stem, "failed", error=str(exc)))
            continue
        digest = inputs_hash(nb, params)
        if not force and output.exists() and stamp_path.exists():
            stamp = json.loads(stamp_path.read_text())
            if stamp.get("status") == "ok" and stamp.get("inputs") == digest:
                outcomes.append(NotebookResult(nb.stem, "skipped", output=str(output), tables=stamp.get("tables", [])))
                continue
        before = _table_mtimes(res)
        status, seconds, error = execute_one(nb, output, params)
        after = _table_mtimes(res)
        tables = sorted(t for t, m in after.items() if before.get(t) != m)
        if html and output.exists():
            try:
                export_html(output)
            except Exception as exc:  # HTML is a convenience; say so but keep the run's status
                error = (error + "; " if error else "") + f"HTML export failed: {exc}"
        result = NotebookResult(nb.stem, status, round(seconds, 2), error, str(output), tables)
        stamp_path.write_text(
            json.dumps(
                {**asdict(result), "inputs": digest, "profile": prof.name, "parameters": params}, indent=1, default=str
            )
        )
        outcomes.append(result)
    return outcomes


def summarize(outcomes: Iterable[NotebookResult]) -> str:
    """A human summary: counts, then every failure with its reason."""
    outcomes = list(outcomes)
    counts = {s: sum(o.status == s for o in outcomes) for s in ("ok", "skipped", "failed")}
    lines = [f"{counts['ok']} ran, {counts['skipped']} up to date (skipped), {counts['failed']} failed"]
    for o in outcomes:
        if o.status == "failed":
            lines.append(f"  FAILED {o.name}: {o.error}" + (f"  (see {o.output})" if o.output else ""))
    return "\n".join(lines)
