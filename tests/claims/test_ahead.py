"""Claims judged ahead on a background thread (``tomlib.claims.judge_ahead``), as ``tomlib run`` does once a paper's
notebooks are done: the report's :func:`judge` uses them only for the very units they were judged on."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pandas as pd
import pytest

from tomlib.claims import _ahead, judge, judge_ahead
from tomlib.experiments import adaptive_tom as at
from tomlib.runner._execute import papers_ready

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


@pytest.fixture(autouse=True)
def nothing_ahead() -> None:
    _ahead.forget()
    yield
    _ahead.forget()


def _table2(results: Path, episodes: int, seed: int = 42) -> None:
    asyncio.run(
        at.table2(
            tasks=["memory_1"],
            algorithms=["FTL", "Hedge"],
            episodes=episodes,
            seed=seed,
            progress=False,
            results=str(results),
        )
    )


def test_a_paper_judged_ahead_is_used_once_and_equals_judging_it_then(tmp_path: Path) -> None:
    _table2(tmp_path, episodes=3)
    judge_ahead(tmp_path, ["adaptive_tom"])
    _ahead.settle()
    assert len(_ahead._kept) == 1  # judged, and waiting for the report
    got = judge(tmp_path, ["adaptive_tom"])
    assert not _ahead._kept  # handed out once
    again = judge(tmp_path, ["adaptive_tom"])  # judged now, nothing ahead
    assert got["verdict"].ne("not reproduced").any()
    pd.testing.assert_frame_equal(got, again)


def test_units_rewritten_after_judging_ahead_are_judged_again(tmp_path: Path) -> None:
    """A later notebook rewrote the table: the verdicts judged ahead are of other bytes, so they are not used."""
    _table2(tmp_path, episodes=3)
    judge_ahead(tmp_path, ["adaptive_tom"])
    _ahead.settle()
    before = judge(tmp_path, ["adaptive_tom"])
    judge_ahead(tmp_path, ["adaptive_tom"])
    _ahead.settle()
    _table2(tmp_path, episodes=6, seed=7)
    fresh = tmp_path / "fresh"
    shutil.copytree(tmp_path / "units", fresh / "units")
    got = judge(tmp_path, ["adaptive_tom"])
    want = judge(fresh, ["adaptive_tom"])
    pd.testing.assert_frame_equal(got, want)
    assert before["verdict"].ne("not reproduced").any()
    assert not got["n_units"].equals(before["n_units"])  # the rewrite changed the verdicts: the test can tell


def test_a_judgement_ahead_that_fails_leaves_the_error_to_the_report(tmp_path: Path) -> None:
    from tomlib.claims._units import UnitsFileError

    bad = tmp_path / "units" / "adaptive_tom.table2.csv"
    bad.parent.mkdir(parents=True)
    bad.write_text("paper_id,table_id\nadaptive_tom,table2\n")  # no value column
    judge_ahead(tmp_path, ["adaptive_tom"])
    _ahead.settle()
    with pytest.raises(UnitsFileError, match=f"{bad} lacks the columns metric, value, source that every units"):
        judge(tmp_path, ["adaptive_tom"])


def test_a_paper_is_ready_once_no_notebook_left_may_write_it() -> None:
    written = ["adaptive_tom.table1", "adaptive_tom.table2", "tom_ib.fig5"]
    assert papers_ready(written, ["03_adaptive_tom_table3", "07_coalition_mechanism"]) == ["tom_ib"]
    assert papers_ready(written, ["07_coalition_mechanism"]) == ["adaptive_tom", "tom_ib"]
    assert papers_ready(written, []) == ["adaptive_tom", "tom_ib"]
    assert papers_ready(written, ["99_my_own"]) == []  # a notebook its name does not place may write any paper
    assert papers_ready(["not_a_paper.t"], []) == []
