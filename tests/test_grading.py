"""A class that can be graded: otter's master format read as otter reads it, a student edition that leaks no
solution and no hidden check, and grading that runs each answer with one check in the sandbox, never here."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import nbformat
import pytest

from tomlib.grading import answer_code, exercises, feedback, grade, write_grades, write_student_edition
from tomlib.grading._grade import Graded, _one_case
from tomlib.sandbox import CheckResult

pytestmark = pytest.mark.tier("fast")

CONFIG = """# ASSIGNMENT CONFIG
run_tests: false
solutions_pdf: false
export_cell: false
generate: false
init_cell: true
check_all_cell: false
tests:
  files: false
  ok_format: false"""


def _question(name: str, prompt: str, solution: str, public: str, hidden: str) -> list[nbformat.NotebookNode]:
    raw, md, code = nbformat.v4.new_raw_cell, nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    return [
        raw(f"# BEGIN QUESTION\nname: {name}\npoints: 2"),
        md(prompt),
        raw("# BEGIN SOLUTION"),
        code(solution),
        raw("# END SOLUTION"),
        raw("# BEGIN TESTS"),
        code(public),
        code(hidden),
        raw("# END TESTS"),
        raw("# END QUESTION"),
    ]


def teacher_notebook(folder: Path) -> Path:
    """A teacher's notebook of two exercises: a prime above 100 (plain Python), and three agents of which one leaves
    the pair {A, B} (tomlib's coalition model, so the sandbox must see the project)."""
    cells = [nbformat.v4.new_markdown_cell("# 98 · A class of two exercises\n\nThe opening.")]
    cells += _question(
        "nb98_prime",
        "**Exercise 98.1.** Set `big_prime` to a prime number above 100.",
        "big_prime = 100_003  # SOLUTION",
        '""" # BEGIN TEST CONFIG\nfailure_message: A prime has no divisor but 1 and itself.\n""" # END TEST CONFIG\n'
        "def test_prime(big_prime):\n"
        "    assert isinstance(big_prime, int) and big_prime > 1, 'an int above 1, please'\n"
        "    assert all(big_prime % d for d in range(2, int(big_prime**0.5) + 1)), 'it has a divisor'\n"
        "test_prime(big_prime)",
        '""" # BEGIN TEST CONFIG\nhidden: true\n""" # END TEST CONFIG\n'
        "def test_above_a_hundred(big_prime):\n"
        "    assert big_prime > 100, 'SECRET-HIDDEN-REASON'\n"
        "test_above_a_hundred(big_prime)",
    )
    cells += _question(
        "nb98_cycle",
        "**Exercise 98.2.** Build `cycle`, three agents A, B, C in which someone leaves the pair {A, B}.",
        "from tomlib.coalition import make_instance\n\n"
        "cycle = make_instance(  # SOLUTION\n"
        '    {"A": {"B": 0.9, "C": -0.5}, "B": {"A": -0.5, "C": 0.9}, "C": {"A": 0.9, "B": -0.5}},  # SOLUTION\n'
        '    names=["A", "B", "C"], min_size=2,  # SOLUTION\n'
        ")  # SOLUTION",
        '""" # BEGIN TEST CONFIG\nfailure_message: Some pair would both rather stay together.\n""" # END TEST CONFIG\n'
        "def test_ab_blocked(cycle):\n"
        "    from tomlib.coalition import CoalitionStructure, find_blocking\n"
        "    pair = CoalitionStructure.of([[0, 1]], 3)\n"
        "    assert cycle is not None and find_blocking(cycle, pair) is not None, 'everyone stays where they are'\n"
        "test_ab_blocked(cycle)",
        '""" # BEGIN TEST CONFIG\nhidden: true\n""" # END TEST CONFIG\n'
        "def test_three(cycle):\n"
        "    assert len(cycle.names) == 3, 'SECRET-HIDDEN-REASON'\n"
        "test_three(cycle)",
    )
    cells += [
        nbformat.v4.new_markdown_cell("## Where we agree\n\nThe paper's answer: SECRET-PAPER-ANSWER."),
        nbformat.v4.new_raw_cell(CONFIG),
    ]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / "98_class.ipynb")
    return folder / "98_class.ipynb"


