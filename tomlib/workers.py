"""How many worker processes a notebook's formal work may use: :data:`ENV_WORKERS`, or the cores this process may
run on. The runner gives each of its kernels the cores per notebook (cores / ``--jobs``)."""

from __future__ import annotations

import os
import signal
import threading
import time

from tomlib.errors import UsageError

ENV_WORKERS = "TOMLIB_FORMAL_WORKERS"
"""Worker processes for formal conditions (1: everything in the calling process)."""
MAX_WORKERS = 8


def cores() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def formal_workers() -> int:
    """Worker processes for formal conditions: :data:`ENV_WORKERS` when set, else :func:`cores` (at most
    :data:`MAX_WORKERS`)."""
    raw = os.environ.get(ENV_WORKERS, "").strip()
    if not raw:
        return min(MAX_WORKERS, cores())
    if not raw.isdigit() or int(raw) < 1:
        raise UsageError(
            f"{ENV_WORKERS} must be a whole number of worker processes, 1 or more (1: none); got {raw!r}. "
            f"Set it so, or unset it to use every core."
        )
    return int(raw)


def per_notebook(jobs: int) -> dict[str, str]:
    """The kernels' setting when ``jobs`` notebooks run at once on this machine: the cores shared among them (the
    caller's own setting when it has one)."""
    if os.environ.get(ENV_WORKERS, "").strip():
        return {ENV_WORKERS: str(formal_workers())}  # a typo is refused here, before any kernel starts
    return {ENV_WORKERS: str(max(1, cores() // max(1, jobs)))}


def start_worker() -> None:
    """A worker process's start (the ``initializer`` of a pool of them): it does its work itself, leaves interrupts to
    the kernel, and ends when the process that started it is gone (a kernel killed with SIGKILL never shuts its pool
    down)."""
    os.environ[ENV_WORKERS] = "1"
    # jupyter_client interrupts a kernel's whole process group (before every shutdown, too): the kernel handles it,
    # and a worker would only print a KeyboardInterrupt traceback into the run's output
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, name="tomlib-parent-watch", daemon=True).start()
