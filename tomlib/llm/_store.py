"""Content-addressed response store: SQLite in WAL mode, shared by threads and processes.

Rows are committed one call at a time, so a killed run keeps every response it received and a rerun
makes no repeated model call for what completed. Transcripts (gzip JSONL) carry responses between
machines; ``data/transcripts/`` holds the ones the default profile replays.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tomlib.llm._request import canonical_json, request_key, sample_key_from_json
from tomlib.paths import store_path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    experiment TEXT NOT NULL,
    model TEXT NOT NULL,
    sample_label TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS responses_experiment ON responses(experiment);
CREATE TABLE IF NOT EXISTS imports (
    path TEXT PRIMARY KEY,
    sha256 TEXT NOT NULL,
    n INTEGER NOT NULL,
    imported REAL NOT NULL
);
"""


def _model_label(request: dict[str, Any]) -> str:
    m = request["model"]
    return f"{m['endpoint']}#{m['model']}"


def _sample_label(request: dict[str, Any]) -> str:
    return sample_key_from_json(request["sample_key"]).label()


def _enable_wal(conn: sqlite3.Connection, patience_s: float = 60.0) -> None:
    """Switch to WAL. Several processes opening a new store at once race for this switch, and SQLite
    answers the loser "database is locked" without waiting, so retry until the winner is done."""
    deadline = time.monotonic() + patience_s
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


class ResponseStore:
    """Model responses keyed by :func:`tomlib.llm._request.request_key`."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path else store_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._conn().executescript(_SCHEMA)

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None or getattr(self._local, "pid", None) != os.getpid():
            conn = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout=60000")
            _enable_wal(conn)
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response for ``key``, or None."""
        row = self._conn().execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, request: dict[str, Any], response: dict[str, Any], *, replace: bool = False) -> str:
        """Store one response (committed at once) and return its key."""
        key = request_key(request)
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        self._conn().execute(
            f"{verb} INTO responses (key, experiment, model, sample_label, request, response, created) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                request["sample_key"]["experiment"],
                _model_label(request),
                _sample_label(request),
                canonical_json(request),
                canonical_json(response),
                time.time(),
            ),
        )
        return key

    def __len__(self) -> int:
        return self._conn().execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def __contains__(self, key: str) -> bool:
        return self._conn().execute("SELECT 1 FROM responses WHERE key = ?", (key,)).fetchone() is not None

    def stats(self) -> list[dict[str, Any]]:
        """Counts and token totals per experiment and model."""
        rows = (
            self._conn()
            .execute(
                "SELECT experiment, model, COUNT(*), "
                "SUM(COALESCE(json_extract(response, '$.usage.prompt_tokens'), 0)), "
                "SUM(COALESCE(json_extract(response, '$.usage.completion_tokens'), 0)), "
                "MIN(created), MAX(created) FROM responses GROUP BY experiment, model ORDER BY experiment, model"
            )
            .fetchall()
        )
        cols = ["experiment", "model", "responses", "prompt_tokens", "completion_tokens", "first", "last"]
        return [dict(zip(cols, r, strict=True)) for r in rows]

    def _select(self, experiment: str | None, model: str | None, before: float | None) -> tuple[str, list[Any]]:
        where, args = [], []
        if experiment:
            where.append("(experiment = ? OR experiment LIKE ?)")
            args += [experiment, experiment + ".%"]
        if model:
            where.append("model LIKE ?")
            args.append(f"%#{model}")
        if before is not None:
            where.append("created < ?")
            args.append(before)
        return (" WHERE " + " AND ".join(where)) if where else "", args

    def iter_records(self, *, experiment: str | None = None, model: str | None = None) -> Iterator[dict[str, Any]]:
        """Stored (request, response) pairs, ordered by key, optionally filtered."""
        clause, args = self._select(experiment, model, None)
        for key, req, resp in self._conn().execute(
            f"SELECT key, request, response FROM responses{clause} ORDER BY key", args
        ):
            yield {"key": key, "request": json.loads(req), "response": json.loads(resp)}

    def export(self, path: str | os.PathLike[str], *, experiment: str | None = None, model: str | None = None) -> int:
        """Write matching responses as gzip JSONL (byte-stable: sorted, no timestamps in the gzip header)."""
        buf = io.BytesIO()
        n = 0
        with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz:
            for rec in self.iter_records(experiment=experiment, model=model):
                line = canonical_json({"request": rec["request"], "response": rec["response"]})
                gz.write(line.encode() + b"\n")
                n += 1
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(buf.getvalue())
        return n

    def import_file(self, path: str | os.PathLike[str]) -> int:
        """Add the responses of a transcript; keys are recomputed from the requests. Returns rows added."""
        added = 0
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            before = self.__len__()
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                for lineno, line in enumerate(fh, 1):
                    if not line.strip():
                        continue
                    try:
                        rec = json.loads(line)
                        self.put(rec["request"], rec["response"])
                    except (json.JSONDecodeError, KeyError, TypeError) as exc:
                        raise ValueError(
                            f"{path}:{lineno} is not a tomlib transcript line ({exc}); re-export it with "
                            "`python -m tomlib cache export`."
                        ) from None
            added = self.__len__() - before
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return added

    def sync_transcripts(self, directory: str | os.PathLike[str]) -> int:
        """Import every ``*.jsonl.gz`` in ``directory`` that changed since its last import."""
        added = 0
        for path in sorted(Path(directory).glob("*.jsonl.gz")):
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            row = self._conn().execute("SELECT sha256 FROM imports WHERE path = ?", (str(path),)).fetchone()
            if row and row[0] == digest:
                continue
            n = self.import_file(path)
            self._conn().execute(
                "INSERT OR REPLACE INTO imports (path, sha256, n, imported) VALUES (?, ?, ?, ?)",
                (str(path), digest, n, time.time()),
            )
            added += n
        return added

    def prune(
        self, *, experiment: str | None = None, model: str | None = None, older_than_s: float | None = None
    ) -> int:
        """Delete matching responses; returns how many. With no filter, deletes nothing (use all=True-like
        filters on purpose rather than by accident)."""
        if experiment is None and model is None and older_than_s is None:
            return 0
        before = time.time() - older_than_s if older_than_s is not None else None
        clause, args = self._select(experiment, model, before)
        cur = self._conn().execute(f"DELETE FROM responses{clause}", args)
        self._conn().execute("DELETE FROM imports")
        return cur.rowcount

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
