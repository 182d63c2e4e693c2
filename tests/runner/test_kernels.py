"""Warm kernels (:mod:`tomlib.runner._kernels`): a worker starts its next notebook's kernel while one runs, uses it
only when it was started for exactly what a cold one would get, and leaves no kernel behind. A kernel imports tomlib's
modules at start-up only for a notebook that uses tomlib."""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from tomlib.runner import _kernels
from tomlib.runner._papermill import execute_one

from .test_runner import write_nb

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

psutil = pytest.importorskip("psutil")

SAYS = (
    "import os, sys, time\n"
    "since_boot = int(open(f'/proc/{os.getpid()}/stat').read().rsplit(')', 1)[1].split()[19]) / "
    "os.sysconf('SC_CLK_TCK')\n"
    "print(os.getpid(), since_boot, time.clock_gettime(time.CLOCK_BOOTTIME), 'tomlib.claims' in sys.modules, "
    "'tomlib' in dir(), 'pandas' in dir())"
)
"""Printed by a notebook: its kernel's pid, when the kernel started and when this line ran (seconds since boot, the
clock of /proc), whether tomlib was imported before the notebook, and whether two names are in its namespace."""
USES_TOMLIB = "from tomlib.paths import project_root\n"
"""A line that makes a notebook one of tomlib's (its kernel imports tomlib at start-up) and binds no ``tomlib``."""


def said(executed: Path) -> list[str]:
    """What the notebook's last cell printed (:data:`SAYS`)."""
    return str(nbformat.read(executed, 4).cells[-1].outputs[0]["text"]).split()


def gone(pid: int, timeout: float = 20.0) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.1)
    return False


@pytest.fixture
def closed() -> Iterator[None]:
    yield
    _kernels.close()


@pytest.mark.series
def test_every_kernel_has_tomlib_imported_and_an_empty_namespace(tmp_path: Path, closed: None) -> None:
    nb = write_nb(tmp_path / "in.ipynb", "x = 1", USES_TOMLIB + SAYS)
    status, _, error, _ = execute_one(nb, tmp_path / "out.ipynb", {})
    assert status == "ok", error
    pid, _, _, preloaded, tomlib_name, pandas_name = said(tmp_path / "out.ipynb")
    assert (preloaded, tomlib_name, pandas_name) == ("True", "False", "False")
    assert gone(int(pid)), "the notebook's kernel is shut down once it is done"


@pytest.mark.series
def test_a_notebook_that_uses_nothing_of_tomlib_gets_a_kernel_that_imported_none_of_it(
    tmp_path: Path, closed: None
) -> None:
    nb = write_nb(tmp_path / "in.ipynb", "x = 1", SAYS)
    status, _, error, _ = execute_one(nb, tmp_path / "out.ipynb", {})
    assert status == "ok", error
    pid, _, _, preloaded, tomlib_name, pandas_name = said(tmp_path / "out.ipynb")
    assert (preloaded, tomlib_name, pandas_name) == ("False", "False", "False")
    assert gone(int(pid))


