"""Grading a class offline: every check of every exercise on each submitted notebook, each in the sandbox.

A submitted notebook is untrusted code. Its answer cell runs with one check at a time in a sandboxed process
(:func:`tomlib.sandbox.run_tests`: no network, a read-only world, of the project only its code, data and configs
visible (:data:`VISIBLE`) and its environment, limits),
never in this process; the check is otter's exception-based test case, given only that case's source. A check
passes only when its test returned (the sandbox's pass token), so a check's points cannot be printed into being.
Feedback quotes a public check's message; of the hidden checks it says how many passed, nothing else."""

from __future__ import annotations

import ast
import csv
import functools
import re
import sysconfig
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from tomlib.grading._edition import CHECK_CALL
from tomlib.grading._exercises import Check, Exercise, exercises
from tomlib.paths import project_root
from tomlib.sandbox import CheckResult, Limits, run_tests

MAX_NOTEBOOK_BYTES = 20 * 1024 * 1024
LIMITS = Limits(timeout_s=120.0, cpu_s=120, memory_mb=16384, file_mb=64, processes=8, output_chars=8000)
"""One check of one answer: 8 processes or threads of 2 GB of address space each, so a notebook's imports (pandas,
clingo, the experiments) fit; the numeric libraries get one thread each."""

_PRELUDE = """\
import ast as _ast, asyncio as _asyncio, os as _os, site as _site, sys as _sys
for _d in {sites!r}:
    _site.addsitedir(_d)
_sys.path.insert(0, {root!r})
_os.makedirs("/tmp/home", exist_ok=True)
_os.environ.update({{"TOMLIB_ROOT": {root!r}, "HOME": "/tmp/home", "MPLBACKEND": "Agg", "MPLCONFIGDIR": "/tmp/home",
    "TOMLIB_RESULTS": "/tmp/results", "TOMLIB_STORE": "/tmp/store/responses.sqlite", "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}})
_r = eval(compile({answer!r}, "answer cell", "exec", flags=_ast.PyCF_ALLOW_TOP_LEVEL_AWAIT), globals())
if _asyncio.iscoroutine(_r):
    _asyncio.run(_r)
"""
_CASE = """\
from otter.test_files import ExceptionTestFile as _Tests
_source = {tests!r}
_case = _Tests.from_string(_source, path={name!r}).test_cases[0]
_case.body.call_func(globals())
"""


@dataclass
class Graded:
    """One exercise of one student's notebook."""

    student: str
    notebook: str
    exercise: str
    points: float
    possible: float
    status: str  # graded | not answered | not found
    public: list[tuple[Check, CheckResult | None]] = field(default_factory=list)
    hidden: list[tuple[Check, CheckResult | None]] = field(default_factory=list)


@functools.lru_cache(maxsize=256)
def _one_case(tests: str, index: int) -> str:
    """otter's test file text with only its ``index``-th test case (so a run holds no other check's source)."""
    tree = ast.parse(tests)
    cases = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.decorator_list]
    keep = cases[index]
    tree.body = [n for n in tree.body if n not in cases or n is keep]
    return ast.unparse(tree)


def answer_code(nb: nbformat.NotebookNode, name: str) -> str | None:
    """The student's answer to exercise ``name``: the cells the student edition tagged, or (tags lost) the code
    cells just above its ``grader.check`` cell. None when neither is there."""
    mine = lambda c: c.cell_type == "code" and c.metadata.get("tomlib", {}).get("answer") == name  # noqa: E731
    tagged = [c.source for c in nb.cells if mine(c)]
    if tagged:
        return "\n\n".join(tagged)
    for i, cell in enumerate(nb.cells):
        call = CHECK_CALL.search(cell.source) if cell.cell_type == "code" else None
        if call and call.group(1) == name:
            above = []
            for prev in reversed(nb.cells[:i]):
                if prev.cell_type != "code" or CHECK_CALL.search(prev.source):
                    break
                above.insert(0, prev.source)
            return "\n\n".join(above) if above else None
    return None


