"""One check in a sandboxed subprocess, and many in parallel: the caller's side of :mod:`tomlib.sandbox._launch`.

A pool (``_Pool``) keeps one pre-forked launcher (``_Launcher``) per worker thread; a launcher that dies or stops
answering is killed and replaced, and one that cannot start switches the process to a launcher per check
(``_run_launcher``). How a check is isolated and how its verdict travels: :mod:`tomlib.sandbox._launch`.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import secrets
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from tomlib.errors import TomlibError, UsageError
from tomlib.sandbox._launch import ORDER, budget

_LAUNCHER = Path(__file__).with_name("_launch.py")
_SIGNALS = {
    signal.SIGKILL: "killed",
    signal.SIGXCPU: "CPU time limit",
    signal.SIGXFSZ: "file-size limit (the program wrote or printed too much)",
    signal.SIGSEGV: "segmentation fault",
}


SANDBOX_ENV = "TOMLIB_SANDBOX"
SANDBOX_MODES = {
    "isolated": "generated code runs only where it can be isolated (the default)",
    "rlimits-only": "where it cannot be isolated, run it with resource limits only (it can reach the network and "
    "read your files)",
}
ISOLATION = (
    "no-network",
    "pid-namespace",
    "own-proc",
    "read-only-fs",
    "home-hidden",
    "no-capabilities",
    "no-keyrings",
    "own-process-limit",
    "memory-per-check",
)
"""What ``isolated`` requires of every check, as the launcher names the protections it applied."""
MIN_PROCESS_MB = 48
"""The least address space a process of the check may get: a Python interpreter needs about 30 MB to start."""


class SandboxUnavailable(TomlibError):
    """This machine cannot isolate generated code, and the sandbox mode does not allow running it anyway."""


def sandbox_mode(mode: str | None = None) -> str:
    """``mode``, else ``TOMLIB_SANDBOX``, else ``isolated``; an unknown value is an error naming the choices."""
    value = mode or os.environ.get(SANDBOX_ENV) or "isolated"
    if value not in SANDBOX_MODES:
        raise UsageError(
            f"Unknown sandbox mode {value!r} (from {'the call' if mode else SANDBOX_ENV}); use one of: "
            + "; ".join(f"{k}: {v}" for k, v in SANDBOX_MODES.items())
            + "."
        )
    return value


def _unavailable(applied: Sequence[str], missing: Sequence[str]) -> SandboxUnavailable:
    return SandboxUnavailable(
        f"Generated code was not run: this machine cannot isolate it (missing {', '.join(missing)}; it got only "
        f"{', '.join(applied)}). Isolation needs Linux namespaces: run as root (a container), or let users create "
        "user namespaces (sysctl user.max_user_namespaces=15000; on Ubuntu also "
        "kernel.apparmor_restrict_unprivileged_userns=0). To run it anyway with resource limits only, where it can "
        f"reach the network and your files, set {SANDBOX_ENV}=rlimits-only (the runner's --sandbox rlimits-only)."
    )


@dataclass(frozen=True)
class Limits:
    """What one check may use. ``memory_mb`` is the whole check's: its ``processes`` (threads count too) share it,
    after the writable tmpfs (/tmp, /var/tmp, /dev/shm, ``file_mb`` each), so each gets :attr:`process_memory_mb`
    of address space."""

    timeout_s: float = 10.0
    cpu_s: int = 10
    memory_mb: int = 1024
    file_mb: int = 16
    processes: int = 4
    output_chars: int = 4000
    namespaces: bool = True  # False: do not even try (what a machine without namespaces gets); see SANDBOX_MODES

    def __post_init__(self) -> None:
        if self.processes < 1 or self.process_memory_mb < MIN_PROCESS_MB:
            raise UsageError(
                f"Limits(memory_mb={self.memory_mb}, processes={self.processes}, file_mb={self.file_mb}) leaves "
                f"{self.process_memory_mb} MB per process; a check needs at least {MIN_PROCESS_MB} MB for each of at "
                "least one process. Raise memory_mb or lower processes."
            )

    @property
    def process_memory_mb(self) -> int:
        """The address space each of the check's processes gets (see :func:`tomlib.sandbox._launch.budget`)."""
        return budget(_rlimits(self))[1] if self.processes > 0 else 0


