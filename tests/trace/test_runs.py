"""`python -m tomlib runs list | prune`: superseded run logs go, the ones executed notebooks use stay."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tomlib.__main__ import main
from tomlib.runner import run_notebooks
from tomlib.trace import RunLog
from tomlib.trace._runs import in_use, list_runs

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


@pytest.mark.series
def test_prune_removes_only_runs_no_executed_notebook_uses(
    isolated: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("TOMLIB_TRANSCRIPTS")
    run_notebooks("default", ["00"], html=False, progress=False)
    first = {r.run_id for r in list_runs()}
    run_notebooks("default", ["00"], html=False, progress=False, force=True)  # a rerun supersedes the first run
    runs = list_runs()
    second = {r.run_id for r in runs} - first
    assert len(first) == 1 and len(second) == 1 and in_use(runs) == second
    # the runner compressed each finished run's log; its index and the explorer read it as before
    assert {p.name for p in (isolated / "results" / "runs").glob("*/events.jsonl*")} == {"events.jsonl.gz"}

    assert main(["runs", "list"]) == 0
    listed = capsys.readouterr().out
    assert f"{next(iter(first))}" in listed and "unused" in listed and "in use" in listed
    assert main(["runs", "prune", "--dry-run"]) == 0
    assert "would remove" in capsys.readouterr().out and {r.run_id for r in list_runs()} == first | second
    assert main(["runs", "prune", "--older-than", "1"]) == 0  # the superseded run is minutes old: kept
    assert {r.run_id for r in list_runs()} == first | second
    assert main(["runs", "prune"]) == 0
    assert {r.run_id for r in list_runs()} == second
    assert not (isolated / "results" / "runs" / next(iter(first))).exists()


KILLED_RUN = """
import os
from tomlib.trace import RunLog
log = RunLog("adaptive_tom.table2")
log.event("action", {"i": 0})
log.flush()
print(log.run_id, flush=True)
os._exit(0)  # as a kill leaves it: no close, so no index
"""


def _dead_pid() -> int:
    """A PID that surely names no process any more: a child that has exited and been reaped."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _attempts(folder: Path) -> tuple[Path, Path]:
    """An attempt file left by a dead worker and one of a worker still running (this process)."""
    folder.mkdir(parents=True, exist_ok=True)
    dead, live = (
        folder / f".02_adaptive_tom_table2.attempt-{_dead_pid()}.ipynb",
        folder / f".03_x.attempt-{os.getpid()}.ipynb",
    )
    for path in (dead, live):
        path.write_text("{}")
    return dead, live


def test_prune_removes_stale_attempts_and_killed_runs_but_not_what_is_still_running(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = isolated / "results"
    stale, running = _attempts(results / "notebooks")
    sweep_stale, _ = _attempts(results / "sweeps" / "s" / "notebooks")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_RUN], env=env, check=True, capture_output=True, text=True
    ).stdout.strip()
    live = RunLog("quickstart")  # a run another process is still writing
    try:
        assert main(["runs", "prune", "--dry-run"]) == 0
        out = capsys.readouterr().out
        assert f"would remove {killed}" in out and live.run_id not in out
        assert f"would remove notebooks/{stale.name}" in out and f"sweeps/s/notebooks/{sweep_stale.name}" in out
        assert running.name not in out and stale.exists()
        assert main(["runs", "prune"]) == 0
        out = capsys.readouterr().out
        assert "2 stale attempt file(s)" in out
        assert not stale.exists() and not sweep_stale.exists() and running.exists()
        assert {r.run_id for r in list_runs()} == {live.run_id}
    finally:
        live.close()


@pytest.mark.series
def test_a_run_starts_by_removing_attempt_files_of_dead_workers(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOMLIB_TRANSCRIPTS")
    stale, running = _attempts(isolated / "results" / "notebooks")
    (outcome,) = run_notebooks("default", ["00"], html=False, progress=False)
    assert outcome.status == "ok" and Path(outcome.output).exists()
    assert not stale.exists() and running.exists()