def test_a_kernel_imports_at_start_up_what_its_notebook_will(tmp_path: Path) -> None:
    """Every notebook of the series uses tomlib: its kernel imports all of PRELOAD. Another notebook's imports only
    the modules of PRELOAD it names itself; one that cannot be read, all of it."""
    from tomlib.paths import project_root

    series = sorted((project_root() / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert len(series) >= 15 and all(_kernels.preload_for(nb) == _kernels.PRELOAD for nb in series)
    assert _kernels.preload_for(write_nb(tmp_path / "a.ipynb", "x = 1", "import os, sys\nprint(x)")) == ()
    own = write_nb(tmp_path / "b.ipynb", "x = 1", "import seaborn as sns, json\n  from matplotlib import pyplot")
    assert _kernels.preload_for(own) == ("matplotlib.pyplot", "seaborn")
    assert _kernels.preload_for(write_nb(tmp_path / "c.ipynb", "import tomlib.claims as c", "")) == _kernels.PRELOAD
    (tmp_path / "d.ipynb").write_text("not a notebook")
    assert _kernels.preload_for(tmp_path / "d.ipynb") == _kernels.PRELOAD
    assert "; import " not in " ".join(_kernels.kernel_arguments(()))


@pytest.mark.series
def test_a_warm_kernel_is_used_only_when_it_fits(tmp_path: Path, closed: None) -> None:
    nb = write_nb(tmp_path / "in.ipynb", "x = 1", USES_TOMLIB + SAYS)
    env = dict(os.environ)
    # started for this notebook's folder and environment: the notebook runs in it, as a cold one would
    _kernels.warm("python3", str(tmp_path), env, _kernels.new_folder())
    spare = _kernels._spare
    assert spare is not None
    km = _kernels.take("python3", str(tmp_path), env)
    assert km is spare.km
    status, _, error, _ = execute_one(nb, tmp_path / "warm.ipynb", {}, km=km)
    assert status == "ok", error
    pid, _, _, preloaded, tomlib_name, pandas_name = said(tmp_path / "warm.ipynb")
    assert int(pid) == spare.km.provisioner.pid
    assert (preloaded, tomlib_name, pandas_name) == ("True", "False", "False")  # as the cold kernel above
    assert gone(int(pid))
    # one variable differs (another task's manifest): the spare is not taken, and it is shut down
    _kernels.warm("python3", str(tmp_path), env, _kernels.new_folder())
    other = _kernels._spare
    assert other is not None
    assert _kernels.take("python3", str(tmp_path), {**env, "TOMLIB_TABLES_MANIFEST": "/elsewhere"}) is None
    assert gone(other.km.provisioner.pid)
    _kernels.warm("python3", str(tmp_path), env, _kernels.new_folder())
    third = _kernels._spare
    assert third is not None
    assert _kernels.take("python3", str(tmp_path / "other-folder"), env) is None
    assert gone(third.km.provisioner.pid)
    # started with tomlib's imports, for a notebook that uses none: not taken either
    _kernels.warm("python3", str(tmp_path), env, _kernels.new_folder())
    fourth = _kernels._spare
    assert fourth is not None
    assert _kernels.take("python3", str(tmp_path), env, ()) is None
    assert gone(fourth.km.provisioner.pid)


def run_three(tmp_path: Path) -> list[list[str]]:
    """Three notebooks of 1.5 s in one job: what their kernels said (:data:`SAYS`)."""
    from tomlib.runner import Profile, run_notebooks

    d = tmp_path / "nbs"
    d.mkdir()
    for i in (1, 2, 3):
        write_nb(d / f"0{i}_k.ipynb", "results_dir = ''", f"{USES_TOMLIB}import time\ntime.sleep(1.5)\n{SAYS}")
    out = run_notebooks(Profile(name="t"), directory=d, progress=False, html=False)
    assert [o.status for o in out] == ["ok"] * 3, [o.error for o in out]
    return [said(Path(o.output)) for o in out]


@pytest.mark.series
def test_a_series_runs_each_next_notebook_in_a_kernel_started_before_it_and_leaves_none(
    tmp_path: Path, isolated: Path
) -> None:
    kernels = run_three(tmp_path)
    for before, kernel in itertools.pairwise(kernels):
        assert float(kernel[1]) < float(before[2]) - 1, "the next kernel started while the notebook before still ran"
    assert all(k[3:] == ["True", "False", "False"] for k in kernels)
    assert all(gone(int(k[0]), timeout=10) for k in kernels), "no kernel outlives the run"


@pytest.mark.series
def test_warm_kernels_can_be_switched_off_and_a_typo_is_refused_before_the_cluster_starts(
    tmp_path: Path, isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tomlib.errors import UsageError
    from tomlib.runner._cluster import driver_env

    monkeypatch.setenv(_kernels.ENV_WARM, "0")
    kernels = run_three(tmp_path)
    for before, kernel in itertools.pairwise(kernels):
        assert float(kernel[1]) > float(before[2]), "each kernel started once the notebook before was done"
    monkeypatch.setenv(_kernels.ENV_WARM, "yes")
    with pytest.raises(UsageError, match=r"TOMLIB_WARM_KERNELS must be 1 .* or 0 .*got 'yes'"):
        driver_env(1)