def submit(edition: Path, answers: dict[str, str], to: Path) -> Path:
    """A student's copy of the edition with ``answers`` (exercise -> code) typed into the answer cells."""
    nb = nbformat.read(edition, as_version=4)
    for cell in nb.cells:
        name = cell.metadata.get("tomlib", {}).get("answer")
        if name in answers:
            cell.source = answers[name]
    to.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, to)
    return to


def test_exercises_are_read_as_otter_reads_them(tmp_path: Path) -> None:
    ex = {e.name: e for e in exercises(teacher_notebook(tmp_path / "teacher"))}
    assert set(ex) == {"nb98_prime", "nb98_cycle"}
    prime = ex["nb98_prime"]
    assert prime.points == 2 and [c.hidden for c in prime.checks] == [False, True]
    assert prime.public[0].failure_message == "A prime has no divisor but 1 and itself."
    assert "big_prime = 100_003" in prime.solution
    one = _one_case(prime.tests, 0)
    assert "test_prime" in one and "test_above_a_hundred" not in one and "SECRET" not in one


def test_the_student_edition_leaks_no_solution_no_hidden_check_and_folds_the_answers(tmp_path: Path) -> None:
    teacher = teacher_notebook(tmp_path / "teacher")
    (student,) = write_student_edition(tmp_path / "student", [teacher])
    text = student.read_text()
    for secret in ("100_003", "0.9", "SECRET-HIDDEN-REASON", "test_above_a_hundred", "test_three", "hidden=True"):
        assert secret not in text, secret
    nb = nbformat.read(student, as_version=4)
    assert nb.cells[0].source.startswith("# 98"), "the title first, otter's set-up after it"
    assert any('grader.check("nb98_prime")' in c.source for c in nb.cells)
    folded = next(c for c in nb.cells if "SECRET-PAPER-ANSWER" in c.source)
    assert folded.source.startswith("## Where we agree") and "<details>" in folded.source
    answers = [c for c in nb.cells if c.metadata.get("tomlib", {}).get("answer")]
    assert [c.metadata["tomlib"]["answer"] for c in answers] == ["nb98_prime", "nb98_cycle"]
    assert nb.metadata["tomlib"] == {"edition": "student", "notebook": "98_class", "exercises": [
        "nb98_prime", "nb98_cycle"]}  # fmt: skip
    assert not (tmp_path / "student" / "98_class.ipynb").read_text().count("ASSIGNMENT CONFIG")


