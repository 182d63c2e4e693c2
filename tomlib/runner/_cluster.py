"""Notebooks as tasks on dask.distributed: a local cluster sized by ``--jobs``, or a cluster at ``--scheduler``.

The driver (``run``/``sweep``) submits one task per notebook execution. A worker that sees the driver's files (same
machine, or a shared filesystem) runs the notebook in place. A worker that does not runs it in a scratch folder and
sends back what the driver needs: the executed notebook, the run's results folder and the model responses it
recorded, as a transcript in the ``cache export`` format, which the driver merges into its own store.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import io
import json
import logging
import os
import shutil
import signal
import socket
import sys
import tarfile
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tomlib.errors import UsageError
from tomlib.llm import ENV_ESTIMATES, ENV_LEDGER, ENV_SPEND_TO_BUDGET
from tomlib.paths import ENV_TABLES_MANIFEST, ENV_UNITS_MANIFEST, environ, scratch_base, store_path, write_atomic
from tomlib.runner import _kernels
from tomlib.runner._papermill import Failure, classify_failure, execute_one, kernel_name, skip_iri_grammars
from tomlib.runshare import ENV_SHARED
from tomlib.sandbox import SANDBOX_ENV
from tomlib.trace import ENV_RUNS_MANIFEST, compress_finished
from tomlib.workers import ENV_WORKERS, per_notebook

# Passed from the driver to every task. Paths apply only where the worker shares the driver's filesystem.
PATH_VARS = ("TOMLIB_ROOT", "TOMLIB_CONFIGS", "TOMLIB_RESULTS", "TOMLIB_TRANSCRIPTS", "TOMLIB_STORE", ENV_LEDGER)
PLAIN_VARS = ("TOMLIB_LLM_MODE", "TOMLIB_MAX_TOKENS", "TOMLIB_MAX_USD", ENV_SPEND_TO_BUDGET, SANDBOX_ENV, ENV_WORKERS)


@dataclass
class NotebookTask:
    """One notebook execution, described with the driver's paths."""

    key: str
    notebook: str
    source: bytes  # the notebook file, so a worker without this exact file can still run it
    output: str
    results: str  # the folder the run writes into (its ``results_dir`` parameter)
    params: dict[str, Any]
    env: dict[str, str]
    token: tuple[str, str]  # a file the driver wrote and its content: a worker that reads it shares the filesystem
    ship: bool = False  # send results back even when the filesystem is shared (what a remote worker does)
    spent: tuple[int, float] = (0, 0.0)  # the run's spend when submitted: where a remote worker's ledger starts
    keep: bool = False  # ``output`` is a good executed notebook: a failed attempt goes beside it, not over it
    warm_next: bool = False  # the worker will likely run another task of the run: start its kernel meanwhile


@dataclass
class TaskOutcome:
    """What a task reports back: status, timing, tables written, and (from a remote worker) its files."""

    status: str
    seconds: float
    error: str
    tables: list[str]
    host: str
    started: float
    finished: float
    shared: bool
    files: bytes = b""  # tar.gz of the run's results folder, plus ``__notebook__.ipynb``
    responses: bytes = b""  # gzip JSONL transcript of the responses recorded during the task
    ledger: bytes = b""  # the task's budget ledger lines (remote workers only)
    output: str = ""  # where the executed notebook is (the failed copy's path when a good one was kept)
    units: list[str] = field(default_factory=list)  # ``<units table>\t<source>`` for every source it wrote there
    failure: Failure | None = None  # why it did not run to its end (None when it did)


def failed_copy(output: str | os.PathLike[str]) -> Path:
    """Where a failed attempt goes when a good executed notebook is kept: ``<name>.failed.ipynb`` beside it."""
    out = Path(output)
    return out.with_name(f"{out.stem}.failed{out.suffix}")


def settle_output(task: NotebookTask, status: str, attempt: Path) -> Path:
    """Move the executed ``attempt`` where it belongs: over the output when it succeeded (a stale failed copy and its
    page go), beside a kept good notebook when it failed; returns the path."""
    target = failed_copy(task.output) if status != "ok" and task.keep else Path(task.output)
    if status == "ok":
        for stale in (failed_copy(task.output), failed_copy(task.output).with_suffix(".html")):
            stale.unlink(missing_ok=True)
    if attempt.exists() and attempt != target:
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(attempt, target)
    return target


