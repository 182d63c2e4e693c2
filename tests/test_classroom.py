"""The class's working copy: edits and autosaves stay out of the committed notebooks; results/ is beside them."""

from __future__ import annotations

import json
from pathlib import Path

from tomlib.classroom import prepare, quiet_lab
from tomlib.paths import project_root


def test_the_working_copy_keeps_student_work_and_leaves_the_committed_notebooks_alone(isolated: Path) -> None:
    committed = {p.name: p.read_bytes() for p in (project_root() / "notebooks").glob("*.ipynb")}
    work = prepare(isolated / "classroom")
    assert {p.name for p in work.glob("*.ipynb")} == set(committed) and (work / "README.md").exists()
    assert (work / "results").resolve() == (isolated / "results").resolve()
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
