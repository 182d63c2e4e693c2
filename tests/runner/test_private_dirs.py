"""Issue 30, item 1: the runner's dask cluster keeps its folders where no other local user can swap them.

dask's default scratch folder is ``$TMPDIR/dask-scratch-space`` (or ``-<uid>``), used even when another user made it,
and every scheduler, nanny and worker puts its folder first on ``sys.path``. Here an attacker (``nobody`` when the
tests run as root) plants a ``papermill`` package in those folders before the runner starts its cluster: nothing of
the cluster may use them.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests._other_users import run_as_nobody
from tomlib.errors import UsageError
from tomlib.paths import private_dir, scratch_base

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

NOBODY = 65534
ROOT = Path(__file__).resolve().parents[2]
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--inh-caps=-all"]
CAN_DROP = os.geteuid() == 0 and shutil.which("setpriv") is not None


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


# -- the helper ------------------------------------------------------------------------------------------------------


def test_a_private_dir_is_made_for_this_user_alone(tmp_path: Path) -> None:
    old = os.umask(0)  # a careless umask changes nothing
    try:
        made = private_dir(tmp_path / "mine")
    finally:
        os.umask(old)
    assert made == tmp_path / "mine" and made.is_dir()
    assert os.lstat(made).st_uid == os.geteuid() and _mode(made) == 0o700
    assert private_dir(made) == made  # an existing one of ours is kept


def _symlink(tmp: Path) -> Path:
    (tmp / "real").mkdir(mode=0o700)
    (tmp / "link").symlink_to(tmp / "real")
    return tmp / "link"


def _file(tmp: Path) -> Path:
    (tmp / "file").write_text("")
    return tmp / "file"


def _writable(mode: int) -> Callable[[Path], Path]:
    def make(tmp: Path) -> Path:
        (tmp / "open").mkdir()
        (tmp / "open").chmod(mode)
        return tmp / "open"

    return make


def _in_open_parent(tmp: Path) -> Path:
    (tmp / "open").mkdir()
    (tmp / "open").chmod(0o777)  # anyone can rename a folder out of it and put theirs in its place
    (tmp / "open" / "mine").mkdir(mode=0o700)
    return tmp / "open" / "mine"


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (_symlink, "symbolic link"),
        (_file, "not a folder"),
        (_writable(0o777), "any user can write to it"),
        (_writable(0o770), "its group can write to it"),
        (_in_open_parent, "any user can write"),
    ],
    ids=["symlink", "file", "world-writable", "group-writable", "in-a-world-writable-folder"],
)
def test_a_private_dir_refuses_what_another_user_could_swap(
    tmp_path: Path, make: Callable[[Path], Path], why: str
) -> None:
    path = make(tmp_path)
    with pytest.raises(UsageError) as err:
        private_dir(path)
    message = str(err.value)
    assert str(path) in message and why in message and "\n" not in message, message


@pytest.mark.as_nobody
def test_a_private_dir_refuses_a_folder_another_user_made(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, NOBODY, NOBODY)
    with pytest.raises(UsageError, match=f"belongs to uid {NOBODY}"):
        private_dir(theirs)


def test_the_scratch_base_is_the_runtime_dir_when_it_is_ours_else_the_projects_state_else_tmp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime, project = tmp_path / "run", tmp_path / "project"
    runtime.mkdir(mode=0o700)
    project.mkdir()
    monkeypatch.setenv("TOMLIB_ROOT", str(project))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    assert scratch_base() == runtime / "tomlib" and _mode(runtime / "tomlib") == 0o700
    runtime.chmod(0o755)  # not ours alone: the project's state folder instead
    assert scratch_base() == project / ".tomlib" / "tmp" and _mode(project / ".tomlib" / "tmp") == 0o700
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert scratch_base() == project / ".tomlib" / "tmp"
    (project / ".tomlib").chmod(0o775)  # made under umask 002: not private, so the sticky system temp folder
    assert scratch_base() == Path(tempfile.gettempdir()) and os.stat(tempfile.gettempdir()).st_mode & stat.S_ISVTX
    assert not (project / ".tomlib" / "tmp" / "anything").exists()


NOBODY_DRIVER = """
import json, os, sys
from tomlib.errors import UsageError
from tomlib.paths import private_dir, scratch_base
home = sys.argv[1]
out = {}
mine = private_dir(os.path.join(home, "mine"))
st = os.lstat(mine)
out["mine"] = [st.st_uid, st.st_mode & 0o777]
for name in ("roots", "roots-open"):
    try:
        private_dir(os.path.join(home, name))
        out[name] = "used"
    except UsageError as exc:
        out[name] = str(exc)
os.environ["TOMLIB_ROOT"] = os.path.join(home, "project")
try:
    out["project"] = str(scratch_base())
