"""Kernels for the runner's notebooks: each starts with tomlib's modules imported (when its notebook uses tomlib), a
worker keeps one warm for its next notebook, and a finished one is shut down in the background.

Starting a kernel, importing tomlib in it and shutting it down took about 2 s a notebook, outside any cell. While a
notebook runs, its worker starts the kernel of the next one, which imports on the machine's other core. A warm kernel
is used only when it was started for exactly what a cold one would get: the same kernel, working folder, environment
and start-up imports. Every kernel of a notebook, warm or cold, runs the same start-up lines, so no notebook can tell
which it got. A notebook that imports nothing of tomlib (someone's own, in a sweep) gets a kernel that imports only
what it names of :data:`PRELOAD`: about 2.4 s a kernel it would not use.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tomlib.errors import UsageError

ENV_WARM = "TOMLIB_WARM_KERNELS"
"""1 (the default): each worker starts its next notebook's kernel while one runs; 0: each notebook starts its own."""


def warm_wanted() -> bool:
    """:data:`ENV_WARM` read on the driver; a value other than 0 or 1 is refused before any kernel starts."""
    raw = os.environ.get(ENV_WARM, "").strip() or "1"
    if raw not in ("0", "1"):
        raise UsageError(
            f"{ENV_WARM} must be 1 (start the next notebook's kernel while one runs, the default) or 0 (each notebook "
            f"starts its own kernel); got {raw!r}."
        )
    return raw == "1"


PRELOAD = (
    "pandas",
    "tomlib.claims",
    "tomlib.report",
    "tomlib.trace",
    "tomlib.widgets",
    "tomlib.experiments.adaptive_tom",
    "tomlib.experiments.coalition_debate",
    "tomlib.experiments.coalition_mechanism",
    "tomlib.experiments.coalition_programming",
    "tomlib.experiments.coalition_protocol",
    "tomlib.experiments.coalition_reasoning",
    "tomlib.experiments.tom_ib",
    "matplotlib.pyplot",
    "seaborn",
    "statsmodels.regression.linear_model",
    "statsmodels.stats.multitest",
    "statsmodels.stats.power",
)
"""What the notebooks import (about 2.4 s): done by every kernel at start-up, before it answers (a warm kernel's while
the notebook before it runs), so no cell waits for it; the plots' and the claims' libraries too, about 1.2 s of it.
The names are deleted again, so a notebook's namespace is as empty as before."""

QUIET_SHUTDOWN = (
    '__import__("logging").getLogger("IPKernelApp").addFilter('
    'lambda r: not r.getMessage().startswith("KeyboardInterrupt caught in kernel"))'
)
"""jupyter_client sends SIGINT before it asks a kernel to shut down; when that lands while the kernel is still
answering a message (not running a cell), ipykernel logs an ERROR that means nothing about the run, and a run that
succeeded printed it. An interrupt during a cell still fails that cell as before."""


_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import\b|import[ \t]+([\w., \t]+))", re.M)


