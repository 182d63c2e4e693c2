"""The episode index of a run log: written at close, trusted for the bytes it covers, extended by a scan of the rest,
never holding a secret, and giving the explorer the same views as a full load."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tomlib.trace import RunLog, load_runs
from tomlib.trace._index import INDEX_NAME, read_index
from tomlib.widgets import Trace, step_html

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def write_run(run_id: str, episodes: int = 4, steps: int = 3) -> None:
    with RunLog("idx", run_id=run_id) as log:
        for s in range(steps):  # interleaved, as gathered episodes write
            for e in range(episodes):
                cond = f"c{e % 2}"
                if s == 0:
                    log.event(
                        "env_state", {"game": "matrix", "agents": ["p1", "p2"]}, condition=cond, episode=e, step=0
                    )
                log.event("action", {"action": f"a{s}"}, condition=cond, episode=e, step=s, agent="p1")
        for e in range(episodes):
            log.event("score", {"metric": "points", "value": float(e)}, condition=f"c{e % 2}", episode=e)
        log.event("note", {"text": "no episode"})


def test_index_locates_every_episode_and_a_slice_reads_only_it(isolated: Path) -> None:
    write_run("r1")
    path = isolated / "results" / "runs" / "r1" / "events.jsonl"
    assert (path.parent / INDEX_NAME).exists()
    idx = read_index(path)
    assert idx.size == path.stat().st_size and idx.events == 1 + 4 + 12 + 4 + 1
    assert sorted(idx.episodes) == [("c0", 0), ("c0", 2), ("c1", 1), ("c1", 3)]
    ep = idx.episodes[("c1", 3)]
    assert len(ep.offsets) == 1 + 3 + 1 and ep.score == {"metric": "points", "value": 3.0} and ep.last_step == 2
    full = load_runs(run_ids=["r1"])
    part = load_runs(run_ids=["r1"], episodes=[("c1", 3)])
    expected = full[(full["condition"] == "c1") & (full["episode"] == 3)].reset_index(drop=True)
    assert part.drop(columns="payload").equals(expected.drop(columns="payload"))
    assert list(part["payload"]) == list(expected["payload"])


def test_a_live_or_killed_run_is_indexed_by_scanning_what_the_index_does_not_cover(isolated: Path) -> None:
    write_run("r2", episodes=2)
    path = isolated / "results" / "runs" / "r2" / "events.jsonl"
    with open(path, "a") as fh:  # lines written after the index was saved, and a line cut by a kill
        fh.write(json.dumps({"run_id": "r2", "experiment": "idx", "condition": "c9", "episode": 9, "kind": "action"}))
        fh.write('\n{"run_id": "r2", "kind": "act')
    cut = f"skipped 1 unreadable log line.*: {path}:{len(path.read_text().splitlines())}$"
    with pytest.warns(UserWarning, match=cut):
        idx = read_index(path)
    assert ("c9", 9) in idx.episodes and len(idx.skipped) == 1
    with RunLog("idx", run_id="r2") as log:  # a rerun extends the same index
        log.event("action", {"action": "x"}, condition="c9", episode=9, step=1)
    with pytest.warns(UserWarning, match=cut):  # the saved index keeps the line it skipped
        idx = read_index(path)
    assert len(idx.episodes[("c9", 9)].offsets) == 2 and idx.size == path.stat().st_size
    (path.parent / INDEX_NAME).write_text("{not json")  # a damaged index is ignored, not trusted
    assert len(read_index(path, warn=False).episodes[("c9", 9)].offsets) == 2


def test_lazy_trace_shows_what_the_full_load_shows(isolated: Path) -> None:
    write_run("r3")
    lazy, full = Trace.from_runs(["r3"]), Trace(load_runs(run_ids=["r3"]))
    cols = ["run_id", "experiment", "source", "condition", "episode", "score", "metric", "steps", "agents"]
    assert lazy.episodes()[cols].equals(full.episodes()[cols]) and len(lazy) == len(full)
    for ref in lazy.refs("r3", "c1"):
        for step in lazy.steps(ref):
            assert step_html(lazy.step(ref, step)) == step_html(full.step(ref, step))


def test_the_index_holds_no_secret(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    planted = "plantedIndexSecret-41c9"
    monkeypatch.setenv("SOME_SERVICE_TOKEN", planted)
    with RunLog("idx", run_id="r4") as log:
        log.event("score", {"value": 1.0, "why": planted}, condition=planted, episode=0, agent=planted)
    raw = (isolated / "results" / "runs" / "r4" / INDEX_NAME).read_text()
    assert planted not in raw and "[REDACTED]" in raw


def test_a_compressed_log_reads_the_same_and_a_rerun_appends_to_it(isolated: Path) -> None:
    from tomlib.trace._index import compress_log, read_lines

    write_run("rz", episodes=6, steps=5)
    plain = isolated / "results" / "runs" / "rz" / "events.jsonl"
    before = load_runs(run_ids=["rz"])
    index_before = read_index(plain)
    gz = compress_log(plain, block_bytes=600)  # many small gzip members, so episodes straddle them
    assert not plain.exists() and gz.exists() and gz.stat().st_size < index_before.size
    idx = read_index(gz)
    assert len(idx.blocks) > 3 and idx.episodes.keys() == index_before.episodes.keys()
    ep = idx.episodes[("c1", 3)]
    assert [e["step"] for e in read_lines(gz, ep.offsets, ep.lengths)] == [0, 0, 1, 2, 3, 4, None]
    pd.testing.assert_frame_equal(load_runs(run_ids=["rz"]), before)  # whole, through gzip
    sliced = load_runs(run_ids=["rz"], episodes=[("c0", 2)])
    assert sliced["episode"].eq(2).all() and len(sliced) == 1 + 5 + 1
    assert len(Trace.from_runs(["rz"]).refs("rz", "c1")) == 3
    with RunLog("idx", run_id="rz") as log:  # a rerun with the same id: back to a plain log, appended
        log.event("score", {"metric": "points", "value": 9.0}, condition="c9", episode=0)
    assert plain.exists() and not gz.exists()
    assert read_index(plain).episodes[("c9", 0)].score == {"metric": "points", "value": 9.0}
    assert len(load_runs(run_ids=["rz"])) == len(before) + 2  # its run_start and the new score


def test_a_compressed_logs_index_is_compressed_and_an_old_index_still_reads(isolated: Path) -> None:
    import gzip

    import orjson

    from tomlib.trace._index import compress_log

    write_run("rv", episodes=4, steps=30)
    plain = isolated / "results" / "runs" / "rv" / "events.jsonl"
    saved = plain.with_name(INDEX_NAME)
    plain_size = saved.stat().st_size
    expected = read_index(plain)
    gz = compress_log(plain)
    assert saved.read_bytes()[:2] == b"\x1f\x8b" and saved.stat().st_size < plain_size / 3
    assert read_index(gz).episodes == expected.episodes
    doc = orjson.loads(gzip.decompress(saved.read_bytes()))  # as version 1 wrote it: absolute offsets, plain JSON
    doc["version"] = 1
    doc["episodes"] = [
        [c, e, list(ep.offsets), *rest]
        for (c, e, _, *rest), ep in zip(doc["episodes"], expected.episodes.values(), strict=True)
    ]
    saved.write_bytes(orjson.dumps(doc))
    assert read_index(gz).episodes == expected.episodes


def test_a_compressed_log_without_its_index_reads_every_episode(isolated: Path) -> None:
    """Its index lost, or a plain log gzipped by hand: the stream is read (a reader used to index a missing member)."""
    import gzip

    from tomlib.trace._index import compress_log

    write_run("rn", episodes=6, steps=5)
    runs = isolated / "results" / "runs"

    def drawn(trace: Trace, run: str) -> list[list[str]]:
        return [[step_html(trace.step(r, s)) for s in trace.steps(r)] for r in trace.refs(run, "c1")]

    expected = drawn(Trace.from_runs(["rn"]), "rn")
    compress_log(runs / "rn" / "events.jsonl", block_bytes=600)
    (runs / "rn" / INDEX_NAME).unlink()
    write_run("rh", episodes=6, steps=5)  # gzipped by hand, beside the plain log's own index
    plain = runs / "rh" / "events.jsonl"
    (runs / "rh" / "events.jsonl.gz").write_bytes(gzip.compress(plain.read_bytes()))
    plain.unlink()
    for run in ("rn", "rh"):
        after = Trace.from_runs([run])
        assert len(after.refs(run, "c1")) == 3 and drawn(after, run) == expected
        sliced = load_runs(run_ids=[run], episodes=[("c0", 4), ("c0", 2)])
        assert list(sliced["episode"].unique()) == [2, 4] and len(sliced) == 2 * (1 + 5 + 1)


def test_a_log_compressed_twice_is_one_line_with_the_command_that_undoes_it(isolated: Path) -> None:
    import gzip
    import subprocess

    from tomlib.trace._index import DamagedLog, compress_log, decompress_log, read_lines

    write_run("r2x", episodes=4, steps=3)
    folder = isolated / "results" / "runs" / "r2x"
    gz = compress_log(folder / "events.jsonl")
    once = gz.read_bytes()
    gz.write_bytes(gzip.compress(once))  # a backup tool, or a hand-run gzip, compressed it again
    idx_bytes = (folder / INDEX_NAME).read_bytes()
    for index in (True, False):
        if not index:
            (folder / INDEX_NAME).unlink()
        with pytest.raises(DamagedLog) as refused:
            idx = read_index(gz)
            ep = idx.episodes[("c1", 1)]
            read_lines(gz, ep.offsets, ep.lengths, idx.blocks)
        msg = str(refused.value)
        assert "is gzip-compressed twice" in msg and "\n" not in msg, msg
        assert gz.read_bytes() != once  # nothing was changed
        subprocess.run(["sh", "-c", msg.split("`")[1]], check=True)  # the fix the message gives, as given
        assert gz.read_bytes() == once
        (folder / INDEX_NAME).write_bytes(idx_bytes)
        assert len(Trace.from_runs(["r2x"])) == len(load_runs(run_ids=["r2x"]))
        gz.write_bytes(gzip.compress(once))
    with pytest.raises(DamagedLog, match="compressed twice"):
        decompress_log(gz)  # a rerun with the same id would have appended to gzip bytes
    assert not (folder / "events.jsonl").exists()


def test_unreadable_lines_are_warned_about_naming_file_and_line(isolated: Path) -> None:
    """The explorer and an episode slice read through the index: its skipped lines used to pass without a word."""
    write_run("rw", episodes=2, steps=2)
    path = isolated / "results" / "runs" / "rw" / "events.jsonl"
    with open(path, "a") as fh:
        fh.write('not an event\n{"run_id": "rw", "condition": "c0", "episode": 0, "kind": "score"}\n{"cut')
    n = len(path.read_text().splitlines())
    where = f"{path}:{n - 2}, {path}:{n}"
    with pytest.warns(UserWarning, match=f"skipped 2 unreadable log line.*: {where}$"):
        Trace.from_runs(["rw"])
    with pytest.warns(UserWarning, match=f"skipped 2 unreadable log line.*: {where}$"):
        load_runs(run_ids=["rw"], episodes=[("c0", 0)])


@pytest.mark.parametrize("run_id", ["a/b", "../outside", ".hidden", "..", "a\\b", "a\x00b", "a\nb", "x" * 201])
def test_a_run_id_that_is_not_a_plain_name_is_refused(isolated: Path, run_id: str) -> None:
    from tomlib.errors import UsageError

    with pytest.raises(UsageError, match=r"cannot name a run folder: it .*; give a plain name") as refused:
        RunLog("idx", run_id=run_id)
    assert "\n" not in str(refused.value)
    assert not (isolated / "results" / "runs").exists() and not (isolated / "results" / "outside").exists()