except UsageError as exc:
    out["project"] = str(exc)
os.environ["XDG_RUNTIME_DIR"] = os.path.join(home, "run")
out["runtime"] = str(scratch_base())
print(json.dumps(out))
"""


@pytest.fixture
def nobody_home() -> Iterator[Path]:
    """A folder of nobody's, where nobody can reach it (pytest's tmp_path is root's, mode 700)."""
    home = Path(tempfile.mkdtemp(prefix="tomlib-nobody-home-"))
    os.chown(home, NOBODY, NOBODY)
    try:
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.as_nobody
def test_as_nobody_the_helper_makes_its_own_folders_and_refuses_another_users(nobody_home: Path) -> None:
    """The victim is an ordinary user: ``nobody`` runs the helper (stdlib only, from a world-readable copy of tomlib
    with Debian's Python, since the venv lies under /root) among folders root made in its home."""
    for name, mode in (("roots", 0o700), ("roots-open", 0o777)):  # another user's folders, one open to all
        (nobody_home / name).mkdir()
        (nobody_home / name).chmod(mode)
    (nobody_home / "project" / ".tomlib").mkdir(parents=True)
    os.chown(nobody_home / "project", NOBODY, NOBODY)
    (nobody_home / "project" / ".tomlib").chmod(0o777)  # root's, writable by all: nobody must refuse it
    (nobody_home / "run").mkdir(mode=0o700)
    os.chown(nobody_home / "run", NOBODY, NOBODY)
    seen = run_as_nobody(NOBODY_DRIVER, str(nobody_home))
    assert seen["mine"] == [NOBODY, 0o700]
    assert "belongs to uid 0" in seen["roots"] and "belongs to uid 0" in seen["roots-open"]
    assert seen["project"] == "/tmp"  # root's .tomlib, open to all, is not used; a fresh folder in sticky /tmp is
    assert seen["runtime"] == str(nobody_home / "run" / "tomlib")


# -- every folder above it, at every use ------------------------------------------------------------------------------

ATTACKER = 4242  # another local user (a uid of no one here: only root can give it a folder)


def _theirs(path: Path, mode: int = 0o755) -> Path:
    path.mkdir()
    os.chown(path, ATTACKER, ATTACKER)
    path.chmod(mode)
    return path


@pytest.mark.as_nobody
@pytest.mark.parametrize("mode", [0o755, 0o1777], ids=["755", "1777-sticky"])
def test_a_private_dir_refuses_a_parent_another_user_owns(tmp_path: Path, mode: int) -> None:
    """The owner of a folder may rename anything in it, sticky bit or not: our folder inside it is theirs to swap."""
    mine = _theirs(tmp_path / "theirs", mode) / "mine"
    mine.mkdir(mode=0o700)
    with pytest.raises(UsageError, match=f"inside {tmp_path / 'theirs'}, and it belongs to uid {ATTACKER}"):
        private_dir(mine)


def test_a_private_dir_refuses_a_parent_its_group_can_write(tmp_path: Path) -> None:
    (tmp_path / "group").mkdir()
    (tmp_path / "group").chmod(0o775)
    (tmp_path / "group" / "mine").mkdir(mode=0o700)
    with pytest.raises(UsageError, match="its group can write to it"):
        private_dir(tmp_path / "group" / "mine")
    (tmp_path / "group").chmod(0o1775)  # with the sticky bit, only our folder's owner (and root) may rename it
    assert private_dir(tmp_path / "group" / "mine") == tmp_path / "group" / "mine"


class _Planted:
    """A pickle that, when loaded, leaves a file: what another user would plant in a shared folder."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (open, (self.marker, "w"))  # loading it opens (creates) the marker file


def test_the_run_share_checks_its_folder_at_every_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder that was private when first used, and opened to others since (or swapped by a user who could), is
    refused before anything in it is unpickled."""
    from tomlib import runshare

    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    monkeypatch.setenv(runshare.ENV_SHARED, str(run / "shared"))
    runshare.put("claims", "ok.pickle", {"fine": 1})
    [ok] = runshare.files("claims", "*.pickle")
    assert runshare.load(ok) == {"fine": 1}
    marker = tmp_path / "ran"
    with (run / "shared" / "claims" / "evil.pickle").open("wb") as fh:
        pickle.dump(_Planted(str(marker)), fh)
    run.chmod(0o777)  # now any user could have swapped the folder in it
    with pytest.raises(UsageError, match="any user can write to it"):
        runshare.files("claims", "*.pickle")
    with pytest.raises(UsageError, match="any user can write to it"):
        runshare.load(run / "shared" / "claims" / "evil.pickle")
    assert not marker.exists()


