"""The store's compact encoding: zstd frames with a dictionary per paper, old stores read and compacted."""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

import pytest

from tomlib.llm import ResponseStore, SampleKey, Sampling, StoreError, build_request, request_key
from tomlib.llm._codec import MIN_SAMPLES, dict_id_of, paper_of, shipped_dictionaries
from tomlib.llm._request import canonical_json

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

IDENTITY = {"kind": "openai", "endpoint": "e", "model": "m"}
RULES = "You play a repeated coordination game with a partner. " * 20  # what every call of a paper repeats

OLD_SCHEMA = """
CREATE TABLE responses (key TEXT PRIMARY KEY, experiment TEXT NOT NULL, model TEXT NOT NULL,
    sample_label TEXT NOT NULL, request TEXT NOT NULL, response TEXT NOT NULL, created REAL NOT NULL);
CREATE INDEX responses_experiment ON responses(experiment);
CREATE INDEX responses_site ON responses(sample_label);
CREATE TABLE imports (path TEXT PRIMARY KEY, sha256 TEXT NOT NULL, n INTEGER NOT NULL, imported REAL NOT NULL);
"""


def req(i: int, experiment: str = "adaptive_tom.table1") -> dict:  # type: ignore[type-arg]
    messages = [{"role": "system", "content": RULES}, {"role": "user", "content": f"round {i}: you chose A, they B"}]
    return build_request(IDENTITY, messages, Sampling(), None, SampleKey(experiment=experiment, step=i))


def resp(i: int) -> dict:  # type: ignore[type-arg]
    reply = json.dumps({"predicted_partner_action": "B", "belief": f"they repeat {i}", "action": "A"})
    return {"content": reply, "usage": {"prompt_tokens": 100 + i, "completion_tokens": 7}, "finish_reason": "stop"}


def test_values_are_stored_compressed_and_read_back_exactly(tmp_path: Path) -> None:
    store = ResponseStore(tmp_path / "s.sqlite")
    key = store.put(req(1), resp(1))
    raw_req, raw_resp = store._conn().execute("SELECT request, response FROM responses").fetchone()
    assert isinstance(raw_req, bytes) and isinstance(raw_resp, bytes)
    assert len(raw_req) < len(canonical_json(req(1))) / 4  # the rules are in the committed dictionary's text
    assert dict_id_of(raw_req) == store._codec.preferred["adaptive_tom"] != 0
    assert store.get(key) == resp(1)
    assert store.stats()[0]["prompt_tokens"] == 101  # counted without decompressing
    out = tmp_path / "t.jsonl.gz"
    store.export(out)
    line = json.loads(gzip.decompress(out.read_bytes()))
    assert line == {"request": req(1), "response": resp(1)}  # a shared transcript stays plain JSON


def test_every_paper_has_a_committed_dictionary() -> None:
    assert set(shipped_dictionaries()) == {"adaptive_tom", "coalition", "tom_ib"}
    assert paper_of("coalition.programming") == "coalition"


def test_an_old_store_is_read_as_it_is_then_compacted(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:  # a store written before the encoding existed: JSON text rows
        db.executescript(OLD_SCHEMA)
        for i in range(40):
            r = req(i, "coalition.debate")
            db.execute(
                "INSERT INTO responses VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    request_key(r),
                    "coalition.debate",
                    "e#m",
                    f"coalition.debate/s{i}",
                    canonical_json(r),
                    canonical_json(resp(i)),
                    float(i),
                ),
            )
    store = ResponseStore(path)
    assert store.get(request_key(req(3, "coalition.debate"))) == resp(3)
    assert store.stats()[0]["prompt_tokens"] == sum(100 + i for i in range(40))  # from the JSON of old rows
    fresh = store.put(req(99, "coalition.debate"), resp(99))  # new rows compressed beside the old ones
    export_before = tmp_path / "before.jsonl.gz"
    store.export(export_before)

    done = store.compact()
    assert done["rewritten"] == 40 and done["rows"] == 41  # the new row was already in the current encoding
    kinds = {r[0] for r in store._conn().execute("SELECT typeof(request) FROM responses")}
    assert kinds == {"blob"}
    assert store.get(fresh) == resp(99) and store.get(request_key(req(3, "coalition.debate"))) == resp(3)
    export_after = tmp_path / "after.jsonl.gz"
    store.export(export_after)
    assert export_after.read_bytes() == export_before.read_bytes()  # nothing changed but the bytes on disk