def preload_for(notebook: Path) -> tuple[str, ...]:
    """What a kernel for ``notebook`` imports at start-up: all of :data:`PRELOAD` when the notebook imports tomlib
    (every notebook of the series does), else the modules of it the notebook imports itself. A notebook that cannot
    be read gets all of it (papermill then says what is wrong with it)."""
    try:
        cells = json.loads(notebook.read_bytes())["cells"]
        code = "\n".join(
            "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in cells
            if c.get("cell_type") == "code"
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return PRELOAD
    named = set()
    for module, modules in _IMPORT.findall(code):
        for name in [module] if module else modules.split(","):
            if name.split():
                named.add(name.split()[0])  # "a.b as c": a.b
    roots = {n.split(".")[0] for n in named}
    if "tomlib" in roots:
        return PRELOAD
    return tuple(m for m in PRELOAD if m in named or m.split(".")[0] in roots)


def kernel_arguments(preload: tuple[str, ...] = PRELOAD) -> list[str]:
    """The kernel's command-line options: ``preload`` imported at start-up (then the names deleted); its start-up
    warnings (plain-TCP transport on loopback) would interleave with the progress bars of every run, its errors still
    show; history in memory, as nbclient does it."""
    startup = QUIET_SHUTDOWN
    if preload:
        names = ", ".join(dict.fromkeys(m.split(".")[0] for m in preload))
        startup += f"; import {', '.join(preload)}; del {names}"
    return ["--log-level=ERROR", f"--IPKernelApp.exec_lines={startup}", "--HistoryManager.hist_file=:memory:"]


def _in_thread(make: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    """Run a kernel manager's coroutine to the end on an event loop of its own (the caller's thread may be inside
    papermill's loop, or a dask worker's); returns its result."""
    done: list[Any] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            done.append(asyncio.run(make()))
        except BaseException as exc:  # handed to the caller
            failed.append(exc)

    thread = threading.Thread(target=run, name="tomlib-kernel")
    thread.start()
    thread.join()
    if failed:
        raise failed[0]
    return done[0]


@functools.cache
def _manager_class() -> type:
    from jupyter_client import AsyncKernelManager

    class Manager(AsyncKernelManager):  # type: ignore[misc]
        """Remembers the clients nbclient makes, so their channels are closed with the kernel."""

        def client(self, **kwargs: Any) -> Any:
            made = super().client(**kwargs)
            self.__dict__.setdefault("_tomlib_clients", []).append(made)
            return made

    return Manager


def start(kernel: str, cwd: str, env: dict[str, str], preload: tuple[str, ...] = PRELOAD) -> Any:
    """A kernel manager whose kernel (``kernel``, in ``cwd``, with exactly ``env``, importing ``preload``) is
    starting; nbclient waits until it answers."""
    km = _manager_class()(kernel_name=kernel)
    _in_thread(lambda: km.start_kernel(cwd=cwd, env=dict(env), extra_arguments=kernel_arguments(preload)))
    return km


_retiring: list[threading.Thread] = []


def retire(km: Any) -> None:
    """Shut a kernel down in the background, as nbclient would (gracefully), its clients' channels first."""

    def shutdown() -> None:
        for client in km.__dict__.get("_tomlib_clients", []):
            with contextlib.suppress(Exception):
                client.stop_channels()
        with contextlib.suppress(Exception):  # already dead, or died while stopping: nothing left to do
            asyncio.run(km.shutdown_kernel())

    _retiring[:] = [t for t in _retiring if t.is_alive()]
    thread = threading.Thread(target=shutdown, name="tomlib-kernel-shutdown")
    thread.start()
    _retiring.append(thread)


@dataclass
class _Spare:
    kernel: str
    cwd: str
    env: dict[str, str]
    folder: Path  # the next task's scratch folder, which the spare's environment names
    km: Any
    preload: tuple[str, ...] = PRELOAD


_spare: _Spare | None = None
_lock = threading.Lock()


def new_folder() -> Path:
    """A private scratch folder for a task (mode 700)."""
    return Path(tempfile.mkdtemp(prefix="tomlib-task-"))


def claim_folder() -> Path:
    """The scratch folder for the task starting now: the one a warm kernel was started for, else a new one."""
    with _lock:
        return _spare.folder if _spare is not None else new_folder()


def warm(kernel: str, cwd: str, env: dict[str, str], folder: Path, preload: tuple[str, ...] = PRELOAD) -> None:
    """Start the worker's next kernel now, for a task that will run in ``folder`` (any older spare is shut down).
    A spare that fails to start is no loss: that task starts its own."""
    global _spare
    discard()
    try:
        km = start(kernel, cwd, env, preload)
    except Exception:
        shutil.rmtree(folder, ignore_errors=True)
        return
    with _lock:
        _spare = _Spare(kernel, cwd, dict(env), folder, km, preload)


def take(kernel: str, cwd: str, env: dict[str, str], preload: tuple[str, ...] = PRELOAD) -> Any | None:
    """The warm kernel if it was started for this kernel, folder, environment and start-up imports and still runs;
    else None, and a spare that does not fit is shut down."""
    global _spare
    with _lock:
        spare, _spare = _spare, None
    if spare is None:
        return None
    fits = (spare.kernel, spare.cwd, spare.env, spare.preload) == (kernel, cwd, env, preload)
    if fits and _in_thread(spare.km.is_alive):
        return spare.km
    retire(spare.km)
    return None


def discard() -> None:
    """Shut the warm kernel down, if there is one, and remove its folder."""
    global _spare
    with _lock:
        spare, _spare = _spare, None
    if spare is not None:
        retire(spare.km)
        shutil.rmtree(spare.folder, ignore_errors=True)


def close(timeout: float = 30.0) -> None:
    """The end of a run on this worker: shut the warm kernel down and wait for every kernel being shut down."""
    discard()
    for thread in list(_retiring):
        thread.join(timeout)
    _retiring.clear()
