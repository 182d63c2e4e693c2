"""Running sandbox checks as this user and as an unprivileged one (``nobody``), whoever runs the tests.

CI and our machines are root, where namespaces need no user namespace; users are not. So every adversarial test runs
twice: in this process, and through a small driver started as ``nobody`` with ``setpriv``. The driver imports a
world-readable copy of ``tomlib`` with an interpreter ``nobody`` can execute (the venv's interpreter may live under
``/root``, which ``nobody`` cannot enter).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tomlib.sandbox import CheckResult, Limits, run_tests
from tomlib.sandbox._run import _POOL, SandboxUnavailable

NOBODY = 65534
ROOT = Path(__file__).resolve().parents[2]
DRIVER = """
import dataclasses, json, sys
from sandbox_users import plant_key
from tomlib.sandbox import Limits, run_tests
spec = json.loads(sys.stdin.read())
if spec.get("key"):
    plant_key(spec["key"])
try:
    r = run_tests(spec["program"], spec["tests"], limits=Limits(**spec["limits"]), mode=spec["mode"])
except Exception as exc:
    print(json.dumps({"raised": type(exc).__name__, "message": str(exc)}))
else:
    print(json.dumps(dataclasses.asdict(r)))
"""

SIDE_BY_SIDE_DRIVER = """
import json, sys
from sandbox_users import side_by_side
from tomlib.sandbox import Limits
spec = json.loads(sys.stdin.read())
print(json.dumps(side_by_side(spec["checks"], Limits(**spec["limits"]), spec["head_start_s"])))
"""

IN_TURN_DRIVER = """
import json, sys
from sandbox_users import in_turn
from tomlib.sandbox import Limits
spec = json.loads(sys.stdin.read())
print(json.dumps(in_turn(spec["steps"], Limits(**spec["limits"]), spec["marker"])))
"""


PROBE = "import os, sys; assert sys.version_info >= (3, 10) and os.access(os.path.realpath(sys.executable), os.X_OK)"


def drop_to_nobody() -> list[str]:
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--inh-caps=-all"]


@cache
def nobody_python() -> str | None:
    """An interpreter (3.10+) that ``nobody`` can run, or None."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return None
    candidates = [os.path.realpath(sys.executable), *(shutil.which(f"python3.{m}") for m in (13, 12, 11, 10))]
    for py in [c for c in candidates if c] + ["/usr/bin/python3"]:
        ok = subprocess.run(
            # the interpreter must see itself: the sandbox's launcher re-executes sys.executable
            [*drop_to_nobody(), py, "-c", PROBE],
            capture_output=True,
            env={"PATH": "/usr/bin:/bin"},
        )
        if ok.returncode == 0:
            return py
    return None


def skip_reason() -> str | None:
    """Why the tests cannot also run as ``nobody`` here (None when they can)."""
    if os.geteuid() != 0:
        return "these tests already run as an unprivileged user"
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is missing, so the tests cannot drop to an unprivileged user"
    if nobody_python() is None:
        return "no Python 3.10+ that the user nobody can execute"
    if not userns_for_users():
        return "this machine does not let unprivileged users create user namespaces (unshare -Urn fails as nobody)"
    return None


@cache
def userns_for_users() -> bool:
    """Whether the kernel lets ``nobody`` make a user and network namespace: asked of util-linux, not of tomlib, so a
    broken sandbox fails its tests instead of skipping them."""
    if shutil.which("unshare") is None:
        return True  # cannot tell: let the tests say
    probe = subprocess.run([*drop_to_nobody(), "unshare", "-Urn", "true"], capture_output=True)
    return probe.returncode == 0


