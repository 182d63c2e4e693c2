"""Side runs keep to themselves: a run with another profile, model or parameter values writes a results folder of its
own unless told to replace the series' outputs, and says where in one line before it starts; the series itself
writes results/ as always. The runner is stood in for: these tests read what ``tomlib run`` hands it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tomlib.__main__ import main
from tomlib.runner import NotebookResult

pytestmark = pytest.mark.tier("fast")


@pytest.fixture
def handed(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """What ``tomlib run`` hands the runner and the report, with neither run: the results folder and the rest."""
    got: dict[str, Any] = {}

    def run_notebooks(profile: Any, names: Any = (), **kw: Any) -> list[NotebookResult]:
        got.update(kw, profile=profile.name, names=list(names))
        Path(kw["results"]).mkdir(parents=True, exist_ok=True)
        return [NotebookResult(str(n), "ok") for n in names]

    def build_report(results: Any = None) -> Path:
        got["report"] = Path(results)
        return Path(results) / "REPORT.md"

    monkeypatch.setattr("tomlib.runner.run_notebooks", run_notebooks)
    monkeypatch.setattr("tomlib.report.build_report", build_report)
    return got


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert main(["run", *argv, "--no-html"]) == 0
    return capsys.readouterr().out.strip().splitlines()


def test_the_series_writes_its_results_folder_and_prints_the_html_report(
    handed: dict[str, Any], isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Fails on main for the last line: it printed REPORT.md, where README says to open REPORT.html."""
    lines = run(capsys, "09")
    assert handed["results"] == isolated / "results" and handed["report"] == isolated / "results"
    assert not any(line.startswith("side run") for line in lines), lines
    assert lines[-1].startswith(f"report: {isolated / 'results' / 'REPORT.html'}"), lines
    # a -p value that is what the notebook takes anyway changes nothing: still the series
    run(capsys, "01", "-p", "episodes", "30", "-p", "llm_mode", "replay")
    assert handed["results"] == isolated / "results"


@pytest.mark.parametrize(
    ("argv", "folder"),
    [
        (["09", "--profile", "sim"], "sim"),
        (["04", "05", "-p", "seed", "3", "-p", "model", ""], "model=empty-seed=3"),
        (["01", "--profile", "smoke", "-p", "episodes", "5"], "smoke-episodes=5"),
        (["09", "-p", "models", "sim", "-p", "llm_mode", "auto"], "llm_mode=auto-models=sim"),
        (["08", "--stop-when-decided", "--claims", "coalition.higher_tom_no_gain"], "waves"),
    ],
)
def test_a_side_run_writes_a_folder_of_its_own_named_after_what_changed(
    handed: dict[str, Any], isolated: Path, capsys: pytest.CaptureFixture[str], argv: list[str], folder: str
) -> None:
    """Fails on main: README's `--profile sim` example replaced the series' 09 and two of its tables."""
    if "--stop-when-decided" in argv:  # run_in_waves hands each notebook to the runner with the folder
        pytest.importorskip("confseq.boundaries")
    lines = run(capsys, *argv)
    own = isolated / "results" / "side" / folder
    assert handed["results"] == own and handed["report"] == own, lines
    said = [line for line in lines if line.startswith("side run")]
    assert len(said) == 1 and "results/side/" + folder in said[0] and "--replace-series" in said[0], lines
    assert lines.index(said[0]) == 0  # before anything the run prints
    assert lines[-1].startswith(f"report: {own / 'REPORT.html'}")


def test_replacing_the_series_outputs_is_asked_for_and_said(
    handed: dict[str, Any], isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = run(capsys, "09", "--profile", "sim", "--replace-series")
    assert handed["results"] == isolated / "results"
    assert lines[0].startswith("side run (profile sim) into the series' results folder") and "replaces" in lines[0]
    lines = run(capsys, "09", "--profile", "sim", "--results", str(isolated / "results"))  # the same, by --results
    assert handed["results"] == isolated / "results" and "replaces" in lines[0] and "(--results)" in lines[0]
    lines = run(capsys, "09", "--profile", "sim", "--results", str(isolated / "mine"))  # a folder of the user's
    assert handed["results"] == isolated / "mine" and lines[0].endswith(f"writing to {isolated / 'mine'} (--results)")


def test_a_side_folder_gets_the_runners_safety_checks(isolated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """results/side/ that any user can write to is refused in one line before any kernel, as results/ would be."""
    side = isolated / "results" / "side"
    side.mkdir(parents=True)
    side.chmod(0o777)
    assert main(["run", "09", "--profile", "sim", "--no-html"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tomlib: error: Refusing") and "as a results folder" in err and "\n" not in err, err
    assert not (side / "sim").exists()


def test_a_typo_is_named_before_the_line_about_where_the_run_goes(
    handed: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "00", "-p", "llm_mode", "replya", "--no-html"]) == 2
    out, err = capsys.readouterr()
    assert "did you mean 'replay'" in err and "side run" not in out