@dataclass
class CheckResult:
    """The outcome of one check: ``passed`` only when every test ran."""

    passed: bool
    status: str  # passed | failed | timeout | error
    reason: str
    seconds: float
    stdout: str = ""
    stderr: str = ""
    isolation: list[str] = field(default_factory=list)


_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0", "HOME": "/tmp/check"}
"""A check's whole environment: none of the caller's variables (so no keys)."""
_START_S = 30.0  # how long a pre-forked launcher may take to set its namespaces up
_GRACE_S = 10.0  # how long a killed check may take to be reported


def _rlimits(lim: Limits) -> dict[str, int]:
    return {k: getattr(lim, k) for k in ("cpu_s", "memory_mb", "file_mb", "processes")}


class _CannotPrefork(Exception):
    """The pre-forked launcher did not start; the message says why."""


class _Launcher:
    """A pre-forked launcher (``_launch.py --serve``): made once per worker, it runs one check at a time."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock = ours
        # the launcher's own errors (a check's output goes to its files); open for the launcher's lifetime
        self.log = tempfile.TemporaryFile()  # noqa: SIM115
        try:
            # the real interpreter, as in _launch.main: a link to it may sit under /tmp, which the checks replace
            self.proc = subprocess.Popen(
                [os.path.realpath(sys.executable), "-I", "-S", str(_LAUNCHER), "--serve", str(theirs.fileno())],
                cwd="/",
                env=_ENV,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self.log,
                pass_fds=(theirs.fileno(),),
                start_new_session=True,
            )
        except OSError as exc:
            self.sock.close()
            self.log.close()
            raise _CannotPrefork(f"it could not be started: {exc}") from exc
        finally:
            theirs.close()
        ready = self._receive(_START_S)
        info = json.loads(ready[6:]) if ready and ready.startswith(b"ready ") else {}
        if not info.get("usable"):
            why = info.get("why") or self._log_tail() or "it did not say it was ready"
            self.close()
            raise _CannotPrefork(why)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _receive(self, timeout: float) -> bytes | None:
        """The launcher's next message; None at the deadline, b"" when it is gone."""
        if not select.select([self.sock], [], [], max(timeout, 0))[0]:
            return None
        try:
            return self.sock.recv(65536)
        except OSError:
            return b""

    def run(self, request: dict, fds: Sequence[int], timeout: float) -> tuple[dict | None, bool]:
        """Send one check (its descriptors go to the launcher, which never reads them) and wait for it: its
        ``done`` message (None when the launcher died) and whether it was killed at the deadline."""
        try:
            socket.send_fds(self.sock, [b"check " + json.dumps(request).encode()], list(fds))
        except OSError:
            return None, False
        msg = self._receive(timeout)
        timed_out = msg is None
        if timed_out:
            with contextlib.suppress(OSError):
                self.sock.send(b"kill")
            msg = self._receive(_GRACE_S)
        if not msg or not msg.startswith(b"done "):
            return None, timed_out
        return json.loads(msg[5:]), timed_out

    def _log_tail(self) -> str:
        with contextlib.suppress(OSError, ValueError):
            self.log.seek(0)
            return self.log.read()[-300:].decode(errors="replace").strip()
        return ""

    def close(self) -> None:
        """Stop the launcher; a check it was running dies with it."""
        self.sock.close()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.log.close()


