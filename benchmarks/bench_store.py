"""Bytes per model call of the response store and the run log, for the encoding we chose and its alternatives, on
the same calls: the committed transcripts (``data/transcripts/``, every paper) unless ``--transcripts`` names others.

Store (SQLite files as tomlib writes them, VACUUMed; bytes per response):
  text        each request and response as JSON text (stores before issue 35)
  zstd        each a zstd frame (level 6), no dictionary
  zstd+dict   each a zstd frame with the paper's committed dictionary (what ResponseStore writes)
  trained     the same with a dictionary trained on these calls (``tomlib cache compact --train``)
  messages    content-addressed messages: each distinct message text stored once (zstd), requests refer to them
  parquet     one columnar archive of the finished calls (zstd), when pyarrow imports here
Run log (an ``llm_call`` event per call, gzip as the runner leaves a finished log; bytes per call):
  copy        the event carries the prompt and the reply (before issue 35)
  key         the event carries the store key; the explorer reads the exchange from the store

    .venv/bin/python benchmarks/bench_store.py [--transcripts DIR]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson
import zstandard

from tomlib.llm import ResponseStore
from tomlib.llm._codec import LEVEL
from tomlib.llm._request import canonical_json, request_key, sample_key_from_json
from tomlib.paths import transcripts_dir

NL = b"\n"
SCHEMA = """
CREATE TABLE responses (key TEXT PRIMARY KEY, experiment TEXT NOT NULL, model TEXT NOT NULL,
    sample_label TEXT NOT NULL, request NOT NULL, response NOT NULL, created REAL NOT NULL);
CREATE INDEX responses_experiment ON responses(experiment);
CREATE INDEX responses_site ON responses(sample_label);
CREATE TABLE texts (hash TEXT PRIMARY KEY, text BLOB NOT NULL);
"""


def records(folder: Path) -> list[dict]:  # type: ignore[type-arg]
    out = []
    for path in sorted(folder.glob("*.jsonl.gz")):
        with gzip.open(path, "rb") as fh:
            out += [json.loads(line) for line in fh if line.strip()]
    return out


def sqlite_bytes(path: Path, recs: list[dict], enc: Callable[[str, str], bytes | str], db_extra=None) -> float:  # type: ignore[no-untyped-def, type-arg]
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    db.execute("BEGIN")
    for r in recs:
        e = r["request"]["sample_key"]["experiment"]
        req, resp = canonical_json(r["request"]), canonical_json(r["response"])
        label = sample_key_from_json(r["request"]["sample_key"]).label()
        db.execute(
            "INSERT OR IGNORE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?)",
            (request_key(r["request"]), e, "m", label, enc(e, req), enc(e, resp), time.time()),
        )
    if db_extra:
        db_extra(db)
    db.execute("COMMIT")
    db.execute("VACUUM")
    db.close()
    return path.stat().st_size / len(recs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--transcripts", type=Path, default=transcripts_dir())
    args = ap.parse_args()
    recs = records(args.transcripts)
    raw = sum(len(canonical_json(r["request"])) + len(canonical_json(r["response"])) for r in recs) / len(recs)
    print(f"{len(recs):,} calls from {args.transcripts} ({raw:,.0f} bytes of JSON a call)")
    rows: list[tuple[str, float, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        rows.append(("text", sqlite_bytes(root / "a.sqlite", recs, lambda e, t: t), "before"))
        plain = zstandard.ZstdCompressor(level=LEVEL)
        rows.append(("zstd", sqlite_bytes(root / "b.sqlite", recs, lambda e, t: plain.compress(t.encode())), ""))

        t0 = time.perf_counter()
        store = ResponseStore(root / "c.sqlite")
        for r in recs:
            store.put(r["request"], r["response"])
        put_ms = 1000 * (time.perf_counter() - t0) / len(recs)
        t0 = time.perf_counter()
        for r in recs[:2000]:
            assert store.get(request_key(r["request"])) == r["response"]  # exact replay
        get_ms = 1000 * (time.perf_counter() - t0) / min(len(recs), 2000)
        store.compact()
        rows.append(("zstd+dict", store.bytes_stored()["file_bytes"] / len(recs), "chosen"))
        store.compact(train_new=True)
        rows.append(("trained", store.bytes_stored()["file_bytes"] / len(recs), "cache compact --train"))

        texts: dict[str, str] = {}

        def by_message(e: str, t: str) -> bytes:
            doc = json.loads(t)
            for m in doc.get("messages", []):
                h = hashlib.sha256(m["content"].encode()).hexdigest()[:16]
                texts[h] = m["content"]
                m["content"] = "@" + h
            return plain.compress(canonical_json(doc).encode())

        def put_texts(db: sqlite3.Connection) -> None:
            db.executemany(
                "INSERT INTO texts VALUES (?, ?)", [(h, plain.compress(t.encode())) for h, t in texts.items()]
            )

        rows.append(("messages", sqlite_bytes(root / "d.sqlite", recs, by_message, put_texts), f"{len(texts):,} texts"))
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pa.table(
                {
                    "experiment": [r["request"]["sample_key"]["experiment"] for r in recs],
                    "request": [canonical_json(r["request"]) for r in recs],
                    "response": [canonical_json(r["response"]) for r in recs],
                }
            )
            pq.write_table(table, root / "e.parquet", compression="zstd", compression_level=9)
            rows.append(("parquet", (root / "e.parquet").stat().st_size / len(recs), "archive only: no row updates"))
        except Exception as exc:  # pyarrow's recent wheels need numpy>=2 (overcooked-ai pins <2)
            rows.append(("parquet", float("nan"), f"not measured: {type(exc).__name__}: {str(exc)[:60]}"))

    print("\nresponse store, bytes per call")
    for name, b, why in rows:
        print(f"  {name:<10} {b:>7,.0f}  {why}")
    print(f"  (zstd+dict: put {put_ms:.2f} ms, get {get_ms:.3f} ms a call, every reply read back exactly)")

    base = {"run_id": "adaptive_tom.table1-20261126-000000-abcd", "experiment": "", "condition": "c", "episode": 0}
    copy, key = [], []
    for i, r in enumerate(recs):
        sk = r["request"]["sample_key"]
        ev = {**base, "experiment": sk["experiment"], "step": i, "agent": "player1", "kind": "llm_call"}
        common = {"model": "local", "purpose": "decide", "attempt": 1, "sample_key": sk.get("purpose", ""),
                  "parsed": None, "error": None, "prompt_tokens": 100, "completion_tokens": 20, "latency_s": 0.5,
                  "cache": "hit", "retries": 0, "key": request_key(r["request"])}  # fmt: skip
        exchange = {
            "messages": r["request"]["messages"],
            "response_format": r["request"].get("response_format"),
            "reply": r["response"]["content"],
        }
        copy.append(orjson.dumps({**ev, "payload": {**common, **exchange}}))
        key.append(orjson.dumps({**ev, "payload": {**common, "store": ".tomlib/responses.sqlite"}}))
    print("\nrun log, bytes per llm_call event (gzip, as a finished run's log)")
    per_event = {
        name: len(gzip.compress(NL.join(lines), 9)) / len(lines) for name, lines in (("copy", copy), ("key", key))
    }
    for name, b in per_event.items():
        print(f"  {name:<10} {b:>7,.0f}")
    best = dict((n, b) for n, b, _ in rows)["zstd+dict"] + per_event["key"]
    print(f"\nchosen: store + run log = {best:,.0f} bytes a call")


if __name__ == "__main__":
    main()