def driver_env(jobs: int | None = None) -> dict[str, str]:
    """The tomlib variables of the driver's environment that shape a notebook run; with ``jobs`` (notebooks at once on
    a local cluster), the cores each kernel's formal work may use (:func:`tomlib.workers.per_notebook`)."""
    _kernels.warm_wanted()  # a typo in TOMLIB_WARM_KERNELS is refused here, before the cluster starts
    env = {k: os.environ[k] for k in (*PATH_VARS, *PLAIN_VARS) if os.environ.get(k)}
    return {**env, **per_notebook(jobs)} if jobs is not None else env


@contextlib.contextmanager
def shared_folder(env: dict[str, str], here: bool) -> Iterator[None]:
    """For a run whose notebooks run on this machine (``here``), a private folder where their kernels share the formal
    conditions they played and the claims they judged (``env[ENV_SHARED]``, :mod:`tomlib.runshare`), deleted when the
    run ends: the next run plays and judges them again."""
    if not here:
        yield
        return
    folder = tempfile.mkdtemp(prefix="shared-", dir=scratch_base())  # mode 700, inside a folder only we can write
    env[ENV_SHARED] = folder
    try:
        yield
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def write_token(folder: Path) -> tuple[str, str]:
    """A marker file in ``folder``: a worker that can read it sees the driver's filesystem."""
    folder.mkdir(parents=True, exist_ok=True)
    content = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex}"
    path = folder / ".tomlib-driver-token"
    write_atomic(path, content)
    return str(path), content


def _sees(token: tuple[str, str]) -> bool:
    try:
        return Path(token[0]).read_text() == token[1]
    except OSError:
        return False