class _Pool:
    """Idle pre-forked launchers, one per worker that ran a check; a launcher that died is replaced."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.idle: list[_Launcher] = []
        self.busy: set[_Launcher] = set()
        self.broken = ""  # why checks run with a launcher each instead

    def acquire(self) -> _Launcher | None:
        with self.lock:
            if self.broken:
                return None
            if self.idle:
                launcher = self.idle.pop()
                self.busy.add(launcher)
                return launcher
        try:
            launcher = _Launcher()
        except _CannotPrefork as exc:
            self.disable(f"the pre-forked launcher could not start: {exc}")
            return None
        with self.lock:
            self.busy.add(launcher)
        return launcher

    def release(self, launcher: _Launcher, healthy: bool) -> None:
        with self.lock:
            self.busy.discard(launcher)
            keep = healthy and not self.broken and launcher.proc.poll() is None
            if keep:
                self.idle.append(launcher)
        if not keep:
            launcher.close()

    def disable(self, why: str) -> None:
        with self.lock:
            self.broken = why
            idle, self.idle = self.idle, []
        for launcher in idle:
            launcher.close()

    def busy_pids(self) -> list[int]:
        """The launchers running a check now (for tests that kill one)."""
        with self.lock:
            return [launcher.pid for launcher in self.busy]

    def close(self) -> None:
        with self.lock:
            idle, self.idle = self.idle, []
        for launcher in idle:
            launcher.close()

    def forget(self) -> None:
        """In a forked child: the launchers belong to the parent (their sockets are closed here, not used)."""
        self.lock = threading.Lock()
        for launcher in [*self.idle, *self.busy]:
            with contextlib.suppress(OSError):
                launcher.sock.close()
        self.idle, self.busy = [], set()


_POOL = _Pool()
atexit.register(_POOL.close)
os.register_at_fork(after_in_child=_POOL.forget)


def launcher_kind() -> str:
    """How checks are started here: ``pre-forked`` (a launcher per worker) or ``per-check`` and why."""
    launcher = _POOL.acquire()
    if launcher is not None:
        _POOL.release(launcher, True)
        return "pre-forked"
    return f"per-check ({_POOL.broken})"


def _reason(stderr: str, code: int) -> str:
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    if lines:
        return lines[-1][:300]
    if code < 0:
        return _SIGNALS.get(signal.Signals(-code), f"signal {-code}")
    return f"exit code {code} before the tests finished" if code else "exited before the tests finished"


def run_tests(
    program: str,
    tests: str,
    *,
    limits: Limits | None = None,
    mode: str | None = None,
    visible: Sequence[str] = (),
) -> CheckResult:
    """Run ``program`` then ``tests`` (plain Python, e.g. asserts) in a sandbox; pass iff the tests all ran.

    ``visible`` folders (e.g. a virtual environment the tests import from) are bound back into the program's world,
    read-only; a check with any gets a launcher of its own. Under the ``isolated`` mode (:func:`sandbox_mode`) a
    machine that cannot isolate the program raises :class:`SandboxUnavailable` and runs nothing."""
    lim = limits or Limits()
    require = ISOLATION if sandbox_mode(mode) == "isolated" else ()
    t0 = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="tomlib-sandbox-"))
    try:
        outcome = None
        launcher = _POOL.acquire() if lim.namespaces and not visible else None
        if launcher is not None:
            outcome = _run_preforked(launcher, program, tests, lim, require, work)
        if outcome is None:  # no pre-forked launcher here (or it just failed to set a check up): one per check
            outcome = _run_launcher(program, tests, lim, require, work, visible)
        return _result(outcome, lim, work, time.perf_counter() - t0)
    except OSError as exc:
        return CheckResult(False, "error", f"the sandbox could not run the check: {exc}", time.perf_counter() - t0)
    finally:
        shutil.rmtree(work, ignore_errors=True)


@dataclass
class _Outcome:
    """How a check's process ended, before it is judged."""

    timed_out: bool
    returncode: int
    result: bytes  # what reached the result pipe: the token when the tests returned
    token: bytes
    applied: list[str]  # from the launcher's status pipe, which the program never holds
    missing: list[str]
    lost: str = ""  # why the launcher could not say how the check ended


