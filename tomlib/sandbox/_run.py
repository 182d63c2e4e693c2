"""One check in a sandboxed subprocess, and many in parallel."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from tomlib.errors import TomlibError, UsageError

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
ISOLATION = ("no-network", "pid-namespace", "own-proc", "read-only-fs", "home-hidden", "no-capabilities")
"""What ``isolated`` requires of every check, as the launcher names the protections it applied."""
_REFUSED = 97  # the launcher's exit code when a required protection is missing (it ran nothing)


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
    """What one check may use."""

    timeout_s: float = 10.0
    cpu_s: int = 10
    memory_mb: int = 1024
    file_mb: int = 16
    processes: int = 64
    output_chars: int = 4000
    namespaces: bool = True  # False: do not even try (what a machine without namespaces gets); see SANDBOX_MODES


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


def _harness(report_fd: int, token_fd: int) -> str:
    # the token arrives on a pipe after start-up, so the program file never contains it
    return (
        "import os as _tomlib_os\n"
        "def _tomlib_make():\n"
        f"    write, fd, tok = _tomlib_os.write, {report_fd}, _tomlib_os.read({token_fd}, 64)\n"
        f"    _tomlib_os.close({token_fd})\n"
        "    def done():\n"
        "        write(fd, tok)\n"
        "    return done\n"
        "_tomlib_done = _tomlib_make()\n"
        "del _tomlib_make\n"
    )


def _reason(stderr: str, code: int) -> str:
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    if lines:
        return lines[-1][:300]
    if code < 0:
        return _SIGNALS.get(signal.Signals(-code), f"signal {-code}")
    return f"exit code {code} before the tests finished" if code else "exited before the tests finished"


def run_tests(program: str, tests: str, *, limits: Limits | None = None, mode: str | None = None) -> CheckResult:
    """Run ``program`` then ``tests`` (plain Python, e.g. asserts) in a sandbox; pass iff the tests all ran.

    Under the ``isolated`` mode (:func:`sandbox_mode`) a machine that cannot isolate the program raises
    :class:`SandboxUnavailable` and runs nothing."""
    lim = limits or Limits()
    require = ISOLATION if sandbox_mode(mode) == "isolated" else ()
    t0 = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="tomlib-sandbox-"))
    token = secrets.token_hex(16).encode()
    report_r, report_w = os.pipe()
    token_r, token_w = os.pipe()
    spec_path = work.parent / f"{work.name}.spec.json"
    proc: subprocess.Popen[bytes] | None = None
    try:
        source = _harness(report_w, token_r) + program + "\n\n" + tests + "\n\n_tomlib_done()\n"
        (work / "main.py").write_text(source, encoding="utf-8", errors="surrogateescape")
        spec = {
            "program": str(work / "main.py"),
            "report_fd": report_w,
            "namespaces": lim.namespaces,
            "require": list(require),
            "limits": {k: getattr(lim, k) for k in ("cpu_s", "memory_mb", "file_mb", "processes")},
            "env": {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0", "HOME": str(work)},
        }
        spec_path.write_text(json.dumps(spec))
        with open(work / "stdout", "wb") as out, open(work / "stderr", "wb") as err:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", str(_LAUNCHER), str(spec_path)],
                cwd=work,
                env=spec["env"],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                pass_fds=(report_w, token_r),
                start_new_session=True,
            )
        os.close(report_w)
        os.close(token_r)
        report_w = token_r = -1
        os.write(token_w, token)
        os.close(token_w)
        token_w = -1
        timed_out = False
        try:
            proc.wait(timeout=lim.timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        _kill_group(proc)
        report = _read_all(report_r)
        seconds = time.perf_counter() - t0
        stdout = _head(work / "stdout", lim.output_chars)
        stderr = _head(work / "stderr", lim.output_chars)
        first, _, rest = report.partition(b"\n")
        isolation = first.decode(errors="replace").split(",") if first else []
        if proc.returncode == _REFUSED and rest.startswith(b"missing:"):
            raise _unavailable(isolation, rest[8:].decode(errors="replace").strip().split(","))
        passed = not timed_out and proc.returncode == 0 and rest.endswith(token)
        if passed:
            return CheckResult(True, "passed", "", seconds, stdout, stderr, isolation)
        if timed_out:
            reason = f"timed out after {lim.timeout_s:g} s (wall clock)"
            return CheckResult(False, "timeout", reason, seconds, stdout, stderr, isolation)
        return CheckResult(False, "failed", _reason(stderr, proc.returncode or 0), seconds, stdout, stderr, isolation)
    except OSError as exc:
        return CheckResult(False, "error", f"the sandbox could not run the check: {exc}", time.perf_counter() - t0)
    finally:
        if proc is not None and proc.poll() is None:
            _kill_group(proc)
        for fd in (report_w, token_r, token_w, report_r):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        spec_path.unlink(missing_ok=True)
        shutil.rmtree(work, ignore_errors=True)


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
    if missing:
        line += f". NOT isolated: missing {', '.join(missing)}, so it can reach the network and read your files"
    return line