@cache
def readable_copy() -> Path:
    """``tomlib/`` copied where ``nobody`` can read it (the checkout may sit under /root)."""
    folder = Path(tempfile.mkdtemp(prefix="tomlib-as-nobody-"))
    shutil.copytree(ROOT / "tomlib", folder / "tomlib", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(Path(__file__), folder / "sandbox_users.py")  # in_turn, for IN_TURN_DRIVER
    for p in [folder, *folder.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    return folder


KEYCTL, ADD_KEY = 250, 248  # x86_64 system call numbers (the tests that use them skip elsewhere)
KEYCTL_JOIN_SESSION_KEYRING, KEY_SPEC_SESSION_KEYRING = 1, -3


def new_session_keyring() -> bool:
    """Join a new, empty session keyring (what ``keyctl new_session`` does)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc.syscall(ctypes.c_long(KEYCTL), ctypes.c_long(KEYCTL_JOIN_SESSION_KEYRING), None) >= 0


def plant_key(secret: str, description: str = "tomlib-planted") -> int:
    """Add a ``user`` key holding ``secret`` to a new session keyring, as a user's login session may hold an API key;
    returns the key's serial (<= 0 when this machine has no keyrings)."""
    import ctypes

    if not new_session_keyring():
        return -1
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    data = secret.encode()
    return libc.syscall(
        ctypes.c_long(ADD_KEY),
        b"user",
        description.encode(),
        data,
        ctypes.c_long(len(data)),
        ctypes.c_long(KEY_SPEC_SESSION_KEYRING),
    )


def side_by_side(checks: Sequence[dict], limits: Limits, head_start_s: float) -> list[dict]:
    """Run checks at the same time, each in its own thread (so each gets its own launcher), the first ``head_start_s``
    ahead of the others; their results in order."""
    results: list[dict] = [{} for _ in checks]

    def one(i: int, c: dict) -> None:
        results[i] = dataclasses.asdict(run_tests(c["program"], c["tests"], limits=limits))

    threads = [threading.Thread(target=one, args=(i, c)) for i, c in enumerate(checks)]
    threads[0].start()
    time.sleep(head_start_s)
    for t in threads[1:]:
        t.start()
    for t in threads:
        t.join()
    return results


def _marker_running(marker: str) -> bool:
    return marker in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout


def in_turn(steps: Sequence[dict], limits: Limits, marker: str = "") -> list[dict]:
    """Run checks one after another in this process, so one pre-forked launcher runs them all. A step is a check
    (``program``, ``tests``) and may ask for its launcher to be killed ``kill_launcher_after_s`` into it. Each result
    says which launcher ran it (``launcher``) and whether a process with ``marker`` in its command line was still
    running when the result came back (``marker_left``) and 5 s later (``marker_stayed``)."""
    out = []
    for step in steps:
        box: list[CheckResult] = []
        worker = threading.Thread(
            target=lambda s=step, b=box: b.append(run_tests(s["program"], s["tests"], limits=limits))
        )
        worker.start()
        launchers: list[int] = []
        while worker.is_alive() and not launchers:
            launchers = _POOL.busy_pids()
            time.sleep(0.005)
        if step.get("kill_launcher_after_s") is not None and launchers:
            time.sleep(step["kill_launcher_after_s"])
            for pid in launchers:
                os.kill(pid, signal.SIGKILL)
        worker.join()
        left = bool(marker) and _marker_running(marker)
        stayed = left
        for _ in range(50):
            if not stayed:
                break
            time.sleep(0.1)
            stayed = _marker_running(marker)
        result = dataclasses.asdict(box[0])
        out.append(
            {**result, "launcher": launchers[0] if launchers else None, "marker_left": left, "marker_stayed": stayed}
        )
    return out


SEEN: dict[str, str] = {}  # who -> the isolation a check got, printed at the end of the session (conftest.py)


def open_to_all(path: Path, mode: int = 0o755) -> bool:
    """Make ``path`` a folder anyone may use with ``mode``; whether every parent lets ``nobody`` reach it."""
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(mode)
    return all(parent.stat().st_mode & 0o001 for parent in path.parents)


def _as_nobody(driver: str, spec: dict, env: dict[str, str], *, timeout: float) -> dict:
    """Run ``driver`` as nobody with ``spec`` on stdin (and ``env`` over a minimal environment); its last line."""
    base = {"PATH": "/usr/bin:/bin", "HOME": "/", "PYTHONPATH": str(readable_copy()), "LANG": "C.UTF-8"}
    out = subprocess.run(
        [*drop_to_nobody(), str(nobody_python()), "-c", driver],
        input=json.dumps(spec),
        capture_output=True,
        text=True,
        env={**base, **env},
        cwd="/",
        timeout=timeout,
    )
    assert out.returncode == 0 and out.stdout.strip(), out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@dataclass
class Checker:
    """Runs checks (and helper processes) as one user: ``this user`` or ``nobody``."""

    who: str

    @property
    def uid(self) -> int:
        return NOBODY if self.who == "nobody" else os.geteuid()

    def check(
        self,
        program: str,
        tests: str = "",
        *,
        limits: Limits | None = None,
        mode: str | None = None,
        key: str = "",
        **env: str,
    ) -> CheckResult:
        """One sandboxed check as this user; ``env`` is the caller's environment the check must not see, and ``key``
        a secret in the caller's session keyring (planted before the launcher starts, as a login session holds it)."""
        lim = limits or Limits()
        if self.who != "nobody":
            saved = {k: os.environ.get(k) for k in env}
            os.environ.update(env)
            if key:
                _POOL.close()  # the next launcher starts in the session that holds the key
                assert plant_key(key) > 0, "could not add a key to a session keyring"
            try:
                return run_tests(program, tests, limits=lim, mode=mode)
            finally:
                for k, v in saved.items():
                    os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
                if key:
                    _POOL.close()
                    new_session_keyring()  # the planted key is no longer this process's
        spec = {"program": program, "tests": tests, "limits": dataclasses.asdict(lim), "mode": mode, "key": key}
        got = _as_nobody(DRIVER, spec, env, timeout=lim.timeout_s + 60)
        if got.get("raised") == "SandboxUnavailable":
            raise SandboxUnavailable(got["message"])
        assert "raised" not in got, got
        return CheckResult(**got)

    def in_turn(self, steps: Sequence[dict], *, limits: Limits | None = None, marker: str = "") -> list[dict]:
        """Checks one after another through one launcher, as this user (see :func:`in_turn`)."""
        lim = limits or Limits()
        if self.who != "nobody":
            return in_turn(steps, lim, marker)
        spec = {"steps": list(steps), "limits": dataclasses.asdict(lim), "marker": marker}
        return _as_nobody(IN_TURN_DRIVER, spec, {}, timeout=len(steps) * (lim.timeout_s + 30))

    def side_by_side(self, checks: Sequence[dict], *, limits: Limits, head_start_s: float = 0.5) -> list[dict]:
        """Checks at the same time as this user, the first ``head_start_s`` ahead (see :func:`side_by_side`)."""
        if self.who != "nobody":
            return side_by_side(checks, limits, head_start_s)
        spec = {"checks": list(checks), "limits": dataclasses.asdict(limits), "head_start_s": head_start_s}
        return _as_nobody(SIDE_BY_SIDE_DRIVER, spec, {}, timeout=len(checks) * (limits.timeout_s + 30))

    def spawn(self, args: Sequence[str], **env: str) -> subprocess.Popen[bytes]:
        """A process of this user (a neighbour the sandboxed program should not see)."""
        prefix = drop_to_nobody() if self.who == "nobody" else []
        return subprocess.Popen([*prefix, *args], env={"PATH": "/usr/bin:/bin", **env})