def _result(out: _Outcome, lim: Limits, work: Path, seconds: float) -> CheckResult:
    stdout = _head(work / "stdout", lim.output_chars)
    stderr = _head(work / "stderr", lim.output_chars)
    isolation = sorted(set(out.applied), key=ORDER.index)
    if out.missing:
        raise _unavailable(isolation, out.missing)
    if out.timed_out:
        reason = f"timed out after {lim.timeout_s:g} s (wall clock)"
        return CheckResult(False, "timeout", reason, seconds, stdout, stderr, isolation)
    if out.lost:
        return CheckResult(False, "error", out.lost, seconds, stdout, stderr, isolation)
    if out.returncode == 0 and out.result == out.token:
        return CheckResult(True, "passed", "", seconds, stdout, stderr, isolation)
    return CheckResult(False, "failed", _reason(stderr, out.returncode), seconds, stdout, stderr, isolation)


def _source(program: str, tests: str) -> tuple[bytes, int]:
    """The file a check runs (the program, then its tests) and the byte where the tests start."""
    head = (program + "\n\n").encode("utf-8", "surrogateescape")
    return head + tests.encode("utf-8", "surrogateescape") + b"\n", len(head)


def _status(data: bytes) -> tuple[list[str], list[str]]:
    """What applied and what was missing, from the lines the launcher wrote on its status pipe."""
    said = dict(line.partition(" ")[::2] for line in data.decode(errors="replace").splitlines())
    return [p for p in said.get("applied", "").split(",") if p], [p for p in said.get("missing", "").split(",") if p]


def _run_launcher(
    program: str, tests: str, lim: Limits, require: Sequence[str], work: Path, visible: Sequence[str] = ()
) -> _Outcome:
    """One launcher process per check (``_launch.py SPEC.json``), which runs the program in its own interpreter."""
    token = secrets.token_hex(16).encode()
    status_r, status_w = os.pipe()
    result_r, result_w = os.pipe()
    token_r, token_w = os.pipe()
    spec_path = work / "spec.json"
    proc: subprocess.Popen[bytes] | None = None
    theirs = [status_w, result_w, token_r]
    try:
        source, split = _source(program, tests)
        (work / "main.py").write_bytes(source)
        spec = {
            "program": str(work / "main.py"),
            "split": split,
            "status_fd": status_w,
            "result_fd": result_w,
            "token_fd": token_r,
            "namespaces": lim.namespaces,
            "require": list(require),
            "limits": _rlimits(lim),
            "visible": [str(Path(v).resolve()) for v in visible],
        }
        spec_path.write_text(json.dumps(spec))
        with open(work / "stdout", "wb") as out, open(work / "stderr", "wb") as err:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", str(_LAUNCHER), str(spec_path)],
                cwd=work,
                env={**_ENV, "HOME": str(work)},
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                pass_fds=tuple(theirs),
                start_new_session=True,
            )
        for fd in theirs:
            os.close(fd)
        theirs = []
        os.write(token_w, token)
        os.close(token_w)
        token_w = -1
        timed_out = False
        try:
            proc.wait(timeout=lim.timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        _kill_group(proc)
        applied, missing = _status(_read_all(status_r))
        return _Outcome(timed_out, proc.returncode or 0, _read_all(result_r), token, applied, missing)
    finally:
        if proc is not None and proc.poll() is None:
            _kill_group(proc)
        for fd in [*theirs, token_w, status_r, result_r]:
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)