def _tar(folder: Path, notebook: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        if folder.exists():
            for p in sorted(folder.rglob("*")):
                if p.is_file():
                    tar.add(p, arcname=str(p.relative_to(folder)))
        if notebook.exists():
            tar.add(notebook, arcname="__notebook__.ipynb")
    return buf.getvalue()


def _recorded_since(started: float) -> bytes:
    """The responses this worker's store gained since ``started``, as a transcript (empty when none)."""
    from tomlib.llm import ResponseStore

    if not store_path().exists():
        return b""
    store = ResponseStore()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "recorded.jsonl.gz"
            n = store.export(out, since=started)
            return out.read_bytes() if n else b""
    finally:
        store.close()


CELLS_TOPIC = "tomlib-cells"


def _cell_reporter(key: str) -> Callable[[int, int, str], None] | None:
    """Send each starting cell to the driver as a dask event (None outside a worker)."""
    from distributed import get_worker

    try:
        worker = get_worker()
    except ValueError:
        return None

    def report(index: int, count: int, first: str) -> None:
        worker.log_event(CELLS_TOPIC, {"key": key, "cell": index + 1, "of": count, "line": first})

    return report


def watch_cells(client: Any, show: Callable[[str], None]) -> None:
    """Call ``show`` with "<notebook> cell i/n: <first line>" whenever a worker starts a cell."""

    def handler(event: tuple[float, dict[str, Any]]) -> None:
        msg = event[1]
        show(f"{msg['key']} cell {msg['cell']}/{msg['of']}: {msg['line']}")

    client.subscribe_topic(CELLS_TOPIC, handler)


ESTIMATES_TOPIC = "tomlib-estimates"


def watch_estimates(client: Any, show: Callable[[str], None]) -> None:
    """Call ``show`` with "<notebook>: <estimate line>" as soon as a kernel announces what its live work costs."""
    client.subscribe_topic(ESTIMATES_TOPIC, lambda event: show(f"{event[1]['key']}: {event[1]['line']}"))


@contextlib.contextmanager
def _forward_estimates(path: Path, key: str) -> Iterator[None]:
    """While the notebook runs, send every line its kernel appends to ``path`` (``TOMLIB_ESTIMATES``) to the driver
    within a tenth of a second, as a dask event (printed here when not on a worker)."""
    from distributed import get_worker

    try:
        worker: Any = get_worker()
    except ValueError:
        worker = None
    stop, sent = threading.Event(), [0]

    def send() -> None:
        if not path.exists():
            return
        lines = path.read_text(encoding="utf-8").split("\n")[:-1]  # a line still being written waits
        for line in lines[sent[0] :]:
            if worker is not None:
                worker.log_event(ESTIMATES_TOPIC, {"key": key, "line": line})
            else:
                print(f"{key}: {line}", flush=True)
        sent[0] = max(sent[0], len(lines))

    def loop() -> None:
        while not stop.wait(0.1):
            send()

    thread = threading.Thread(target=loop, name=f"estimates-{key}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        send()


def _task_env(task: NotebookTask, shared: bool, scratch: Path) -> dict[str, str]:
    """The variables a task's kernel gets on top of the worker's environment."""
    env = dict(task.env) if shared else {k: v for k, v in task.env.items() if k in PLAIN_VARS}
    env[ENV_TABLES_MANIFEST], env[ENV_RUNS_MANIFEST] = str(scratch / "tables.txt"), str(scratch / "runs.txt")
    env[ENV_UNITS_MANIFEST] = str(scratch / "units.txt")
    env[ENV_ESTIMATES] = str(scratch / "estimates.txt")
    if not shared and task.env.get(ENV_LEDGER):
        env[ENV_LEDGER] = str(scratch / "ledger.jsonl")
    return env


def _where(task: NotebookTask, shared: bool, scratch: Path) -> tuple[Path, Path, Path]:
    """(notebook, executed output, results folder) of a task run in ``scratch``."""
    if shared:  # executed into a file of its own, then moved over the output or beside a kept good one
        output = Path(task.output).with_name(f".{Path(task.output).stem}.attempt-{os.getpid()}.ipynb")
        return Path(task.notebook), output, Path(task.results)
    return scratch / Path(task.notebook).name, scratch / "executed.ipynb", scratch / "results"


def execute_task(task: NotebookTask) -> TaskOutcome:
    """Run on a worker: execute the notebook in place, or in a scratch folder whose results are shipped back. With
    ``task.warm_next``, the kernel of this worker's next notebook starts while this one runs (:mod:`._kernels`)."""
    skip_iri_grammars()
    shared = not task.ship and _sees(task.token)
    host = socket.gethostname()
    scratch = _kernels.claim_folder()  # the folder a warm kernel was started for, else a new one
    try:
        env = _task_env(task, shared, scratch)
        manifest, runs = Path(env[ENV_TABLES_MANIFEST]), Path(env[ENV_RUNS_MANIFEST])
        params = dict(task.params)
        notebook, output, results = _where(task, shared, scratch)
        if not shared:
            notebook.write_bytes(task.source)
            if "results_dir" in params:
                params["results_dir"] = str(results)
            if task.env.get(ENV_LEDGER):  # the run's spend so far, then what this task settles
                seed = json.dumps({"by": "spent-before-this-task", "tokens": task.spent[0], "usd": task.spent[1]})
                (scratch / "ledger.jsonl").write_text(seed + "\n")
        started = time.time()
        with environ(env), _forward_estimates(scratch / "estimates.txt", task.key):
            kernel = kernel_name(notebook)
            preload = _kernels.preload_for(notebook)
            km = _kernels.take(kernel, str(notebook.parent), dict(os.environ), preload) if kernel else None
            if task.warm_next and kernel:  # the run's next one: same kernel, variables and imports, its own folder
                nxt = _kernels.new_folder()
                cwd = notebook.parent if shared else nxt
                _kernels.warm(kernel, str(cwd), {**os.environ, **_task_env(task, shared, nxt)}, nxt, preload)
            status, seconds, error, failure = execute_one(
                notebook, output, params, on_cell=_cell_reporter(task.key), km=km, preload=preload
            )
            if runs.exists():  # the run logs this notebook wrote, now closed
                compress_finished([Path(line) for line in runs.read_text().split("\n") if line])
            responses = b"" if shared else _recorded_since(started)
        tables = manifest.read_text().split() if manifest.exists() else []
        units = Path(env[ENV_UNITS_MANIFEST])
        outcome = TaskOutcome(
            status, seconds, error, sorted(set(tables)), host, started, time.time(), shared, responses=responses
        )
        outcome.failure = failure  # an enum member: it crosses to the driver as it is
        outcome.units = sorted(set(units.read_text(encoding="utf-8").splitlines())) if units.exists() else []
        if shared:
            outcome.output = str(settle_output(task, status, output))
        else:
            outcome.files = _tar(results, output)
            ledger = scratch / "ledger.jsonl"
            outcome.ledger = ledger.read_bytes().split(b"\n", 1)[1] if ledger.exists() else b""
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return outcome


async def close_kernels() -> None:
    """On each worker at the end of a run: its warm kernel and those still shutting down (:func:`_kernels.close`).

    A coroutine, so that ``Client.run`` awaits it on the worker's event loop and the waiting happens in a thread: a
    plain function would run on that loop and stop the worker's heartbeats while kernels shut down (seconds under
    load), and a run that succeeded printed the worker's "Failed to communicate with scheduler" traceback."""
    await asyncio.to_thread(_kernels.close)


def receive(task: NotebookTask, outcome: TaskOutcome) -> None:
    """On the driver: unpack a remote task's files where a local run would have written them, merge its responses
    into the driver's store (no completed call is repeated by a rerun), and add its spend to the run's ledger."""
    if outcome.shared:
        return
    from tomlib.llm import ResponseStore

    results = Path(task.results)
    output = failed_copy(task.output) if outcome.status != "ok" and task.keep else Path(task.output)
    outcome.output = str(output)
    if outcome.status == "ok":
        settle_output(task, "ok", output)  # drops a stale failed copy
    if outcome.files:
        with tarfile.open(fileobj=io.BytesIO(outcome.files), mode="r:gz") as tar:
            for member in tar.getmembers():
                base, target = (
                    (output.parent, output) if member.name == "__notebook__.ipynb" else (results, results / member.name)
                )
                data = tar.extractfile(member)
                if data is None or not target.resolve().is_relative_to(base.resolve()):
                    continue  # nothing from a worker is written outside the run's folders
                target.parent.mkdir(parents=True, exist_ok=True)
                write_atomic(target, data.read())
    if outcome.responses:
        store = ResponseStore()
        try:
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "recorded.jsonl.gz"
                path.write_bytes(outcome.responses)
                store.import_file(path)
        finally:
            store.close()
    ledger = task.env.get(ENV_LEDGER)
    if ledger and outcome.ledger:
        with open(ledger, "ab") as fh:
            fh.write(outcome.ledger)


# -- the driver's cluster ----------------------------------------------------------------------------------------


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGINT reached the driver: the cluster is shut down and the index keeps what finished."""


@contextlib.contextmanager
def _signals_stop() -> Iterator[None]:
    """SIGTERM behaves like Ctrl-C while the cluster runs, so ``finally`` blocks shut the workers down."""

    def stop(signum: int, _frame: Any) -> None:
        raise Interrupted(f"stopped by {signal.Signals(signum).name}")

    main = threading.current_thread() is threading.main_thread()  # handlers can only be set there
    old = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)} if main else {}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@contextlib.contextmanager
def open_client(jobs: int = 1, scheduler: str | None = None, *, dashboard: bool = False) -> Iterator[Any]:
    """A dask client: on a new local cluster of ``jobs`` single-threaded worker processes, or on ``scheduler``.
    ``dashboard`` serves the local cluster's dashboard on 127.0.0.1 (off by default: every local user can read it)."""
    with _signals_stop():
        if scheduler:
            if dashboard:
                print(
                    f"tomlib: --dashboard is for the local cluster; the one at {scheduler} has its own.",
                    file=sys.stderr,
                )
            yield from _remote(scheduler)
        else:
            yield from _local(jobs, dashboard)


def _remote(scheduler: str) -> Iterator[Any]:
    from distributed import Client
    from distributed.security import Security

    security = Security()  # dask's configuration: distributed.comm.tls.* (see docs/sweeps.md, "One engine")
    if not scheduler.startswith("tls://") or not security.require_encryption:
        print(
            f"tomlib: the scheduler at {scheduler} is not a tls:// address with required encryption in dask's "
            "configuration, so anyone who can reach it can run code as its workers; see docs/sweeps.md for TLS.",
            file=sys.stderr,
        )
    try:
        client = Client(scheduler, timeout="20s", security=security)
    except OSError as exc:
        raise UsageError(
            f"No dask scheduler answered at {scheduler} ({exc}). Start one (`dask scheduler`) and its workers "
            "(`dask worker ADDRESS`), or drop --scheduler to run on this machine."
        ) from None
    try:
        yield client
    finally:
        _close_kernels(client)
        client.close()


def _close_kernels(client: Any, timeout: float = 60.0) -> None:
    """Every worker shuts its warm kernel down before the run ends. The run waits at most ``timeout`` seconds for
    that: a worker that has not answered by then is ended by the cluster's close, and its kernel with it (ipykernel
    exits when its parent process does)."""

    def close() -> None:
        with contextlib.suppress(Exception):  # workers already gone: their kernels went with them
            client.run(close_kernels)

    thread = threading.Thread(target=close, name="tomlib-close-kernels", daemon=True)
    thread.start()
    thread.join(timeout)


def _local(jobs: int, dashboard: bool = False) -> Iterator[Any]:
    """A cluster only this process can drive: TLS on loopback with a certificate made for this run and kept in
    memory (a client without it is refused). No HTTP server unless ``dashboard`` (then the scheduler's, on
    127.0.0.1). Every scheduler, nanny and worker keeps its files in a fresh private folder, never in dask's shared
    ``$TMPDIR/dask-scratch-space``: dask puts that folder first on ``sys.path``, so whoever can swap it runs code."""
    from distributed import Client, Nanny, Scheduler, SpecCluster
    from distributed.security import Security

    from tomlib.runner._nodes import NoHTTPScheduler, NoHTTPWorker

    if jobs < 1:
        raise UsageError(f"--jobs must be 1 or more, got {jobs}.")
    scratch = tempfile.mkdtemp(prefix="dask-", dir=scratch_base())  # mode 700, inside a folder only we can write
    try:
        security = Security.temporary()
        common = {"host": "127.0.0.1", "protocol": "tls://", "security": security, "local_directory": scratch}
        scheduler = {
            "cls": Scheduler if dashboard else NoHTTPScheduler,
            "options": {**common, "port": 0, "dashboard": dashboard, "dashboard_address": "127.0.0.1:0"},
        }
        worker = {
            "cls": Nanny,
            "options": {
                **common,
                "nthreads": 1,
                "memory_limit": 0,
                "silence_logs": logging.ERROR,
                "worker_class": NoHTTPWorker,
                "config": {"temporary-directory": scratch},  # anything else dask writes, in the workers too
            },
        }
        cluster = SpecCluster(
            scheduler=scheduler,
            workers={i: worker for i in range(jobs)},
            worker=worker,
            security=security,
            silence_logs=logging.ERROR,
        )
        try:
            client = Client(cluster, security=security)
            try:
                if dashboard:
                    plots = "" if importlib.util.find_spec("bokeh") else " (install bokeh for its plots)"
                    print(
                        f"tomlib: the dask dashboard is at {client.dashboard_link}{plots} while this run lasts; it "
                        "listens on 127.0.0.1 only, but any local user can open it and read the workers' logs and "
                        "call stacks.",
                        file=sys.stderr,
                        flush=True,
                    )
                yield client
            finally:
                _close_kernels(client)
                client.close()
        finally:
            cluster.close()
    finally:
        sys.path[:] = [p for p in sys.path if not p.startswith(os.path.join(scratch, ""))]  # the scheduler's, nanny's
        shutil.rmtree(scratch, ignore_errors=True)


def run_tasks(
    client: Any,
    tasks: Sequence[NotebookTask],
    on_done: Callable[[NotebookTask, TaskOutcome], bool | None],
    *,
    ledger: Path | None = None,
    retries: int = 2,
) -> list[NotebookTask]:
    """Run every task, handing each outcome to ``on_done`` as it arrives (on the driver); returns the tasks that did
    not run. With a budget ``ledger``, tasks are submitted as workers free up, each carrying the run's spend so far,
    so a worker without the ledger file starts from it. ``on_done`` returning True (a spent budget) submits no more.
    A task whose worker died is retried on another worker; one that keeps killing workers is reported as failed."""
    from distributed import as_completed

    from tomlib.llm import read_ledger

    queue = list(tasks)
    order = {id(t): len(queue) - i for i, t in enumerate(queue)}  # dask runs higher priority first: series order
    # with a budget, only as many tasks as worker threads are out at once, so each starts from the spend so far
    warm = _kernels.warm_wanted()
    threads = max(1, sum(client.nthreads().values()))
    width = threads if ledger is not None else len(queue)
    running: dict[Any, NotebookTask] = {}

    def submit() -> Any:
        task = queue.pop(0)
        task.warm_next = warm and len(queue) >= threads  # some worker gets another: each warms one meanwhile
        if ledger is not None:
            task.spent = read_ledger(ledger)[:2]
        key = f"{task.key}-{uuid.uuid4().hex[:8]}"
        fut = client.submit(execute_task, task, key=key, pure=False, retries=retries, priority=order[id(task)])
        running[fut] = task
        return fut

    flow = as_completed([submit() for _ in range(min(width, len(queue)))])
    try:
        for fut in flow:
            task = running.pop(fut)
            try:
                outcome = fut.result()
            except Exception as exc:  # the worker died too often, or the task could not be unpickled
                now = time.time()
                error = f"{type(exc).__name__}: {exc}"
                outcome = TaskOutcome("failed", 0.0, error, [], "", now, now, True, failure=classify_failure(exc))
            receive(task, outcome)
            if on_done(task, outcome):
                break
            if queue:
                flow.add(submit())
    finally:
        for fut in running:
            fut.cancel()
    return [*running.values(), *queue]