def _answered(code: str | None) -> bool:
    """Whether an answer cell holds an answer: something, and no ``name = ...`` left of the student edition."""
    if code is None:
        return False
    lines = [ln for ln in code.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    return bool(lines) and not any(re.fullmatch(r"\s*[\w.]+\s*=\s*\.\.\.\s*(#.*)?", ln) for ln in lines)


VISIBLE = ("tomlib", "data", "configs")
"""What of the project a student's answer may read: the code, the bundled data and transcripts, the model configs;
not the rest (results, the response store, anyone's .env), which a check's message could otherwise carry out."""


def _sites() -> list[str]:
    paths = sysconfig.get_paths()
    return sorted({paths["purelib"], paths["platlib"]})


def run_check(exercise: Exercise, check: Check, answer: str) -> CheckResult:
    """Run ``answer`` then one check of ``exercise`` in the sandbox."""
    sites, root = _sites(), project_root()
    program = _PRELUDE.format(sites=sites, root=str(root), answer=answer)
    tests = _CASE.format(tests=_one_case(exercise.tests, check.index), name=exercise.name)
    return run_tests(program, tests, limits=LIMITS, visible=[*sites, *(str(root / p) for p in VISIBLE)])


def _student_of(path: Path, root: Path) -> str:
    rel = path.relative_to(root)
    name = rel.parts[0] if len(rel.parts) > 1 else path.stem
    return re.sub(r"[^\w.-]", "_", name) or "student"


def _read(path: Path) -> nbformat.NotebookNode | str:
    """A submitted notebook, or why it cannot be read."""
    if path.stat().st_size > MAX_NOTEBOOK_BYTES:
        return f"larger than {MAX_NOTEBOOK_BYTES // 2**20} MB"
    try:
        return nbformat.read(path, as_version=4)
    except Exception as exc:  # a student's file: any way it is broken is a row, not a crash
        return f"not a notebook nbformat can read ({type(exc).__name__}: {str(exc)[:120]})"


def grade(
    submissions: str | Path,
    notebooks_dir: str | Path | None = None,
    jobs: int = 2,
    progress: Callable[[int, int], None] | None = None,
) -> list[Graded]:
    """Grade every ``*.ipynb`` under ``submissions`` (one folder per student, or ``<student>.ipynb`` files) against
    the teacher's notebooks (default: the project's ``notebooks/``). A notebook is matched by the name the student
    edition wrote into it, else by its file name. ``progress(done, total)`` is told after each check."""
    root = Path(submissions)
    teachers = Path(notebooks_dir) if notebooks_dir else project_root() / "notebooks"
    keys: dict[str, list[Exercise]] = {}
    rows: list[Graded] = []
    work: list[tuple[Graded, Exercise, Check, str, bool]] = []
    for path in sorted(root.rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        student, nb = _student_of(path, root), _read(path)
        stem = nb.metadata.get("tomlib", {}).get("notebook", path.stem) if not isinstance(nb, str) else path.stem
        teacher = teachers / f"{stem}.ipynb"
        if not teacher.is_file():
            teacher = next(iter(sorted(teachers.glob(f"{path.stem}*.ipynb"))), teacher)
        if not teacher.is_file() or isinstance(nb, str):
            why = nb if isinstance(nb, str) else "no notebook of the series has this name"
            rows.append(Graded(student, path.name, "", 0.0, 0.0, f"not graded: {why}"))
            continue
        if teacher.stem not in keys:
            keys[teacher.stem] = exercises(teacher)
        for ex in keys[teacher.stem]:
            code = answer_code(nb, ex.name)
            row = Graded(student, teacher.stem, ex.name, 0.0, ex.points, "graded")
            rows.append(row)
            if not _answered(code):
                row.status = "not answered" if code is not None else "answer cell not found"
                row.public = [(c, None) for c in ex.public]
                row.hidden = [(c, None) for c in ex.hidden]
                continue
            work += [(row, ex, c, code or "", c.hidden) for c in ex.checks]
    done = 0

    def one(item: tuple[Graded, Exercise, Check, str, bool]) -> tuple[Graded, Check, CheckResult, bool]:
        row, ex, check, code, hidden = item
        return row, check, run_check(ex, check, code), hidden

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for row, check, result, hidden in pool.map(one, work):
            (row.hidden if hidden else row.public).append((check, result))
            row.points += check.points if result.passed else 0.0
            done += 1
            if progress:
                progress(done, len(work))
    return rows


def _public_line(check: Check, result: CheckResult | None) -> str:
    if result is None:
        return f"- check {check.index + 1}: not run (no answer)"
    if result.passed:
        return f"- check {check.index + 1}: passed"
    said = result.reason or result.status
    if "answer cell" in result.stderr and "call_func" not in result.stderr:
        return f"- check {check.index + 1}: not run: your answer cell raised {said}"
    hint = f"{check.failure_message} " if check.failure_message else ""
    return f"- check {check.index + 1} failed: {hint}({said})"


def feedback(student: str, rows: list[Graded]) -> str:
    """One student's feedback (Markdown): points per exercise, each public check's message, and how many hidden
    checks passed (never which, or why)."""
    mine = [r for r in rows if r.student == student]
    total, possible = sum(r.points for r in mine), sum(r.possible for r in mine)
    out = [f"# Feedback for {student}", "", f"**{total:g} of {possible:g} points.**", ""]
    for r in mine:
        if not r.exercise:
            out += [f"## {r.notebook}", "", f"{r.status}.", ""]
            continue
        out += [f"## {r.notebook} · {r.exercise}: {r.points:g} of {r.possible:g}", ""]
        if r.status != "graded":
            out += [f"{r.status[0].upper()}{r.status[1:]}.", ""]
        out += [_public_line(c, res) for c, res in r.public]
        if r.hidden:
            passed = sum(1 for _, res in r.hidden if res is not None and res.passed)
            out.append(f"- hidden checks: {passed} of {len(r.hidden)} passed")
        out.append("")
    return "\n".join(out)


def write_grades(rows: list[Graded], out: str | Path) -> Path:
    """``grades.csv`` (one row per student and exercise), ``totals.csv`` and ``feedback/<student>.md`` under
    ``out``; returns ``grades.csv``."""
    out = Path(out)
    (out / "feedback").mkdir(parents=True, exist_ok=True)
    fields = ["student", "notebook", "exercise", "points", "possible", "status", "public_passed", "hidden_passed"]
    with open(out / "grades.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(fields)
        for r in rows:
            pub = sum(1 for _, res in r.public if res is not None and res.passed)
            hid = sum(1 for _, res in r.hidden if res is not None and res.passed)
            w.writerow(
                [r.student, r.notebook, r.exercise, f"{r.points:g}", f"{r.possible:g}", r.status,
                 f"{pub}/{len(r.public)}", f"{hid}/{len(r.hidden)}"]
            )  # fmt: skip
    students = sorted({r.student for r in rows})
    with open(out / "totals.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["student", "points", "possible"])
        for s in students:
            mine = [r for r in rows if r.student == s]
            w.writerow([s, f"{sum(r.points for r in mine):g}", f"{sum(r.possible for r in mine):g}"])
    for s in students:
        (out / "feedback" / f"{s}.md").write_text(feedback(s, rows))
    return out / "grades.csv"