@pytest.mark.as_nobody
def test_the_run_share_reads_no_link_and_no_file_of_another_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tomlib import runshare

    monkeypatch.setenv(runshare.ENV_SHARED, str(tmp_path / "shared"))
    runshare.put("played", "real.pickle", [1, 2])
    part = runshare.folder("played")
    assert part is not None
    (part / "link.pickle").symlink_to(part / "real.pickle")
    assert runshare.load(part / "link.pickle") is None  # a link is not followed
    (part / "real.pickle").chmod(0o666)
    assert runshare.load(part / "real.pickle") is None  # a file others can write is not read
    if CAN_DROP:
        (part / "real.pickle").chmod(0o600)
        os.chown(part / "real.pickle", ATTACKER, ATTACKER)
        assert runshare.load(part / "real.pickle") is None  # nor one another user owns


RUNSHARE_DRIVER = """
import json, os, pickle, sys
from tomlib.errors import UsageError
from tomlib import runshare
from tomlib.paths import private_dir
home = sys.argv[1]
out = {}
try:
    private_dir(os.path.join(home, "theirs", "mine"))
    out["in-theirs"] = "used"
except UsageError as exc:
    out["in-theirs"] = str(exc)
run = os.path.join(home, "run")
os.mkdir(run, 0o700)
os.environ[runshare.ENV_SHARED] = os.path.join(run, "shared")
runshare.put("claims", "ok.pickle", 1)
out["first"] = [runshare.load(p) for p in runshare.files("claims", "*.pickle")]
marker = os.path.join(home, "ran")
with open(os.path.join(run, "shared", "claims", "evil.pickle"), "wb") as fh:
    fh.write(sys.stdin.buffer.read())
os.chmod(run, 0o777)
try:
    out["second"] = [runshare.load(p) for p in runshare.files("claims", "*.pickle")]
except UsageError as exc:
    out["second"] = str(exc)
out["ran"] = os.path.exists(marker)
print(json.dumps(out))
"""


@pytest.mark.as_nobody
def test_as_nobody_the_run_share_refuses_folders_another_user_can_change(nobody_home: Path) -> None:
    """The victim is ``nobody``: its folder inside another user's (755) is refused, and its run's shared folder is
    checked again before each load, so a pickle planted after the folder was opened to others never runs."""
    mine = _theirs(nobody_home / "theirs") / "mine"
    mine.mkdir(mode=0o700)
    os.chown(mine, NOBODY, NOBODY)
    planted = pickle.dumps(_Planted(str(nobody_home / "ran")))
    seen = run_as_nobody(RUNSHARE_DRIVER, str(nobody_home), stdin=planted)
    assert f"belongs to uid {ATTACKER}" in seen["in-theirs"], seen
    assert seen["first"] == [1]
    assert "any user can write to it" in seen["second"] and seen["ran"] is False, seen


# -- the cluster -----------------------------------------------------------------------------------------------------

# What an attacker puts in the folders dask would use: it notes who imported it, then behaves as the real papermill.
PLANTED = """
import importlib.machinery, os, sys
_here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(_here, "imported-by"), "a") as _fh:
    _fh.write(f"uid {os.getuid()} pid {os.getpid()}\\n")
_elsewhere = [p for p in sys.path if not os.path.abspath(p or ".").startswith(_here)]
_spec = importlib.machinery.PathFinder.find_spec("papermill", _elsewhere)
__path__[:] = list(_spec.submodule_search_locations)
__file__ = _spec.origin
with open(_spec.origin) as _fh:
    exec(compile(_fh.read(), _spec.origin, "exec"))
"""


def _plant(folders: list[Path], uid: int = NOBODY) -> None:
    """Make each folder (mode 777) with a ``papermill`` package inside: as ``uid`` (``nobody``) when we are root."""
    script = (
        'umask 0; for d in "$@"; do mkdir "$d" "$d/papermill" && printf "%s" "$PLANTED" > "$d/papermill/__init__.py"; '
        "done"
    )
    cmd = ["/bin/sh", "-c", script, "sh", *map(str, folders)]
    env = {"PATH": "/usr/bin:/bin", "PLANTED": PLANTED}
    as_uid = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all"]
    subprocess.run([*as_uid, *cmd] if CAN_DROP else cmd, env=env, check=True, timeout=30)


def _listing(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.lstat().st_size for p in folder.rglob("*")}


def _under(path: str, folder: Path) -> bool:
    return Path(os.path.abspath(path)).is_relative_to(folder)


