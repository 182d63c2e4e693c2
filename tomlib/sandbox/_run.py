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

_LAUNCHER = Path(__file__).with_name("_launch.py")
_SIGNALS = {
    signal.SIGKILL: "killed",
    signal.SIGXCPU: "CPU time limit",
    signal.SIGXFSZ: "file-size limit (the program wrote or printed too much)",
    signal.SIGSEGV: "segmentation fault",
}


@dataclass(frozen=True)
class Limits:
    """What one check may use."""

    timeout_s: float = 10.0
    cpu_s: int = 10
    memory_mb: int = 1024
    file_mb: int = 16
    processes: int = 64
    output_chars: int = 4000
    namespaces: bool = True


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


def run_tests(program: str, tests: str, *, limits: Limits | None = None) -> CheckResult:
    """Run ``program`` then ``tests`` (plain Python, e.g. asserts) in a sandbox; pass iff the tests all ran."""
    lim = limits or Limits()
    t0 = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="tomlib-sandbox-"))
    token = secrets.token_hex(16).encode()
    report_r, report_w = os.pipe()
    token_r, token_w = os.pipe()
    spec_path = work.parent / f"{work.name}.spec.json"
    proc: subprocess.Popen[bytes] | None = None
    try:
        as_root = os.geteuid() == 0
        source = _harness(report_w, token_r) + program + "\n\n" + tests + "\n\n_tomlib_done()\n"
        (work / "main.py").write_text(source, encoding="utf-8", errors="surrogateescape")
        spec = {
            "program": str(work / "main.py"),
            "report_fd": report_w,
            "namespaces": lim.namespaces and as_root,
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
    return tuple(run_tests("", "", limits=Limits(timeout_s=30)).isolation)
