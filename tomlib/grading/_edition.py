"""The student edition of the series: otter's student notebooks (solutions replaced by ``...``, hidden checks gone),
each answer cell marked for the grader, otter's set-up cell after the title, and the sections that state the papers'
answers ("Where we agree") folded until the exercises are done."""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import nbformat

from tomlib.grading._exercises import assign, has_exercises

CHECK_CALL = re.compile(r"""grader\.check\(\s*["']([^"']+)["']\s*\)""")
ANSWERS_AHEAD = re.compile(r"^(#+)\s*(Where we agree.*)$", re.M | re.I)
"""Headings of sections that state the answer an exercise asks for."""

STUDENT_README = """# {title}: the student edition

Work through the notebooks in order. Before each run, write your prediction down.

Each exercise has a cell to answer in (replace the `...`) and a check cell below it: run
`grader.check("name")` to learn whether your answer is right and why, without being told the answer. An answer
cell must run on its own, so import what you use in it. Your teacher grades the hidden checks too, after you hand
the notebooks in (save them first: the grader reads the saved file).

Sections headed "Where we agree" state the papers' answers: they are folded; open them once you have answered.
"""


def _fold(cell: nbformat.NotebookNode) -> None:
    """Fold a markdown cell that states the papers' answers: its heading stays, its text opens on a click."""
    match = ANSWERS_AHEAD.search(cell.source)
    if not match:
        return
    head, body = cell.source[: match.start()], cell.source[match.end() :].strip()
    cell.source = head + (
        f"{match.group(1)} {match.group(2)}\n\n<details><summary>It states the answers to this notebook's exercises: "
        f"open it once you have answered them.</summary>\n\n{body}\n\n</details>"
    )
    cell.metadata["tomlib"] = {**cell.metadata.get("tomlib", {}), "folded": True}


def _mark_answers(nb: nbformat.NotebookNode) -> list[str]:
    """Tag the code cells between each question's prompt and its ``grader.check`` cell as that question's answer
    (``metadata.tomlib.answer``): the grader finds them by the tag, or, if the tag was lost, by the check cell."""
    names = []
    for i, cell in enumerate(nb.cells):
        call = CHECK_CALL.search(cell.source) if cell.cell_type == "code" else None
        if not call:
            continue
        names.append(call.group(1))
        j = i - 1
        while j >= 0 and nb.cells[j].cell_type == "code" and not CHECK_CALL.search(nb.cells[j].source):
            nb.cells[j].metadata["tomlib"] = {"answer": call.group(1)}
            j -= 1
    return names


def student_notebook(teacher: Path, out_dir: Path) -> Path:
    """Write the student edition of one teacher's notebook into ``out_dir``; returns its path."""
    with tempfile.TemporaryDirectory(prefix="tomlib-edition-") as tmp:
        student, _ = assign(teacher, tmp)
        nb = nbformat.read(student, as_version=4)
    init = next((i for i, c in enumerate(nb.cells) if "otter.Notebook(" in c.source), None)
    if init is not None and init == 0 and len(nb.cells) > 1 and nb.cells[1].cell_type == "markdown":
        nb.cells[0], nb.cells[1] = nb.cells[1], nb.cells[0]  # the title first, then otter's set-up
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            _fold(cell)
    names = _mark_answers(nb)
    nb.metadata["tomlib"] = {"edition": "student", "notebook": teacher.stem, "exercises": names}
    target = out_dir / teacher.name
    nbformat.write(nb, target)
    return target


def write_student_edition(out: str | Path, notebooks: Sequence[str | Path] = ()) -> list[Path]:
    """Write the student edition of the series (or of ``notebooks``) into ``out``: hand the folder out as it is.
    Notebooks without exercises are copied as they are; the teacher's class plan is not (it holds the answers)."""
    from tomlib.runner import find_notebooks

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    chosen = find_notebooks([str(n) for n in notebooks])
    written = []
    for teacher in chosen:
        if has_exercises(teacher):
            written.append(student_notebook(teacher, out))
        else:
            written.append(Path(shutil.copyfile(teacher, out / teacher.name)))
    (out / "README.md").write_text(STUDENT_README.format(title="Theory of Mind in multi-agent LLM systems"))
    return written
