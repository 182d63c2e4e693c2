"""The suite's tiers: every test names what makes it slow, and a test marked ``fast`` is held to it.

``pytest -m fast`` is the inner loop; ``./reproduce.sh test`` runs every tier. A test carries its tier as a marker on
itself or its class (``@pytest.mark.series``), or takes its module's default
(``pytestmark = pytest.mark.tier("fast")``); the closest one counts, so a module of fast tests can hold one ``series``
test and ``-m fast`` leaves it out. A test with no tier fails, naming the tiers, so nothing lands unmarked. A ``fast``
test that starts what a slower tier names (a Jupyter kernel, a dask cluster, Chromium, the local model's server,
another user's process) fails, naming the tier it belongs to. Tests of the ``as_nobody`` tier skip unless the suite
runs as root with ``setpriv``: only root can make another user's folders or drop to ``nobody``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests._other_users import CAN_DROP

TIERS = {
    "fast": "the inner loop (pytest -m fast): no kernel, cluster, browser, local model or other user",
    "series": "executes notebooks: a Jupyter kernel each, on the runner's local dask cluster",
    "browser": "drives a headless Chromium",
    "as_nobody": "acts as another local user (nobody, uid 4242); needs root and setpriv, skipped otherwise",
    "live_local": "makes real calls to the bundled local model (needs the `local` extra)",
    "cluster": "opens dask clusters of worker processes without executing notebooks",
    "sim": "plays hundreds of calls against the simulated model to check rates against their declared truth",
    "dataset": "checks every reference solution of a bundled dataset in the sandbox (164 HumanEval, 974 MBPP)",
    "grading": "grades class notebooks: a sandboxed interpreter for each answer and check, seconds each",
}
SERIES_TIMEOUT = 1800
"""Seconds a test that reads the executed offline series may take, its making included (pyproject's 600 s is for
one test's own work)."""
TIER = pytest.StashKey[set[str]]()
"""Each test's resolved tiers, set once at collection."""

_PROGRAMS = {  # a program a fast test must not start, and the tier that starts it
    "setpriv": "as_nobody",
    "runuser": "as_nobody",
    "su": "as_nobody",
    "sudo": "as_nobody",
    "chromium": "browser",
    "chromium-browser": "browser",
}


def tiers_of(item: pytest.Item) -> set[str]:
    """The tiers named by the closest node (test, class, module) that names any, as a tier marker or as a
    module's default, ``pytest.mark.tier("fast")``."""
    for node in reversed(item.listchain()):
        found = {m.name for m in node.own_markers if m.name in TIERS}
        found |= {str(m.args[0]) for m in node.own_markers if m.name == "tier" and m.args}
        if found:
            return found
    return set()


@pytest.hookimpl(tryfirst=True)  # before ``-m`` selects: it must see each test's own tier, not its module's default
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip = pytest.mark.skip(reason="acts as another user: needs root and setpriv (as_nobody tier)")
    for item in items:
        tiers = item.stash[TIER] = tiers_of(item)
        for tier in tiers & TIERS.keys():
            item.add_marker(tier)
        if "as_nobody" in tiers and not CAN_DROP:
            item.add_marker(skip)  # before its fixtures run: they make folders for other uids
    # The tests that read the executed offline series go first, side by side: pytest-xdist hands each worker a
    # contiguous half of this order, so one worker makes the series and then reads it, while the other works through
    # its half instead of waiting on the series' lock (it waited 418 s of a 1,754 s run when they were far apart).
    items.sort(key=lambda item: not _reads_series(item))
    for item in filter(_reads_series, items):
        # pytest-timeout counts a test's fixtures in its time: the first reader makes the whole series (335 s on an
        # idle 2-core machine; a CI run beside the other worker's half passed 600 s), and the others wait for it.
        item.add_marker(pytest.mark.timeout(SERIES_TIMEOUT))


def _reads_series(item: pytest.Item) -> bool:
    return "offline_series" in getattr(item, "fixturenames", ())


def pytest_runtest_setup(item: pytest.Item) -> None:
    tiers = item.stash[TIER]
    if not tiers:
        pytest.fail(
            f"{item.nodeid} is in no tier: mark it (or its module's pytestmark) with one of {', '.join(TIERS)} "
            "(what each means: tests/_tiers.py, pyproject.toml's markers)",
            pytrace=False,
        )
    if unknown := tiers - TIERS.keys():
        pytest.fail(f"{item.nodeid} names the tier {sorted(unknown)}; the tiers are {', '.join(TIERS)}", pytrace=False)
    if "fast" in tiers and len(tiers) > 1:
        pytest.fail(f"{item.nodeid} is marked fast and {sorted(tiers - {'fast'})}: a test is fast or it is not")


def _program_tier(args: Any) -> tuple[str, str] | None:
    argv = [args] if isinstance(args, str | bytes | os.PathLike) else list(args)
    for word in argv[:8]:
        text = os.fsdecode(word)
        name = Path(text).name
        if name in _PROGRAMS:
            return _PROGRAMS[name], name
        if "playwright" in text:
            return "browser", "playwright's driver"
        if "_local_serve" in text or "llama_cpp" in text:
            return "live_local", "the local model's server"
        if name in ("papermill", "jupyter-lab", "jupyter-nbconvert") or text in ("papermill", "nbclient"):
            return "series", name
    words = [os.fsdecode(w) for w in argv]
    if "tomlib" in words and ({"run", "sweep"} & set(words[words.index("tomlib") :])):
        return "series", "tomlib run"
    return None


@pytest.fixture(autouse=True)
def _fast_stays_fast(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """In a ``fast`` test, starting what a slower tier names fails the test, naming that tier (also when library
    code caught the error: it is noted here and checked at teardown)."""
    if request.node.stash[TIER] != {"fast"}:
        yield
        return
    seen: list[str] = []

    def refuse(what: str, tier: str) -> None:
        seen.append(f"{what}: mark it {tier}")
        pytest.fail(f"{request.node.nodeid} is marked fast but {what}: mark it {tier}", pytrace=False)

    real_popen = subprocess.Popen.__init__

    def popen(self: subprocess.Popen, args: Any, *a: Any, **k: Any) -> None:  # type: ignore[type-arg]
        if (found := _program_tier(args)) is not None:
            refuse(f"started {found[1]}", found[0])
        real_popen(self, args, *a, **k)

    monkeypatch.setattr(subprocess.Popen, "__init__", popen)
    real_chown = os.chown

    def chown(path: Any, uid: int, gid: int, *a: Any, **k: Any) -> None:
        if uid not in (-1, os.geteuid()):
            refuse(f"gave a file to uid {uid}", "as_nobody")
        real_chown(path, uid, gid, *a, **k)

    monkeypatch.setattr(os, "chown", chown)
    from distributed import SpecCluster
    from jupyter_client.provisioning.local_provisioner import LocalProvisioner

    real_cluster = SpecCluster.__init__
    real_launch = LocalProvisioner.launch_kernel

    def cluster(self: Any, *a: Any, **k: Any) -> None:
        refuse("opened a dask cluster", "series (it executes notebooks) or cluster")
        real_cluster(self, *a, **k)

    async def launch(self: Any, *a: Any, **k: Any) -> Any:
        refuse("started a Jupyter kernel", "series")
        return await real_launch(self, *a, **k)

    monkeypatch.setattr(SpecCluster, "__init__", cluster)
    monkeypatch.setattr(LocalProvisioner, "launch_kernel", launch)
    yield
    if seen:
        pytest.fail(f"{request.node.nodeid} is marked fast but " + "; ".join(seen), pytrace=False)
