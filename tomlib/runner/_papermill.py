"""Running one notebook with papermill's Python API (a cell hook for progress), in an environment of the caller's
choosing; what the driver and the dask workers both do."""

from __future__ import annotations

import functools
import json
import os
import sys
import time
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Any

from tomlib.images import shrink_notebook_images
from tomlib.paths import portable_file, project_root, results_dir
from tomlib.redact import redact_file, redact_text
from tomlib.runner import _kernels


class Failure(StrEnum):
    """Why a notebook did not run to its end, told by the class of the exception that stopped it."""

    BUDGET_EXCEEDED = "budget_exceeded"  # the run's budget was spent during a live call: the series stops
    ESTIMATE_OVER_BUDGET = "estimate_over_budget"  # refused before its first call; the others may still fit
    REPLAY_MISS = "replay_miss"  # replay found no recorded response for a call
    ERROR = "error"  # anything else


_FAILURES = {
    "BudgetExceeded": Failure.BUDGET_EXCEEDED,
    "EstimateOverBudget": Failure.ESTIMATE_OVER_BUDGET,
    "ReplayMiss": Failure.REPLAY_MISS,
}


def classify_failure(exc: BaseException) -> Failure:
    """The :class:`Failure` of ``exc``: from the class name of the error a cell raised (papermill's ``ename``; the
    kernel's exception never reaches this process), else from ``exc``'s own class."""
    from papermill.exceptions import PapermillExecutionError

    name = exc.ename if isinstance(exc, PapermillExecutionError) else type(exc).__name__
    return _FAILURES.get(str(name), Failure.ERROR)


def describe_failure(exc: BaseException) -> str:
    """One line naming the failing cell and error."""
    from papermill.exceptions import PapermillExecutionError

    if isinstance(exc, PapermillExecutionError):
        return redact_text(f"cell {exc.exec_count or exc.cell_index}: {exc.ename}: {exc.evalue}".strip())
    return redact_text(f"{type(exc).__name__}: {exc}")


def skip_iri_grammars() -> None:
    """In a process of ours that runs notebooks (the CLI, a dask worker): jsonschema, under papermill and nbformat,
    compiles the RFC 3987 grammars of its ``iri`` format check at import when the optional rfc3987-syntax package is
    installed (0.8 s a process). nbformat never checks formats, so that import is left out here (jsonschema does
    without it). Not done on import of tomlib: another program in the same process might check IRIs."""
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]


CellHook = Callable[[int, int, str], None]  # (cell index, cell count, the cell's first line)
_ENGINE = "tomlib"
KERNEL_START_ATTEMPTS = 3
KERNEL_START_TIMEOUT_S = 60.0
"""How long a kernel may take to answer its first message (its start-up imports included: seconds under load)."""
_RESTARTED_AT_START = ("Kernel died before replying to kernel_info", "Kernel didn't respond in ")
"""A kernel that dies or never answers before its first cell is started again on fresh ports (jupyter_client's words
for either). jupyter_client picks a kernel's five ports by binding port 0 and letting go; when two processes (two
dask workers, or another user's) start kernels at once, the second can be handed a port another process is about to
bind. A kernel whose shell port is taken exits ("Address already in use"); one whose iopub port is taken lives on
and never answers. No cell has run then, so nothing is repeated."""


SAVE_EVERY_S = 5.0
"""How far the executed notebook on disk may lag behind its kernel while it runs. papermill writes the whole notebook
(validated) before and after every cell, markdown too: 60 writes of up to 0.8 MB for notebook 03, about 3 s of a
series. Between cells it now writes when this much time has passed; at the end, and on a failure, it always writes."""


def _save_now_and_then(nb_man: Any) -> None:
    """Make ``nb_man``'s writes around a cell wait :data:`SAVE_EVERY_S` since the last; any other write happens."""
    save, last = nb_man.save, [time.monotonic()]

    def now_and_then(**kwargs: Any) -> None:
        if time.monotonic() - last[0] >= SAVE_EVERY_S:
            save(**kwargs)
            last[0] = time.monotonic()

    for name in ("cell_start", "cell_complete"):
        step = getattr(nb_man, name)

        def around(cell: Any, cell_index: int | None = None, _step: Any = step, **kw: Any) -> Any:
            nb_man.save = now_and_then
            try:
                return _step(cell, cell_index, **kw)
            finally:
                nb_man.save = save

        setattr(nb_man, name, around)