def test_an_answer_is_found_by_its_tag_or_else_above_its_check(tmp_path: Path) -> None:
    teacher = teacher_notebook(tmp_path / "teacher")
    (student,) = write_student_edition(tmp_path / "student", [teacher])
    nb = nbformat.read(student, as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("tomlib", {}).get("answer") == "nb98_prime":
            cell.source = "big_prime = 7"
            cell.metadata.pop("tomlib")  # a student pasted the answer into a new cell
    assert answer_code(nb, "nb98_prime") == "big_prime = 7"
    assert "cycle = ..." in (answer_code(nb, "nb98_cycle") or "")
    assert answer_code(nb, "nb00_nowhere") is None


def test_feedback_says_how_many_hidden_checks_passed_never_which_or_why(tmp_path: Path) -> None:
    ex = {e.name: e for e in exercises(teacher_notebook(tmp_path / "teacher"))}["nb98_prime"]
    failed = CheckResult(False, "failed", "AssertionError: SECRET-HIDDEN-REASON", 1.0, stderr="SECRET-HIDDEN-REASON")
    row = Graded("ann", "98_class", "nb98_prime", 1.0, 2.0, "graded")
    row.public = [(ex.public[0], CheckResult(True, "passed", "", 1.0))]
    row.hidden = [(ex.hidden[0], failed)]
    text = feedback("ann", [row])
    assert "1 of 2 points" in text and "hidden checks: 0 of 1 passed" in text
    assert "SECRET" not in text and "test_above" not in text


@pytest.mark.tier("grading")
def test_a_class_is_graded_offline_each_answer_in_the_sandbox(tmp_path: Path) -> None:
    """Ann answers one exercise wrong and one right; Bob leaves one unanswered and tries to fake a pass; a third file
    is no notebook. The grade table and feedback follow from the checks run on what they wrote."""
    teacher = teacher_notebook(tmp_path / "teacher")
    (edition,) = write_student_edition(tmp_path / "student", [teacher])
    subs = tmp_path / "submissions"
    right_cycle = (
        "from tomlib.coalition import make_instance\n"
        'cycle = make_instance({"A": {"B": 1.0, "C": -1.0}, "B": {"A": -1.0, "C": 1.0}, '
        '"C": {"A": 1.0, "B": -1.0}}, names=["A", "B", "C"], min_size=2)'
    )
    submit(edition, {"nb98_prime": "big_prime = 91  # 7 * 13", "nb98_cycle": right_cycle}, subs / "ann" / edition.name)
    marker = tmp_path / "written-by-a-student"
    fake = f"import os\nopen({str(marker)!r}, 'w')\nprint('passed')\nos._exit(0)"
    submit(edition, {"nb98_prime": fake}, subs / "bob" / edition.name)
    (subs / "cy.ipynb").write_text("{not json")
    readme = Path(__file__).resolve().parent.parent / "README.md"  # the project's, outside what an answer may see
    peek = f"import os\nbig_prime = 4 if os.path.exists({str(readme)!r}) else 100_003"
    submit(edition, {"nb98_prime": peek}, subs / "dee" / edition.name)
    rows = grade(subs, tmp_path / "teacher")
    table = write_grades(rows, tmp_path / "grades")
    got = {(r["student"], r["exercise"]): r for r in csv.DictReader(table.open())}
    assert got["ann", "nb98_prime"]["points"] == "0" and got["ann", "nb98_prime"]["hidden_passed"] == "0/1"
    assert got["ann", "nb98_cycle"]["points"] == "2" and got["ann", "nb98_cycle"]["public_passed"] == "1/1"
    assert got["bob", "nb98_prime"]["points"] == "0" and got["bob", "nb98_cycle"]["status"] == "not answered"
    assert got["cy", ""]["status"].startswith("not graded: not a notebook")
    assert got["dee", "nb98_prime"]["points"] == "2", "an answer saw the project beyond its code, data and configs"
    assert not marker.exists(), "an answer wrote outside its sandbox"
    ann = (tmp_path / "grades" / "feedback" / "ann.md").read_text()
    assert "**2 of 4 points.**" in ann and "A prime has no divisor" in ann and "it has a divisor" in ann
    assert "SECRET" not in ann
    totals = {r["student"]: r for r in csv.DictReader((tmp_path / "grades" / "totals.csv").open())}
    assert totals["ann"]["points"] == "2" and totals["bob"]["points"] == "0"
    assert json.loads(json.dumps([r.status for r in rows]))  # every row has a status


@pytest.mark.series
def test_a_student_checks_a_wrong_and_a_right_answer_in_the_kernel_then_is_graded(
    tmp_path: Path, isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The student's side, on the quickstart's student edition run in a Jupyter kernel: exercise 00.1 answered
    wrong, 00.2 right; each check cell says which, the wrong one why, neither the answer. The saved notebook is
    handed in and graded: the grade table and the feedback follow."""
    from nbclient import NotebookClient

    monkeypatch.delenv("TOMLIB_TRANSCRIPTS")  # the committed transcripts, as a class replays them
    (edition,) = write_student_edition(tmp_path / "student", ["00"])
    answers = {
        "nb00_orders_choosing_b": "orders_choosing_b = {1}",
        "nb00_model_matches_formal": "orders_model_matches = {0, 2}",
    }
    mine = submit(edition, answers, tmp_path / "class" / "ann" / edition.name)
    nb = nbformat.read(mine, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(mine.parent)}}).execute()
    said = {}
    for cell in nb.cells:
        if cell.cell_type == "code" and "grader.check(" in cell.source:
            name = cell.source.split('"')[1]
            said[name] = "\n".join(o.get("data", {}).get("text/plain", o.get("text", "")) for o in cell.outputs)
    wrong, right = said["nb00_orders_choosing_b"], said["nb00_model_matches_formal"]
    assert "does not choose B after A-A" in wrong and "Follow the recursion" in wrong, wrong
    assert "passed" in right.lower() and "failed" not in right.lower(), right
    assert "{0, 2}" not in wrong, "the check must not give the answer away"
    nbformat.write(nb, mine)
    table = write_grades(grade(tmp_path / "class"), tmp_path / "grades")
    got = {r["exercise"]: r for r in csv.DictReader(table.open())}
    assert got["nb00_orders_choosing_b"]["points"] == "0" and got["nb00_model_matches_formal"]["points"] == "2"
    feedback_page = (tmp_path / "grades" / "feedback" / "ann.md").read_text()
    assert "**2 of 4 points.**" in feedback_page and "does not choose B after A-A" in feedback_page
    assert "hidden checks: 0 of 1 passed" in feedback_page and "Not every order" not in feedback_page


NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


def test_each_notebook_holds_its_exercises_each_named_once() -> None:
    """Two exercises in each of 00-07 and one in each of 08-14 (the issue's floor), question names unique."""
    names: list[str] = []
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        heads = [c.source for c in nb.cells if c.cell_type == "raw" and c.source.startswith("# BEGIN QUESTION")]
        names += [line.split(":", 1)[1].strip() for h in heads for line in h.splitlines() if line.startswith("name:")]
        assert len(heads) >= (2 if int(path.name[:2]) <= 7 else 1), path.name
        assert nb.cells[-1].cell_type == "raw" and nb.cells[-1].source.startswith("# ASSIGNMENT CONFIG"), path.name
    assert len(names) == len(set(names)) >= 23


@pytest.mark.tier("grading")
def test_the_series_student_edition_leaks_nothing_and_every_solution_earns_its_points(tmp_path: Path) -> None:
    """On the committed notebooks: no solution line, hidden check or its message in the student edition; each
    solution, graded as a student's answer in the sandbox, passes every check; an untouched edition earns nothing."""
    editions = {p.stem: p for p in write_student_edition(tmp_path / "student")}
    assert set(editions) == {p.stem for p in NOTEBOOKS}
    subs = tmp_path / "submissions"
    for path in NOTEBOOKS:
        text = editions[path.stem].read_text()
        found = exercises(path)
        assert found, path.name
        answers = {}
        for ex in found:
            for line in ex.solution.splitlines():
                if "# SOLUTION" in line:
                    assert json.dumps(line.split("# SOLUTION")[0].strip())[1:-1] not in text, (ex.name, line)
            for check in ex.hidden:
                hidden_source = _one_case(ex.tests, check.index)
                fn = hidden_source.split("def ", 1)[1].split("(", 1)[0]
                assert f"def {fn}(" not in text, (ex.name, fn)
                if check.failure_message:
                    assert json.dumps(check.failure_message)[1:-1] not in text, ex.name
            answers[ex.name] = ex.solution.replace("# SOLUTION", "")
        submit(editions[path.stem], answers, subs / "teacher" / editions[path.stem].name)
        submit(editions[path.stem], {}, subs / "blank" / editions[path.stem].name)
    rows = grade(subs)
    by = {(r.student, r.exercise): r for r in rows}
    for r in rows:
        if r.student == "teacher":
            lost = [(c.index, res.reason) for c, res in r.public + r.hidden if res is None or not res.passed]
            assert r.points == r.possible, (r.exercise, lost)
        else:
            assert r.points == 0 and r.status == "not answered", (r.exercise, r.status)
    assert len(by) == 2 * sum(len(exercises(p)) for p in NOTEBOOKS)


def test_folding_keeps_what_comes_before_the_answers_heading() -> None:
    from tomlib.grading._edition import _fold

    cell = nbformat.v4.new_markdown_cell("Read this first.\n\n## Where we agree, and why not\n\nThe answer is 0.")
    _fold(cell)
    assert cell.source.startswith("Read this first.\n\n## Where we agree, and why not\n\n<details>")
    assert cell.source.endswith("The answer is 0.\n\n</details>")


def test_the_class_commands_refuse_a_folder_another_user_could_plant_links_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tomlib.__main__ import main

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    for argv in (
        ["class", "edition", "--out", str(shared / "ed")],
        ["class", "grade", str(tmp_path), "--out", str(shared / "g")],
    ):
        assert main(argv) != 0
        said = capsys.readouterr().err
        assert "any user can write to it" in said and "--out DIR" in said
    assert not (shared / "ed").exists() and not (shared / "g").exists()
