"""The class's working copy: edits and autosaves stay out of the committed notebooks, and class work writes into the
class's own results folder, never into the researcher's results/."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from tomlib.classroom import lab_env, main, prepare, quiet_lab
from tomlib.paths import project_root

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def test_the_working_copy_keeps_student_work_and_leaves_the_committed_notebooks_alone(isolated: Path) -> None:
    committed = {p.name: p.read_bytes() for p in (project_root() / "notebooks").glob("*.ipynb")}
    work = prepare(isolated / "classroom")
    assert {p.name for p in work.glob("*.ipynb")} == set(committed) and (work / "README.md").exists()
    assert (work / "results").is_dir() and not (work / "results").is_symlink()
    assert lab_env(work)["TOMLIB_RESULTS"] == str((work / "results").resolve())
    saved = work / "00_quickstart.ipynb"
    saved.write_text(saved.read_text().replace("tom_order: int = 1", "tom_order: int = 2"))  # a student's edit
    prepare(isolated / "classroom")  # the next lesson
    assert "tom_order: int = 2" in saved.read_text()
    assert {p.name: p.read_bytes() for p in (project_root() / "notebooks").glob("*.ipynb")} == committed


def test_lab_news_and_update_checks_are_off_and_other_settings_kept(tmp_path: Path) -> None:
    path = tmp_path / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"}}))
    quiet_lab(tmp_path)
    got = json.loads(path.read_text())
    assert got["@jupyterlab/apputils-extension:notification"] == {"fetchNews": "false", "checkForUpdates": False}
    assert got["@jupyterlab/apputils-extension:themes"] == {"theme": "JupyterLab Dark"}
    # the class plan (and any Markdown) opens rendered, not as source
    assert got["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"] == {"markdown": "Markdown Preview"}


def tree_hash(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        for p in sorted(root.rglob("*"))
    }


@pytest.fixture
def researcher(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The researcher's results folder with a table, an executed notebook and a run in it, as a series leaves it."""
    monkeypatch.delenv("TOMLIB_TRANSCRIPTS")  # the committed transcripts, as a class replays them
    results = isolated / "results"
    for name, text in {
        "tables/adaptive_tom.table1.csv": "paper_id,table_id,metric,value,source,paper_value\n",
        "notebooks/00_quickstart.ipynb": "{}",
        "notebooks/00_quickstart.stamp.json": "{}",
        "REPORT.md": "# the researcher's report\n",
    }.items():
        (results / name).parent.mkdir(parents=True, exist_ok=True)
        (results / name).write_text(text)
    return results


@pytest.mark.series
def test_class_work_in_the_lab_and_through_the_runner_never_touches_the_researchers_results(
    isolated: Path, researcher: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import papermill

    from tomlib.__main__ import main as cli
    from tomlib.paths import environ

    before = tree_hash(researcher)
    work = prepare(isolated / "classroom")
    class_results = work / "results"

    # Run All in the lab: a kernel with the lab's environment, the notebook saved in place
    with environ(lab_env(work)):
        notebook = work / "00_quickstart.ipynb"
        papermill.execute_notebook(str(notebook), str(notebook), cwd=str(work), progress_bar=False, log_output=False)
    assert list((class_results / "runs").glob("quickstart-*")), "the class's run log is in the class's folder"
    assert (work / ".tomlib" / "responses.sqlite").exists()  # and its recorded responses in its own store

    # an exercise through the runner, on the class's copies: its notebook, stamp and report go to the class too
    assert cli(["run", "00", "--notebooks-dir", str(work), "--no-html", "-p", "tom_order", "2"]) == 0
    assert (class_results / "notebooks" / "00_quickstart.ipynb").exists()
    assert '"tom_order": 2' in (class_results / "notebooks" / "00_quickstart.stamp.json").read_text()
    assert (class_results / "REPORT.md").exists()

    assert tree_hash(researcher) == before  # byte for byte


def test_an_older_lab_link_to_the_researchers_results_is_replaced_and_the_results_kept(
    isolated: Path, researcher: Path
) -> None:
    before = tree_hash(researcher)
    work = isolated / "classroom"
    work.mkdir()
    (work / "results").symlink_to(researcher, target_is_directory=True)  # what ./reproduce.sh lab used to make
    prepare(work)
    assert (work / "results").is_dir() and not (work / "results").is_symlink()
    assert not any((work / "results").iterdir()) and tree_hash(researcher) == before


def test_the_lab_starts_on_the_class_folder_with_the_class_environment(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What ``./reproduce.sh lab`` runs: JupyterLab on the class folder, its kernels and terminals pointed at it."""
    started: list[tuple[str, list[str], dict[str, str]]] = []
    monkeypatch.setattr(os, "execv", lambda path, argv: started.append((path, list(argv), dict(os.environ))))
    monkeypatch.setattr("tomlib.classroom.project_root", lambda: isolated)
    (isolated / "notebooks").mkdir()
    (isolated / "notebooks" / "00_quickstart.ipynb").write_text("{}")
    main(["--no-browser", "--port", "8890"])
    ((path, argv, env),) = started
    work = (isolated / "classroom").resolve()
    assert path == argv[0] and argv[1:] == [
        "-m",
        "jupyter",
        "lab",
        f"--notebook-dir={work}",
        "--no-browser",
        "--port",
        "8890",
        str(work / "README.md"),  # the class plan opens first, rendered (LAB_OVERRIDES)
    ]
    assert env["TOMLIB_RESULTS"] == str(work / "results") and env["TOMLIB_STORE"].startswith(str(work))


def test_reset_puts_the_original_back_and_keeps_the_classs_copy(isolated: Path) -> None:
    from tomlib.classroom import reset

    work = prepare(isolated / "classroom")
    copy = work / "00_quickstart.ipynb"
    original = copy.read_bytes()
    copy.write_text("a student's work")
    (kept,) = reset(["00"], work)
    assert copy.read_bytes() == original and kept.read_text() == "a student's work"