@pytest.mark.as_nobody
def test_the_local_cluster_uses_no_folder_another_user_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tomlib.runner._cluster import open_client

    shared = Path(tempfile.mkdtemp(prefix="tomlib-shared-tmp-"))  # a temp folder every user can write, as /tmp
    shared.chmod(0o1777)
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    try:
        planted = [shared / "dask-scratch-space", shared / f"dask-scratch-space-{os.getuid()}"]
        _plant(planted)
        before = {p: _listing(p) for p in planted}
        monkeypatch.setenv("TMPDIR", str(shared))  # the cluster's processes look here for dask's default folder
        monkeypatch.setattr(tempfile, "tempdir", str(shared))
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
        with open_client(1) as client:
            assert client.submit(int, 41).result() == 41
            worker_dirs = list(client.run(lambda dask_worker: dask_worker.local_directory).values())
            nanny_dirs = list(client.run(lambda dask_worker: dask_worker.local_directory, nanny=True).values())
            scheduler_dir = client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.local_directory)
            worker_paths = [p for paths in client.run(lambda: list(__import__("sys").path)).values() for p in paths]
            papermill = list(client.run(lambda: __import__("papermill").__file__).values())
            driver_paths = list(sys.path)
            during = sorted(os.listdir(runtime / "tomlib")) if (runtime / "tomlib").exists() else []
        for p in planted:  # the attacker's folders: nothing imported from them, nothing written into them
            assert not (p / "imported-by").exists(), (p / "imported-by").read_text()
            assert _listing(p) == before[p], f"the cluster wrote into {p}"
        dirs = [*worker_dirs, *nanny_dirs, scheduler_dir]
        assert not [d for d in [*dirs, *worker_paths, *driver_paths] if _under(d, shared)]
        assert all(_under(d, runtime / "tomlib") for d in dirs), dirs
        assert not any(_under(f, shared) for f in papermill), papermill
        assert len(during) == 1 and not os.listdir(runtime / "tomlib")  # one folder per cluster, removed after
        assert not [p for p in sys.path if _under(p, runtime)]  # the driver's sys.path is as it was
    finally:
        shutil.rmtree(shared, ignore_errors=True)


VICTIM = """
import json, os
from tomlib.runner._cluster import open_client


def imported():
    import papermill

    return papermill.__file__


if __name__ == "__main__":
    with open_client(1) as client:
        print(json.dumps(client.submit(imported, pure=False).result()))
"""


def _site_packages_for_nobody() -> str | None:
    """The venv's packages, when ``nobody`` can import dask from them with Debian's Python (the same 3.11 ABI)."""
    import distributed

    site = str(Path(distributed.__file__).resolve().parents[1])
    python = "/usr/bin/python3.11"
    if not (CAN_DROP and os.access(python, os.X_OK)):
        return None
    probe = subprocess.run(
        [*AS_NOBODY, python, "-c", "import distributed, papermill"],
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": site},
        capture_output=True,
        timeout=120,
    )
    return site if probe.returncode == 0 else None


@pytest.mark.as_nobody
def test_as_nobody_the_local_cluster_uses_no_folder_another_user_made(nobody_home: Path) -> None:
    """The victim is an ordinary user (``nobody``), the attacker another one (uid 4242): dask's ``-<uid>`` fallback
    and its shared folder both planted before nobody's run starts its cluster."""
    site = _site_packages_for_nobody()
    if site is None:
        pytest.skip("nobody cannot run the venv's packages here (needs root, setpriv and Debian's python3.11)")
    shared = Path(tempfile.mkdtemp(prefix="tomlib-shared-tmp-"))
    shared.chmod(0o1777)
    try:
        planted = [shared / "dask-scratch-space", shared / f"dask-scratch-space-{NOBODY}"]
        _plant(planted, uid=4242)
        code = nobody_home / "code"
        shutil.copytree(ROOT / "tomlib", code / "tomlib", ignore=shutil.ignore_patterns("__pycache__"))
        (code / "victim.py").write_text(VICTIM)
        project = nobody_home / "project"
        project.mkdir()
        shutil.copy(ROOT / "pyproject.toml", project / "pyproject.toml")
        for p in [nobody_home, *nobody_home.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
            os.chown(p, NOBODY, NOBODY)
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(nobody_home),
            "TMPDIR": str(shared),
            "TOMLIB_ROOT": str(project),
            "PYTHONPATH": f"{code}:{site}",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        out = subprocess.run(
            [*AS_NOBODY, "/usr/bin/python3.11", str(code / "victim.py")],
            env=env,
            cwd=project,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert out.returncode == 0, out.stderr[-2000:]
        imported = json.loads(out.stdout.strip().splitlines()[-1])
        assert not _under(imported, shared), imported
        for p in planted:
            assert not (p / "imported-by").exists(), (p / "imported-by").read_text()
        assert not os.listdir(project / ".tomlib" / "tmp")  # its own scratch folder, removed when the cluster closed
    finally:
        shutil.rmtree(shared, ignore_errors=True)
