"""Why a notebook stopped arrives as data (a :class:`Failure`), told by the class of the error, not by its text."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from papermill.exceptions import PapermillExecutionError

from tests.runner.test_runner import write_nb
from tomlib.llm import BudgetExceeded, EstimateOverBudget, ReplayMiss
from tomlib.runner import Profile, run_notebooks, summarize
from tomlib.runner._cluster import TaskOutcome
from tomlib.runner._papermill import Failure, classify_failure

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

KINDS = [
    ("BudgetExceeded", Failure.BUDGET_EXCEEDED),
    ("EstimateOverBudget", Failure.ESTIMATE_OVER_BUDGET),
    ("ReplayMiss", Failure.REPLAY_MISS),
    ("ValueError", Failure.ERROR),
]


def _cell_error(ename: str, evalue: str) -> PapermillExecutionError:
    return PapermillExecutionError(cell_index=1, exec_count=2, source="", ename=ename, evalue=evalue, traceback=[])


@pytest.mark.parametrize(("ename", "failure"), KINDS)
def test_a_cells_error_is_classified_by_its_class_name(ename: str, failure: Failure) -> None:
    assert classify_failure(_cell_error(ename, "message")) is failure


def test_the_driver_classifies_its_own_exceptions_by_class_and_never_by_text() -> None:
    assert classify_failure(BudgetExceeded("spent")) is Failure.BUDGET_EXCEEDED
    assert classify_failure(EstimateOverBudget("refused")) is Failure.ESTIMATE_OVER_BUDGET
    assert classify_failure(ReplayMiss("missed")) is Failure.REPLAY_MISS
    # a message quoting a budget error is not one
    assert classify_failure(_cell_error("ValueError", "not a BudgetExceeded nor a ReplayMiss")) is Failure.ERROR
    assert classify_failure(RuntimeError("EstimateOverBudget: said in the text only")) is Failure.ERROR


def test_a_task_outcome_carries_its_failure_across_processes() -> None:
    outcome = TaskOutcome("failed", 1.0, "e", [], "host", 0.0, 1.0, False, failure=Failure.REPLAY_MISS)
    assert pickle.loads(pickle.dumps(outcome)).failure is Failure.REPLAY_MISS


@pytest.mark.series
def test_each_kind_of_failure_arrives_on_the_notebooks_result(tmp_path: Path, isolated: Path) -> None:
    d = tmp_path / "nbs"
    d.mkdir()
    for i, (ename, _) in enumerate(KINDS, 1):
        body = f"from tomlib.llm import {ename}\n" if ename != "ValueError" else ""
        write_nb(d / f"0{i}_{ename.lower()}.ipynb", "results_dir = ''", body + f"raise {ename}('said here')")
    write_nb(d / "05_fine.ipynb", "results_dir = ''", "x = 1")
    results = run_notebooks(Profile(name="t"), directory=d, progress=False, html=False, jobs=2)
    got = {r.name: (r.status, r.failure) for r in results}
    assert got == {
        "01_budgetexceeded": ("failed", Failure.BUDGET_EXCEEDED),
        "02_estimateoverbudget": ("stopped", Failure.ESTIMATE_OVER_BUDGET),  # refused unspent
        "03_replaymiss": ("failed", Failure.REPLAY_MISS),
        "04_valueerror": ("failed", Failure.ERROR),
        "05_fine": ("ok", None),
    }
    assert "STOPPED 02_estimateoverbudget: said here" in summarize(results)
    stamp = (isolated / "results" / "notebooks" / "03_replaymiss.stamp.json").read_text()
    assert "failure" not in stamp  # the stamp on disk is as it was
