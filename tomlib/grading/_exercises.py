"""The exercises of a teacher's notebook: otter-grader's master format (questions, solutions, public and hidden
exception-based checks), read through ``otter assign`` so the student edition and the grader see what otter sees."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import nbformat

from tomlib.errors import TomlibError

QUESTION = re.compile(r"^#\s*BEGIN QUESTION\s*\n(.*)", re.S | re.I)
ASSIGNMENT = re.compile(r"^#\s*ASSIGNMENT CONFIG", re.I)


class NeedsGrader(TomlibError):
    """otter-grader is not installed here."""


def require_otter() -> None:
    """Raise :class:`NeedsGrader` naming the fix when otter-grader cannot be imported."""
    try:
        import otter  # noqa: F401
    except ImportError as exc:
        raise NeedsGrader(
            "The class tools use otter-grader, which is not installed in this environment. Run `./reproduce.sh lab` "
            "once (it installs the lab extra), or `.venv/bin/pip install -e '.[lab]'`."
        ) from exc


@dataclass(frozen=True)
class Check:
    """One test case of an exercise: otter's exception-based case, ``index`` in its test file."""

    index: int
    name: str
    points: float
    hidden: bool
    failure_message: str | None


@dataclass(frozen=True)
class Exercise:
    """A question of a teacher's notebook: its prompt, its solution code and its checks (``tests`` is otter's test
    file text, hidden cases included; the teacher's only)."""

    notebook: str
    name: str
    points: float
    prompt: str
    solution: str
    tests: str
    checks: tuple[Check, ...]

    @property
    def public(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if not c.hidden)

    @property
    def hidden(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if c.hidden)


def has_exercises(notebook: str | Path) -> bool:
    """Whether a notebook is in otter's master format (it has an ``# ASSIGNMENT CONFIG`` raw cell)."""
    nb = nbformat.read(Path(notebook), as_version=4)
    return any(c.cell_type == "raw" and ASSIGNMENT.match(c.source.lstrip()) for c in nb.cells)


def assign(notebook: str | Path, out: str | Path) -> tuple[Path, Path]:
    """Run ``otter assign`` on a copy of the teacher's ``notebook`` (its ``# ASSIGNMENT CONFIG`` cell moved first,
    where otter must meet it); returns (student notebook, autograder notebook) under ``out``. otter's chatter goes to
    the log, not the screen."""
    require_otter()
    from otter.assign import main as otter_assign

    src = Path(notebook).resolve()
    out = Path(out).resolve()
    with tempfile.TemporaryDirectory(prefix="tomlib-assign-") as tmp:
        master = Path(tmp) / src.name
        nb = nbformat.read(src, as_version=4)
        # otter reads its configuration where it meets it; ours sits at the end, out of the reader's way
        nb.cells.sort(key=lambda c: not (c.cell_type == "raw" and ASSIGNMENT.match(c.source.lstrip())))
        nbformat.write(nb, master)
        quiet = io.StringIO()
        level = logging.getLogger("otter").level
        logging.getLogger("otter").setLevel(logging.WARNING)
        try:
            with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
                otter_assign(str(master), str(Path(tmp) / "dist"), no_pdfs=True, no_run_tests=True)
        except Exception as exc:
            raise TomlibError(f"otter assign could not read the exercises of {src.name}: {exc}") from exc
        finally:
            logging.getLogger("otter").setLevel(level)
        for edition in ("student", "autograder"):
            target = out / edition
            target.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(Path(tmp) / "dist" / edition / src.name, target / src.name)
    return out / "student" / src.name, out / "autograder" / src.name


def _solutions(nb: nbformat.NotebookNode) -> dict[str, tuple[str, str]]:
    """Each question's (prompt, solution code) in the teacher's notebook, by question name."""
    found: dict[str, tuple[str, str]] = {}
    name, prompt, code, in_solution = None, [], [], False
    for cell in nb.cells:
        text = cell.source.strip()
        if cell.cell_type == "raw":
            head = QUESTION.match(text)
            if head:
                meta = dict(re.findall(r"^(\w+):\s*(.+)$", head.group(1), flags=re.M))
                name, prompt, code = meta.get("name"), [], []
            elif re.match(r"#\s*BEGIN SOLUTION", text, re.I):
                in_solution = True
            elif re.match(r"#\s*END SOLUTION", text, re.I):
                in_solution = False
            elif re.match(r"#\s*END QUESTION", text, re.I) and name:
                found[name] = ("\n\n".join(prompt), "\n".join(code))
                name = None
        elif name and in_solution and cell.cell_type == "code":
            code.append(cell.source)
        elif name and cell.cell_type == "markdown":
            prompt.append(cell.source)
    return found


def exercises(notebook: str | Path) -> list[Exercise]:
    """The exercises of a teacher's notebook, in order, with every check (hidden ones too)."""
    require_otter()
    from otter.test_files import ExceptionTestFile

    path = Path(notebook)
    if not has_exercises(path):
        return []
    with tempfile.TemporaryDirectory(prefix="tomlib-exercises-") as tmp:
        _, autograder = assign(path, tmp)
        tests = json.loads(Path(autograder).read_text()).get("metadata", {}).get("otter", {}).get("tests", {})
    solutions = _solutions(nbformat.read(path, as_version=4))
    found = []
    for name, text in tests.items():
        cases = ExceptionTestFile.from_string(text, path=name).test_cases  # our own teacher's code
        checks = tuple(
            Check(i, c.name, float(c.points or 0), bool(c.hidden), c.failure_message) for i, c in enumerate(cases)
        )
        prompt, solution = solutions.get(name, ("", ""))
        found.append(Exercise(path.stem, name, sum(c.points for c in checks), prompt, solution, text, checks))
    order = list(solutions)
    return sorted(found, key=lambda e: order.index(e.name) if e.name in order else len(order))
