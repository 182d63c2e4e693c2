"""``python -m tomlib run --stop-when-decided`` (issue 34) end to end on the sim: a notebook runs in waves of growing
size, each wave judged with anytime-valid sequences; what it decided and did not spend reaches the terminal,
``results/waves.json`` and REPORT; a typo in a claim id is refused with the closest one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tomlib.__main__ import main
from tomlib.planning import read_records
from tomlib.planning._waves import WaveRecord

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

pytest.importorskip("confseq.boundaries")


@pytest.mark.series
def test_a_notebook_runs_in_waves_and_says_what_each_claim_came_to(
    isolated: Path, capsys: pytest.CaptureFixture
) -> None:
    results = isolated / "results"
    args = ["run", "08", "--profile", "sim", "--stop-when-decided", "--waves", "2", "--results", str(results)]
    assert main([*args, "-p", "humaneval_tasks", "2", "-p", "mbpp_tasks", "2", "--no-html"]) == 0
    out = capsys.readouterr().out
    assert out.count("08_coalition_table1 ok") == 2  # 1 then 2 tasks a benchmark: the first replays in the second
    (record,) = read_records(results)
    assert record.planned == {"humaneval_tasks": 2, "mbpp_tasks": 2} and record.waves_run == 2
    assert record.ran == record.planned and not record.stopped_early
    assert set(record.decided) == {"coalition.higher_tom_no_gain"}
    assert record.line() in out
    saved = json.loads((results / "waves.json").read_text())
    assert "confidence sequences" in saved["_method"]
    report = (results / "REPORT.md").read_text()
    assert "Stopped when decided" in report and record.line() in report


def test_an_early_stop_says_what_it_did_not_spend() -> None:
    record = WaveRecord(
        "08_coalition_table1",
        planned={"humaneval_tasks": 40, "mbpp_tasks": 40},
        ran={"humaneval_tasks": 10, "mbpp_tasks": 10},
        waves_run=1,
        waves=4,
        decided={"coalition.higher_tom_no_gain": "supported"},
        stopped_early=True,
        calls_not_spent=7200,
        usd_not_spent=2.48,
    )
    assert record.units == (20, 80)
    assert record.line() == (
        "08_coalition_table1: decided after 20 of 80 planned units (humaneval_tasks 10 of 40, mbpp_tasks 10 of 40); "
        "7,200 calls and $2.48 not spent"
    )


def test_a_claim_id_typo_is_refused_before_any_kernel(isolated: Path, capsys: pytest.CaptureFixture) -> None:
    args = ["run", "08", "--profile", "sim", "--stop-when-decided", "--results", str(isolated / "r")]
    assert main([*args, "--claims", "coalition.higher_tom_no_gian"]) == 2
    assert "did you mean 'coalition.higher_tom_no_gain'" in capsys.readouterr().err
    assert not (isolated / "r" / "notebooks").exists()


def test_what_was_not_spent_comes_from_the_notebooks_own_estimator() -> None:
    from tomlib.experiments import coalition_programming as cp
    from tomlib.planning._costs import NOTEBOOKS
    from tomlib.planning._waves import not_spent

    planned, ran = {"humaneval_tasks": 40, "mbpp_tasks": 40}, {"humaneval_tasks": 10, "mbpp_tasks": 10}
    calls, usd = not_spent(NOTEBOOKS["08_coalition_table1"], ["gpt-4o-mini"], {"seeds": 1}, planned, ran)
    full, done = (cp.estimate("gpt-4o-mini", cp.table1_configs(), n, 1) for n in (80, 20))
    assert calls == full.calls - done.calls and usd == pytest.approx(full.usd - done.usd)
