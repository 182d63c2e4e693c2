"""The class plan's code cells (notebooks/README.md) run as written, so a teacher never hits a broken snippet."""

from __future__ import annotations

import ast
import asyncio
import inspect
import re
import textwrap
from pathlib import Path

import matplotlib
import pytest

from tomlib.experiments import adaptive_tom as at
from tomlib.experiments import tom_ib

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

ROOT = Path(__file__).resolve().parent.parent


def test_every_python_block_in_the_class_plan_runs(isolated: Path) -> None:
    matplotlib.use("Agg")
    text = (ROOT / "notebooks" / "README.md").read_text()
    blocks = [textwrap.dedent(b) for b in re.findall(r"```python\n(.*?)```", text, flags=re.S)]
    assert len(blocks) >= 3
    namespace = {"at": at, "tom_ib": tom_ib}
    for block in blocks:
        code = compile(block, "notebooks/README.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        result = eval(code, namespace)  # our own documentation, not model output
        if inspect.iscoroutine(result):
            asyncio.run(result)
    assert namespace["one"].table["value"].notna().all()
    assert {"got", "one"} <= set(namespace)


def plan_edits() -> list[tuple[str, dict[str, object]]]:
    """Every parameters-cell edit the plan asks for: (notebook, {name: value}), one per bullet, as written."""
    text = (ROOT / "notebooks" / "README.md").read_text()
    edits = []
    for section in text.split("\n## ")[1:]:
        stems = re.findall(r"`(\d\d_[a-z0-9_]+)`", section.splitlines()[0])
        for bullet in re.split(r"\n- ", section):
            found = re.findall(r"`(\w+): (?:str|int|float|bool) = ([^`]+)`", bullet)
            if found:
                stem = next((s for s in stems if s[:2] in bullet[:12]), stems[0])
                edits.append((stem, {name: ast.literal_eval(value) for name, value in found}))
    return edits


@pytest.mark.series
def test_every_parameter_change_in_the_class_plan_runs_offline(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each exercise, run through the runner on the class's copies at smoke sizes (the lesson is the parameter it
    changes), writes into the class's results folder only."""
    from tomlib.classroom import prepare
    from tomlib.runner import run_notebooks, summarize

    monkeypatch.delenv("TOMLIB_TRANSCRIPTS")  # the committed transcripts, as a class replays them
    researcher = isolated / "results"  # the researcher's results, with an executed 06 the class must not replace
    (researcher / "notebooks").mkdir(parents=True)
    (researcher / "notebooks" / "06_tom_ib_fig5.ipynb").write_text("{}")
    before = {p: p.read_bytes() for p in researcher.rglob("*") if p.is_file()}
    work = prepare(isolated / "classroom")
    edits = plan_edits()
    assert [s for s, _ in edits] == ["00_quickstart", "06_tom_ib_fig5"], edits
    for stem, overrides in edits:
        out = run_notebooks("smoke", [stem], directory=work, overrides=overrides, html=False, progress=False)
        assert [o.status for o in out] == ["ok"], summarize(out)
        assert (work / "results" / "notebooks" / f"{stem}.ipynb").exists()
    assert {p: p.read_bytes() for p in researcher.rglob("*") if p.is_file()} == before


def test_the_plan_links_every_exercise_to_its_heading_and_gives_its_answer() -> None:
    """Each exercise of the teacher's edition is in the plan's answers table once, and every exercise link in the plan
    lands on a heading of that notebook (JupyterLab's anchor: the heading's text, spaces as hyphens)."""
    import nbformat

    text = (ROOT / "notebooks" / "README.md").read_text()
    table = text[text.index("## The exercises and their answers") :]
    names, headings = [], {}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "raw" and cell.source.startswith("# BEGIN QUESTION"):
                names.append(re.search(r"^name:\s*(\S+)", cell.source, flags=re.M).group(1))  # type: ignore[union-attr]
            if cell.cell_type == "markdown" and cell.source.startswith("### Exercise"):
                head = cell.source.splitlines()[0][4:].strip()
                headings[(path.name, head.replace(" ", "-"))] = head
    for name in names:
        assert table.count(f"`{name}`") == 1, name
    links = re.findall(r"\]\((\d\d_\w+\.ipynb)#(Exercise-[^)]+)\)", text)
    assert len(links) >= len(names)
    for notebook, anchor in links:
        assert (notebook, anchor) in headings, (notebook, anchor)
    assert "TIME:" not in text, "the run times are measured (benchmarks/bench_exercises.py), not left out"