def test_a_dictionary_trained_on_the_store_is_preferred_and_read_by_other_openers(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    reader = ResponseStore(path)  # opened before the dictionary exists
    writer = ResponseStore(path)
    for i in range(MIN_SAMPLES):
        writer.put(req(i, "quickstart"), resp(i))  # a paper with no committed dictionary: plain zstd
    assert dict_id_of(writer._conn().execute("SELECT request FROM responses").fetchone()[0]) == 0
    writer.compact(train_new=True)
    trained = writer._codec.preferred["quickstart"]
    assert trained != 0
    key = writer.put(req(500, "quickstart"), resp(500))
    raw = writer._conn().execute("SELECT request FROM responses WHERE key = ?", (key,)).fetchone()[0]
    assert dict_id_of(raw) == trained
    assert reader.get(key) == resp(500)  # loads the new dictionary from the store when it meets it
    assert reader.get(request_key(req(5, "quickstart"))) == resp(5)


def test_a_frame_whose_dictionary_is_gone_names_the_fix(tmp_path: Path) -> None:
    store = ResponseStore(tmp_path / "s.sqlite")
    key = store.put(req(1), resp(1))
    store._conn().execute("DELETE FROM dictionaries")
    fresh = ResponseStore(tmp_path / "s.sqlite")  # the committed dictionary is known here: still readable
    assert fresh.get(key) == resp(1)
    for i in range(MIN_SAMPLES):
        fresh.put(req(i, "quickstart"), resp(i))
    fresh.compact(train_new=True)  # a dictionary only this store holds
    mine = fresh.put(req(900, "quickstart"), resp(900))
    fresh._conn().execute("DELETE FROM dictionaries")  # a row copied into a store that never held its dictionary
    fresh._codec = fresh._load_codec()
    with pytest.raises(StoreError, match="cache export"):
        fresh.get(mine)


def test_a_store_keeps_a_committed_dictionary_from_its_first_row_that_uses_it(tmp_path: Path) -> None:
    """A new store holds no dictionary until a row needs one, then only that paper's (a store of a few calls
    carried all three, 48 KB, before); rows stay readable by another opener and by the read-only reader."""
    from tomlib.llm import recorded_exchange

    path = tmp_path / "s.sqlite"
    store = ResponseStore(path)
    held = lambda: {r[0] for r in store._conn().execute("SELECT paper FROM dictionaries")}  # noqa: E731
    assert held() == set()
    key = store.put(req(1, "coalition.table1"), resp(1))
    assert held() == {"coalition"}
    store.put(req(2, "coalition.table1"), resp(2))
    store.put(req(3, "quickstart"), resp(3))  # no committed dictionary: plain zstd, nothing copied
    assert held() == {"coalition"} and len(store._conn().execute("SELECT * FROM dictionaries").fetchall()) == 1
    assert ResponseStore(path).get(key) == resp(1)
    assert recorded_exchange(key, path)["reply"] == resp(1)["content"]  # type: ignore[index]


def test_the_explorer_reads_an_exchange_without_writing_to_the_store(tmp_path: Path) -> None:
    """``recorded_exchange`` opens a store read-only (another user's, a read-only disk): the same exchange, and the
    store's file unchanged; an old store without dictionaries is read as well."""
    from tomlib.llm import recorded_exchange
    from tomlib.llm._store import StoreReader

    store = ResponseStore(tmp_path / "s.sqlite")
    key = store.put(req(3), resp(3))
    store._conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    before = (tmp_path / "s.sqlite").read_bytes()
    (tmp_path / "s.sqlite").chmod(0o444)
    want = {"messages": req(3)["messages"], "response_format": None, "reply": resp(3)["content"]}
    assert recorded_exchange(key, tmp_path / "s.sqlite") == want
    assert (tmp_path / "s.sqlite").read_bytes() == before
    assert StoreReader(tmp_path / "s.sqlite").exchange("no-such-key") is None
    immutable = StoreReader.__new__(StoreReader)  # what a store whose -shm cannot be made here is read with
    immutable.path, immutable._conn = tmp_path / "s.sqlite", None
    immutable._conn = immutable._open(immutable=True)
    immutable._codec = immutable._load_codec()
    assert immutable.exchange(key) == want
    old = tmp_path / "old.sqlite"
    with sqlite3.connect(old) as db:
        db.executescript(OLD_SCHEMA)
        db.execute(
            "INSERT INTO responses VALUES (?, ?, ?, ?, ?, ?, ?)",
            ("k1", "adaptive_tom.table1", "m", "s", canonical_json(req(4)), canonical_json(resp(4)), 0.0),
        )
    assert recorded_exchange("k1", old) == {
        "messages": req(4)["messages"],
        "response_format": None,
        "reply": resp(4)["content"],
    }
    assert "dictionaries" not in {r[0] for r in sqlite3.connect(old).execute("SELECT name FROM sqlite_master")}


def test_training_on_transcripts_warns_of_a_line_it_cannot_read_naming_file_and_line(tmp_path: Path) -> None:
    """It ended in a bare JSONDecodeError, naming neither the file nor the line."""
    from tomlib.llm._codec import train_committed

    folder = tmp_path / "committed"
    folder.mkdir()
    good = [json.dumps({"request": req(i), "response": resp(i)}) for i in range(MIN_SAMPLES * 2)]
    lines = [*good[:3], "not a transcript line", '{"request": {}}', *good[3:]]
    (folder / "adaptive_tom.table1.jsonl.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    path = folder / "adaptive_tom.table1.jsonl.gz"
    with pytest.warns(UserWarning, match=rf"2 transcript line\(s\) .*: {path}:4 \(JSONDecodeError\); {path}:5 \("):
        written = train_committed(folder, tmp_path / "dictionaries")
    assert written == {"adaptive_tom": 2 * len(good)} and (tmp_path / "dictionaries" / "adaptive_tom.zdict").exists()