@functools.cache
def _register_engine() -> None:
    """papermill's nbclient engine, telling ``on_cell`` (an execute_notebook keyword) which cell starts, and writing
    the executed notebook between cells at most every :data:`SAVE_EVERY_S`."""
    from papermill.engines import NBClientEngine, papermill_engines

    class ReportingEngine(NBClientEngine):
        @classmethod
        def execute_managed_notebook(cls, nb_man: Any, kernel_name: str, **kwargs: Any) -> Any:
            _save_now_and_then(nb_man)
            hook: CellHook | None = kwargs.pop("on_cell", None)
            if hook is not None:
                start, cells = nb_man.cell_start, nb_man.nb.cells

                def cell_start(cell: Any, cell_index: int | None = None, **kw: Any) -> Any:
                    if cell.cell_type == "code":
                        first = next((ln for ln in str(cell.source).splitlines() if ln.strip()), "")
                        hook(cell_index if cell_index is not None else 0, len(cells), first[:60])
                    return start(cell, cell_index, **kw)

                nb_man.cell_start = cell_start
            return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)

    papermill_engines.register(_ENGINE, ReportingEngine)


def _own_results(params: dict[str, Any]) -> dict[str, str]:
    """A results folder outside this machine's usual places (a worker's scratch folder) is ``results`` too."""
    own = Path(str(params.get("results_dir") or "/")).resolve()
    usual = own.is_relative_to(results_dir()) or own.is_relative_to(project_root()) or own == Path("/")
    return {} if usual else {str(own): "results"}


def kernel_name(notebook: Path) -> str | None:
    """The kernel a notebook asks for (None when it names none: papermill then says so)."""
    try:
        return str(json.loads(notebook.read_text(encoding="utf-8"))["metadata"]["kernelspec"]["name"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def execute_one(
    notebook: Path,
    output: Path,
    params: dict[str, Any],
    on_cell: CellHook | None = None,
    km: Any = None,
    preload: tuple[str, ...] | None = None,
) -> tuple[str, float, str, Failure | None]:
    """Run one notebook with papermill; returns (status, seconds, error, failure): ``failure`` is None when it ran to
    its end. Never raises for notebook errors.
    ``on_cell`` is told each cell as it starts (the runner shows it beside the progress bar). ``km`` is a kernel
    already started for this notebook (a worker's warm one, :mod:`tomlib.runner._kernels`); else one is started here.
    Either way the kernel is shut down in the background once the notebook is done. ``preload``: the kernel's start-up
    imports, when the caller has read them from the notebook already (:func:`_kernels.preload_for`)."""
    import papermill

    _register_engine()
    output.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    kernel = kernel_name(notebook)
    preload = _kernels.preload_for(notebook) if preload is None else preload
    try:
        for attempt in range(1, KERNEL_START_ATTEMPTS + 1):
            if km is None and kernel is not None:
                km = _kernels.start(kernel, str(notebook.parent), dict(os.environ), preload)
            try:
                papermill.execute_notebook(
                    str(notebook),
                    str(output),
                    parameters=params,
                    cwd=str(notebook.parent),
                    progress_bar=False,
                    log_output=False,
                    engine_name=_ENGINE,
                    on_cell=on_cell,
                    # papermill's metadata keeps each cell's start, end and duration; nbclient's four timestamps a
                    # cell besides were 45 KB of the series' executed notebooks, which nothing reads
                    record_timing=False,
                    start_timeout=KERNEL_START_TIMEOUT_S,
                    km=km,
                    extra_arguments=_kernels.kernel_arguments(preload),  # used only when the notebook names no kernel
                )
                break
            except RuntimeError as exc:
                if not str(exc).startswith(_RESTARTED_AT_START) or attempt == KERNEL_START_ATTEMPTS:
                    raise
            finally:
                if km is not None:
                    _kernels.retire(km)
                km = None
    except Exception as exc:  # a failing notebook must not stop the series
        return "failed", time.perf_counter() - t0, describe_failure(exc), classify_failure(exc)
    finally:
        if output.exists():  # whatever a cell printed (a traceback quoting a key) is redacted on disk
            shrink_notebook_images(output)  # its plots with a palette: the notebook and its page keep them each
            redact_file(output)
            # and names no local path of this machine (papermill records the notebook's own path too)
            portable_file(output, {str(notebook.parent.resolve()): notebook.parent.name, **_own_results(params)})
    return "ok", time.perf_counter() - t0, "", None
