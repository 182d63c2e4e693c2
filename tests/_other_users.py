"""Acting as other local users in tests: ``nobody`` as an ordinary victim, uid 4242 as an attacker.

CI and our machines run the tests as root, which can make folders for any uid and drop to one with ``setpriv``. The
victim's code runs as ``nobody`` with Debian's ``/usr/bin/python3.11`` (the venv's interpreter may sit under /root,
which ``nobody`` cannot enter) on a world-readable copy of ``tomlib/``, and, where it needs them, the venv's packages
(the same 3.11 ABI). Tests that need this skip, saying why, when the tests already run as an ordinary user.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

import pytest

NOBODY = 65534
ATTACKER = 4242  # a uid of no one here: only root can give it a folder
ROOT = Path(__file__).resolve().parents[1]
CAN_DROP = os.geteuid() == 0 and shutil.which("setpriv") is not None
PYTHON = "/usr/bin/python3.11"


def as_uid(uid: int) -> list[str]:
    """The command prefix that runs what follows as ``uid`` (its own group, no capabilities)."""
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all"]


def give(path: Path, uid: int, mode: int) -> Path:
    """``path`` (made when missing) owned by ``uid`` with ``mode``: what another user would have made."""
    path.mkdir(exist_ok=True)
    os.chown(path, uid, uid)
    path.chmod(mode)
    return path


@cache
def venv_site() -> str | None:
    """The venv's packages, when ``nobody`` can import them with Debian's Python; None otherwise."""
    import zstandard

    site = str(Path(zstandard.__file__).resolve().parents[1])
    if not (CAN_DROP and os.access(PYTHON, os.X_OK)):
        return None
    probe = subprocess.run(
        [*as_uid(NOBODY), PYTHON, "-c", "import zstandard, orjson, pydantic"],
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": site},
        capture_output=True,
        timeout=120,
    )
    return site if probe.returncode == 0 else None


def readable_tomlib() -> Path:
    """A fresh world-readable copy of ``tomlib/`` (and ``pyproject.toml``, so it is a project root); the caller
    removes it."""
    folder = Path(tempfile.mkdtemp(prefix="tomlib-as-nobody-"))
    shutil.copytree(ROOT / "tomlib", folder / "tomlib", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", folder / "pyproject.toml")
    for p in [folder, *folder.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    return folder


def run_as_nobody(driver: str, *args: str, packages: bool = False, stdin: bytes = b"", timeout: float = 120) -> dict:
    """Run ``driver`` (Python source printing one JSON object last) as ``nobody`` on a readable copy of tomlib, with
    the venv's packages when ``packages``; returns that object. Skips when ``nobody`` cannot run it here."""
    if not (CAN_DROP and os.access(PYTHON, os.X_OK)):
        pytest.skip("needs root, setpriv and Debian's python3.11 to run as nobody")
    site = venv_site() if packages else ""
    if packages and site is None:
        pytest.skip("nobody cannot import the venv's packages with Debian's python3.11 here")
    copy = readable_tomlib()
    try:
        env = {
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": ":".join(p for p in (str(copy), site) if p),
            "PYTHONDONTWRITEBYTECODE": "1",
            "TOMLIB_ROOT": str(copy),
            "HOME": "/nonexistent",
        }
        out = subprocess.run(
            [*as_uid(NOBODY), PYTHON, "-c", driver, *args],
            input=stdin,
            capture_output=True,
            env=env,
            cwd="/",
            timeout=timeout,
        )
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    assert out.returncode == 0, out.stderr.decode()[-3000:]
    return dict(json.loads(out.stdout.decode().strip().splitlines()[-1]))
