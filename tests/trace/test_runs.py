"""`python -m tomlib runs list | prune`: superseded run logs go, the ones executed notebooks use stay."""

from __future__ import annotations

from pathlib import Path

import pytest

from tomlib.__main__ import main
from tomlib.runner import run_notebooks
from tomlib.trace._runs import in_use, list_runs


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
