"""The response store: WAL, many writers, transcripts that round-trip byte for byte."""

from __future__ import annotations

import gzip
import json
import multiprocessing
from pathlib import Path

import pytest

from tomlib.llm import ResponseStore, SampleKey, Sampling, build_request, request_key

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

IDENTITY = {"kind": "openai", "endpoint": "e", "model": "m"}


def req(i: int, experiment: str = "exp") -> dict:  # type: ignore[type-arg]
    return build_request(
        IDENTITY, [{"role": "user", "content": f"q{i}"}], Sampling(), None, SampleKey(experiment=experiment, step=i)
    )


def resp(i: int) -> dict:  # type: ignore[type-arg]
    return {"content": f"a{i}", "usage": {"prompt_tokens": 1, "completion_tokens": 2}, "finish_reason": "stop"}


def _writer(path: str, worker: int, n: int) -> None:
    store = ResponseStore(path)
    for i in range(n):
        store.put(req(worker * 10_000 + i), resp(i))


def test_wal_mode_and_concurrent_writers_from_processes(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    store = ResponseStore(path)
    assert store._conn().execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(path), w, 150)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    assert len(store) == 600


def _opener(path: str, barrier: object, worker: int) -> None:
    barrier.wait()  # type: ignore[attr-defined]
    ResponseStore(path).put(req(worker), resp(worker))


def test_many_processes_creating_a_new_store_at_once(tmp_path: Path) -> None:
    """Regression: the WAL switch on a brand-new file raced and failed with 'database is locked'."""
    ctx = multiprocessing.get_context("forkserver")  # fresh processes without 18 imports of tomlib: forked from one
    ctx.set_forkserver_preload([__name__])
    for trial in range(3):
        path = str(tmp_path / f"fresh{trial}.sqlite")
        barrier = ctx.Barrier(6)
        procs = [ctx.Process(target=_opener, args=(path, barrier, w)) for w in range(6)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout=120)
        assert [p.exitcode for p in procs] == [0] * 6
        assert len(ResponseStore(path)) == 6


def test_export_import_round_trip_is_byte_stable(tmp_path: Path) -> None:
    a = ResponseStore(tmp_path / "a.sqlite")
    for i in range(5):
        a.put(req(i), resp(i))
    a.put(req(99, experiment="other"), resp(99))
    n = a.export(tmp_path / "x.jsonl.gz", experiment="exp")
    assert n == 5
    a.export(tmp_path / "y.jsonl.gz", experiment="exp")
    assert (tmp_path / "x.jsonl.gz").read_bytes() == (tmp_path / "y.jsonl.gz").read_bytes()
    b = ResponseStore(tmp_path / "b.sqlite")
    assert b.import_file(tmp_path / "x.jsonl.gz") == 5
    assert b.import_file(tmp_path / "x.jsonl.gz") == 0
    assert b.get(request_key(req(3))) == resp(3)
    assert b.get(request_key(req(99, experiment="other"))) is None


def test_sync_transcripts_imports_changed_files_once(tmp_path: Path) -> None:
    src = ResponseStore(tmp_path / "src.sqlite")
    src.put(req(1), resp(1))
    (tmp_path / "t").mkdir()
    src.export(tmp_path / "t" / "one.jsonl.gz")
    dst = ResponseStore(tmp_path / "dst.sqlite")
    assert dst.sync_transcripts(tmp_path / "t") == 1
    assert dst.sync_transcripts(tmp_path / "t") == 0
    src.put(req(2), resp(2))
    src.export(tmp_path / "t" / "one.jsonl.gz")
    assert dst.sync_transcripts(tmp_path / "t") == 1


def test_a_broken_transcript_line_is_reported_and_only_it_is_skipped(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl.gz"
    good_line = json.dumps({"request": req(1), "response": resp(1)})
    bad.write_bytes(gzip.compress((good_line + "\n{not json\n").encode()))
    store = ResponseStore(tmp_path / "s.sqlite")
    with pytest.warns(UserWarning, match=r"bad.jsonl.gz:2 \(JSONDecodeError.*re-export or re-record it"):
        assert store.import_file(bad) == 1
    assert len(store) == 1 and str(bad) in store.transcript_problems


def test_prune_by_experiment_and_refuses_unfiltered(tmp_path: Path) -> None:
    store = ResponseStore(tmp_path / "s.sqlite")
    for i in range(3):
        store.put(req(i), resp(i))
        store.put(req(i, experiment="exp.sub"), resp(i))
        store.put(req(i, experiment="keep"), resp(i))
    assert store.prune() == 0
    assert store.prune(experiment="exp") == 6  # exp and its sub-experiments
    assert len(store) == 3
    assert [r["experiment"] for r in store.stats()] == ["keep"]
