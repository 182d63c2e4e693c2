"""Claims judged once per run (``tomlib.claims._memo``): a judgement is kept by its claim, source and units' content,
and the kernels of a run read each other's through its shared folder; other content is judged again."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pandas as pd
import pytest

from tomlib.claims import _memo, _verdict, claims_on, judge, load_claims, verdicts
from tomlib.experiments import adaptive_tom as at
from tomlib.runshare import ENV_SHARED

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def _table1(results: Path, episodes: int = 3, seed: int = 42) -> None:
    asyncio.run(at.table1(tasks=["memory_1"], episodes=episodes, seed=seed, progress=False, results=str(results)))


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The claims judged from their rows from now on (a judgement read back is not)."""
    calls: list[str] = []
    real = _verdict.judge_one

    def counted(claim, frame):  # type: ignore[no-untyped-def]
        calls.append(claim.claim_id)
        return real(claim, frame)

    monkeypatch.setattr(_verdict, "judge_one", counted)
    return calls


@pytest.fixture
def shared(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    folder = tmp_path / "shared"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv(ENV_SHARED, str(folder))
    return folder


def test_a_later_kernel_reads_the_judgements_and_gets_the_same_table(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, shared: Path
) -> None:
    _table1(tmp_path)
    calls = _counting(monkeypatch)
    first = claims_on(["adaptive_tom.table1"], tmp_path)
    assert calls and list((shared / _memo.PART).glob("*.pickle"))
    _memo.forget()  # another kernel of the run: nothing in memory
    calls.clear()
    again = claims_on(["adaptive_tom.table1"], tmp_path)
    assert calls == []
    pd.testing.assert_frame_equal(again, first)
    monkeypatch.delenv(ENV_SHARED)  # a process outside the run judges everything itself, to the same table
    _memo.forget()
    alone = claims_on(["adaptive_tom.table1"], tmp_path)
    assert calls
    pd.testing.assert_frame_equal(alone, first)


def test_other_units_are_judged_again(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, shared: Path) -> None:
    _table1(tmp_path)
    before = judge(tmp_path, ["adaptive_tom"])
    _table1(tmp_path, episodes=5, seed=7)  # a later notebook rewrote the table
    _memo.forget()  # a later kernel, with the first table's judgements in the run's folder
    calls = _counting(monkeypatch)
    got = judge(tmp_path, ["adaptive_tom"])
    assert calls
    _memo.forget()
    monkeypatch.delenv(ENV_SHARED)
    want = judge(tmp_path, ["adaptive_tom"])
    pd.testing.assert_frame_equal(got, want)
    assert not got["n_units"].equals(before["n_units"])  # the rewrite changed the verdicts: the test can tell


def test_a_changed_value_changes_the_key(tmp_path: Path) -> None:
    _table1(tmp_path)
    table = pd.read_csv(tmp_path / "units" / "adaptive_tom.table1.csv")
    claim = next(c for c in load_claims("adaptive_tom") if c.units == "adaptive_tom.table1")
    other = table.copy()
    other.loc[0, "value"] = other.loc[0, "value"] + 1
    assert _memo.key(claim, "formal", table) != _memo.key(claim, "formal", other)
    assert _memo.key(claim, "formal", table) != _memo.key(claim, "sim:x", table)
    assert _memo.key(claim, "formal", table) == _memo.key(claim, "formal", table.copy())


def test_a_calibration_keeps_nothing(tmp_path: Path) -> None:
    _table1(tmp_path)
    table = pd.read_csv(tmp_path / "units" / "adaptive_tom.table1.csv")
    claims = [c for c in load_claims("adaptive_tom") if c.units == "adaptive_tom.table1"]
    verdicts("adaptive_tom", claims, {"adaptive_tom.table1": table})
    assert not _memo._kept


def test_a_file_that_cannot_be_read_is_judged_here(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, shared: Path
) -> None:
    _table1(tmp_path)
    (shared / _memo.PART).mkdir(mode=0o700)
    (shared / _memo.PART / "1-0-cut.pickle").write_bytes(b"cut short")  # e.g. a disk that filled up
    calls = _counting(monkeypatch)
    assert not judge(tmp_path, ["adaptive_tom"]).empty
    assert calls


def test_a_shared_folder_other_users_can_write_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from tomlib.errors import UsageError

    _table1(tmp_path)
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o777)  # what is read from it is unpickled: no one else may put files there
    monkeypatch.setenv(ENV_SHARED, str(folder))
    with pytest.raises(UsageError, match=r"Refusing .* any user can write to it"):
        judge(tmp_path, ["adaptive_tom"])


def test_a_process_keeps_at_most_kept_judgements(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _table1(tmp_path)
    first = judge(tmp_path, ["adaptive_tom"])
    made = len(_memo._kept)
    assert made > 1
    _memo.forget()
    monkeypatch.setattr(_memo, "KEPT", made - 1)
    pd.testing.assert_frame_equal(judge(tmp_path, ["adaptive_tom"]), first)
    assert len(_memo._kept) == made - 1  # the oldest went