def _run_preforked(
    launcher: _Launcher, program: str, tests: str, lim: Limits, require: Sequence[str], work: Path
) -> _Outcome | None:
    """One check through a pre-forked launcher; None when it could not set the check up (the caller runs it with
    a launcher of its own, and none is pre-forked from then on)."""
    token = secrets.token_hex(16).encode()
    source, split = _source(program, tests)
    (work / "main.py").write_bytes(source)
    result_r, result_w = os.pipe()
    token_r, token_w = os.pipe()
    theirs = [result_w, token_r]
    healthy = False
    try:
        # the token waits in its pipe, so a program that never reads it cannot make this write fail
        os.write(token_w, token)
        os.close(token_w)
        theirs += [os.open(work / "main.py", os.O_RDONLY)]
        for name in ("stdout", "stderr"):
            theirs += [os.open(work / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)]
        request = {"limits": _rlimits(lim), "require": list(require), "split": split}
        done, timed_out = launcher.run(request, [theirs[2], theirs[3], theirs[4], result_w, token_r], lim.timeout_s)
        for fd in theirs:
            os.close(fd)
        theirs = []
        if done is not None and done.get("error"):
            _POOL.disable(f"the pre-forked launcher could not set a check up ({done['error']})")
            return None
        healthy = done is not None
        status = done.get("status") if done is not None else None
        lost = ""
        if status is None and not timed_out:
            lost = "the sandbox's launcher stopped during the check (a new one runs the next check)"
        code = os.waitstatus_to_exitcode(status) if status is not None else -signal.SIGKILL
        applied, missing = (done.get("applied", []), done.get("missing", [])) if done is not None else ([], [])
        return _Outcome(timed_out, code, _read_all(result_r), token, applied, missing, lost)
    finally:
        _POOL.release(launcher, healthy)
        for fd in [result_r, *theirs]:
            with contextlib.suppress(OSError):
                os.close(fd)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _read_all(fd: int) -> bytes:
    chunks = []
    os.set_blocking(fd, False)
    while True:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def _head(path: Path, limit: int) -> str:
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError:
        return ""
    text = data[:limit].decode("utf-8", errors="replace")
    return text + ("… [cut]" if len(data) > limit else "")


def check_many(
    items: Iterable[tuple[str, str]],
    *,
    limits: Limits | None = None,
    workers: int | None = None,
    progress: Callable[[CheckResult], None] | None = None,
) -> list[CheckResult]:
    """Run many (program, tests) checks, ``workers`` at a time (default: the number of cores); results in order."""
    jobs: Sequence[tuple[str, str]] = list(items)

    def one(job: tuple[str, str]) -> CheckResult:
        res = run_tests(*job, limits=limits)
        if progress is not None:
            progress(res)
        return res

    with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
        return list(pool.map(one, jobs))


@cache
def isolation_available() -> tuple[str, ...]:
    """The protections a check gets on this machine (probed once with a trivial program)."""
    return tuple(run_tests("", "", limits=Limits(timeout_s=30), mode="rlimits-only").isolation)


def require_sandbox(mode: str | None = None) -> tuple[str, ...]:
    """The protections generated code will get; raises :class:`SandboxUnavailable` before any work when the mode
    is ``isolated`` and this machine cannot isolate it (call it before paying for the code)."""
    applied = isolation_available()
    missing = [p for p in ISOLATION if p not in applied]
    if missing and sandbox_mode(mode) == "isolated":
        raise _unavailable(applied, missing)
    return applied


def describe_sandbox(mode: str | None = None) -> str:
    """One line for a notebook: the sandbox mode and the protections generated code gets here."""
    m, applied = sandbox_mode(mode), isolation_available()
    missing = [p for p in ISOLATION if p not in applied]
    line = f"sandbox: {m} ({SANDBOX_ENV}); generated code runs with {', '.join(applied)}"
    kind = launcher_kind()
    if kind == "pre-forked":
        line += "; a pre-forked launcher per worker, fresh PID, mount and IPC namespaces per check"
    else:
        line += f"; one launcher process per check: {kind.removeprefix('per-check (').removesuffix(')')}"
    if missing:
        line += f". NOT isolated: missing {', '.join(missing)}, so it can reach the network and read your files"
    return line
