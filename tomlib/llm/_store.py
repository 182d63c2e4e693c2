"""Content-addressed response store: SQLite in WAL mode, shared by threads and processes.

Rows are committed one call at a time, so a killed run keeps every response it received and a rerun
makes no repeated model call for what completed. When another process holds the write lock for longer than
``lock_wait_s``, an answered reply is spooled to a file beside the store and written later: it is never lost.
Transcripts (gzip JSONL) carry responses between machines; ``data/transcripts/`` holds the ones the default
profile replays. Everything written is redacted (:mod:`tomlib.redact`).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import logging
import os
import re
import sqlite3
import threading
import time
import warnings
import zlib
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

from tomlib.llm._errors import StoreError, TranscriptError
from tomlib.llm._request import canonical_json, request_key, sample_key_from_json
from tomlib.paths import store_path
from tomlib.redact import Redactor

log = logging.getLogger("tomlib.llm")

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
CREATE INDEX IF NOT EXISTS responses_site ON responses(sample_label);
CREATE TABLE IF NOT EXISTS imports (
    path TEXT PRIMARY KEY,
    sha256 TEXT NOT NULL,
    n INTEGER NOT NULL,
    imported REAL NOT NULL
);
"""
_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub_surrogates(s: str) -> str:
    """Replace unpaired UTF-16 surrogates (which cannot be stored as UTF-8) by U+FFFD."""
    return _SURROGATE.sub("\ufffd", s) if _SURROGATE.search(s) else s


def model_label(request: dict[str, Any]) -> str:
    m = request["model"]
    return f"{m['endpoint']}#{m['model']}"


def _sample_label(request: dict[str, Any]) -> str:
    return sample_key_from_json(request["sample_key"]).label()


def _locked(exc: sqlite3.OperationalError) -> bool:
    return "locked" in str(exc) or "busy" in str(exc)


def _enable_wal(conn: sqlite3.Connection, patience_s: float = 60.0) -> None:
    """Switch to WAL. Several processes opening a new store at once race for this switch, and SQLite
    answers the loser "database is locked" without waiting, so retry until the winner is done."""
    deadline = time.monotonic() + patience_s
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if not _locked(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _damaged(path: Path, exc: Exception) -> StoreError:
    return StoreError(
        f"The response store {path} cannot be used ({exc}). It is damaged or not a tomlib store. Move it aside "
        f"(`mv {path} {path}.damaged`): the next run creates a new one and re-imports data/transcripts/. "
        f"Responses recorded only there can often be saved with `sqlite3 {path}.damaged .recover`, then "
        "exported and imported (`.venv/bin/tomlib cache import`)."
    )


class ResponseStore:
    """Model responses keyed by :func:`tomlib.llm._request.request_key`."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, lock_wait_s: float = 10.0) -> None:
        self.path = Path(path) if path else store_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.lock_wait_s = lock_wait_s
        self.spool_dir = self.path.with_name(self.path.name + ".spool")
        self.transcript_problems: dict[str, str] = {}
        self.redact = Redactor()  # one per store: rebuilt only when a new key is registered
        self._spooled: dict[str, dict[str, Any]] = {}
        self._spool_lock = threading.Lock()
        self._local = threading.local()
        try:
            self._conn().executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and _locked(exc):
                raise StoreError(
                    f"The response store {self.path} stayed locked by another process for {lock_wait_s:g} s while "
                    "opening it. Wait for that process (another run or `cache import`) or stop it, then rerun."
                ) from None
            raise _damaged(self.path, exc) from None
        self.drain_spool()

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None or getattr(self._local, "pid", None) != os.getpid():
            wait = self.lock_wait_s
            conn = sqlite3.connect(self.path, timeout=wait, isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout={int(wait * 1000)}")
            _enable_wal(conn, patience_s=wait)
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    def _query(self, sql: str, args: Any = ()) -> sqlite3.Cursor:
        try:
            return self._conn().execute(sql, args)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):
                raise
            raise _damaged(self.path, exc) from None

    # -- one response ---------------------------------------------------------------------------

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response for ``key`` (or one spooled while the store was locked), or None."""
        row = self._query("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        if row:
            return json.loads(row[0])
        if key in self._spooled:
            return self._spooled[key]["response"]
        spooled = self.spool_dir / f"{key}.json"
        if spooled.exists():  # spooled by a process that died before it could write it
            try:
                return json.loads(spooled.read_text(encoding="utf-8"))["response"]
            except (OSError, ValueError, KeyError):
                return None
        return None

    def _insert(self, key: str, request: dict[str, Any], response: dict[str, Any], replace: bool) -> None:
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        self._query(
            f"{verb} INTO responses (key, experiment, model, sample_label, request, response, created) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                request["sample_key"]["experiment"],
                model_label(request),
                _sample_label(request),
                scrub_surrogates(canonical_json(request)),
                scrub_surrogates(canonical_json(response)),
                time.time(),
            ),
        )

    def put(
        self, request: dict[str, Any], response: dict[str, Any], *, replace: bool = False, key: str | None = None
    ) -> str:
        """Store one response (redacted, committed at once) and return its key.

        ``key`` is the key of the request as sent; by default it is computed from ``request``. When the store
        stays locked for ``lock_wait_s``, the response is spooled beside the store and written later.
        """
        key = key or request_key(request)
        request, response = self.redact(request), self.redact(response)
        try:
            self._insert(key, request, response, replace)
        except sqlite3.OperationalError as exc:
            if not _locked(exc):
                raise StoreError(f"Writing to the response store {self.path} failed: {exc}.") from None
            self._spool(key, request, response, replace)
            return key
        if self._spooled:  # this process spooled while locked; another process's spool is drained at open
            self.drain_spool()
        return key

    # -- the spool: answered replies waiting for a locked store -----------------------------------

    def _spool(self, key: str, request: dict[str, Any], response: dict[str, Any], replace: bool) -> None:
        self.spool_dir.mkdir(parents=True, exist_ok=True)
        rec = {"key": key, "request": request, "response": response, "replace": replace}
        tmp = self.spool_dir / f".{key}.tmp"
        tmp.write_text(scrub_surrogates(canonical_json(rec)), encoding="utf-8")
        os.replace(tmp, self.spool_dir / f"{key}.json")
        with self._spool_lock:
            self._spooled[key] = rec
        log.warning(
            "The response store %s stayed locked by another process for %g s; the reply for %s was spooled to %s "
            "and will be written when the lock is released (nothing is lost).",
            self.path,
            self.lock_wait_s,
            _sample_label(request),
            self.spool_dir,
        )

    def drain_spool(self) -> int:
        """Write spooled replies into the store; returns how many. Leaves them spooled while still locked."""
        if not self.spool_dir.is_dir():
            return 0
        done = 0
        for path in sorted(self.spool_dir.glob("*.json")):
            try:
                rec = json.loads(path.read_text(encoding="utf-8"))
                self._insert(rec["key"], rec["request"], rec["response"], bool(rec.get("replace")))
            except sqlite3.OperationalError as exc:
                if _locked(exc):
                    return done
                raise
            except (OSError, ValueError, KeyError):
                continue  # another process drained it first, or a torn write of a dead process
            path.unlink(missing_ok=True)
            with self._spool_lock:
                self._spooled.pop(rec["key"], None)
            done += 1
        return done

    # -- listings ---------------------------------------------------------------------------------

    def __len__(self) -> int:
        return self._query("SELECT COUNT(*) FROM responses").fetchone()[0]

    def __contains__(self, key: str) -> bool:
        return self._query("SELECT 1 FROM responses WHERE key = ?", (key,)).fetchone() is not None

    def recorded_for_site(self, request: dict[str, Any], limit: int = 20) -> list[dict[str, Any]]:
        """Requests recorded for the same model and call site as ``request`` (used to explain a replay miss)."""
        rows = self._query(
            "SELECT request FROM responses WHERE sample_label = ? AND model = ? ORDER BY created DESC LIMIT ?",
            (_sample_label(request), model_label(request), limit),
        ).fetchall()
        return [json.loads(r[0]) for r in rows]

    def endpoints_elsewhere(self, request: dict[str, Any]) -> list[str]:
        """Other endpoints under which the same served model answered this call site: a recording that a moved
        server (another port) no longer finds, since the endpoint is part of the key (see ``endpoint_id``)."""
        m = request["model"]
        rows = self._query(
            "SELECT DISTINCT model FROM responses WHERE sample_label = ? AND model LIKE ? AND model != ? LIMIT 5",
            (_sample_label(request), f"%#{m['model']}", model_label(request)),
        ).fetchall()
        return sorted(str(r[0]).rsplit("#", 1)[0] for r in rows)

    def stats(self) -> list[dict[str, Any]]:
        """Counts and token totals per experiment and model."""
        rows = self._query(
            "SELECT experiment, model, COUNT(*), "
            "SUM(COALESCE(json_extract(response, '$.usage.prompt_tokens'), 0)), "
            "SUM(COALESCE(json_extract(response, '$.usage.completion_tokens'), 0)), "
            "MIN(created), MAX(created) FROM responses GROUP BY experiment, model ORDER BY experiment, model"
        ).fetchall()
        cols = ["experiment", "model", "responses", "prompt_tokens", "completion_tokens", "first", "last"]
        return [dict(zip(cols, r, strict=True)) for r in rows]

    def _select(
        self, experiment: str | None, model: str | None, before: float | None, since: float | None = None
    ) -> tuple[str, list[Any]]:
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
        if since is not None:
            where.append("created >= ?")
            args.append(since)
        return (" WHERE " + " AND ".join(where)) if where else "", args

    def iter_records(
        self, *, experiment: str | None = None, model: str | None = None, since: float | None = None
    ) -> Iterator[dict[str, Any]]:
        """Stored (request, response) pairs, ordered by key, optionally filtered (``since``: stored at or after
        this Unix time)."""
        clause, args = self._select(experiment, model, None, since)
        for key, req, resp in self._query(f"SELECT key, request, response FROM responses{clause} ORDER BY key", args):
            yield {"key": key, "request": json.loads(req), "response": json.loads(resp)}

    # -- transcripts ------------------------------------------------------------------------------

    def export(
        self,
        path: str | os.PathLike[str],
        *,
        experiment: str | None = None,
        model: str | None = None,
        since: float | None = None,
        keys: Collection[str] | None = None,
    ) -> int:
        """Write matching responses as gzip JSONL (byte-stable: sorted, no timestamps in the gzip header); ``keys``
        keeps only those responses (e.g. the ones a run used). Lines are redacted again, so a store filled before
        redaction existed still exports clean."""
        buf = io.BytesIO()
        n = 0
        with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz:
            for rec in self.iter_records(experiment=experiment, model=model, since=since):
                if keys is not None and rec["key"] not in keys:
                    continue
                line = self.redact.text(canonical_json({"request": rec["request"], "response": rec["response"]}))
                gz.write(line.encode() + b"\n")
                n += 1
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(buf.getvalue())
        return n

    def import_file(self, path: str | os.PathLike[str]) -> int:
        """Add the responses of a transcript; keys are recomputed from the requests. Returns rows added.

        A line that is not a transcript line is skipped, and a file damaged part-way (a cut gzip) keeps the lines
        before the damage: either is warned about, naming file and line, and noted in ``transcript_problems``. A
        file from which nothing can be read raises :class:`TranscriptError` naming the file and the fix."""
        fix = (
            f"Restore it (`git checkout -- {path}` for a committed transcript), or re-export or re-record it "
            "(DEVELOPERS.md, 'Recording the offline transcripts')"
        )
        bad: list[str] = []
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            before = self.__len__()
            lineno = read = 0
            try:
                with gzip.open(path, "rb") as fh:  # bytes: a line that is not UTF-8 fails alone
                    for lineno, line in enumerate(fh, 1):
                        if not line.strip():
                            continue
                        try:
                            rec = json.loads(line)
                            self.put(rec["request"], rec["response"])
                            read += 1
                        except (ValueError, KeyError, TypeError, AttributeError) as exc:  # this line only
                            bad.append(f"{path}:{lineno} ({type(exc).__name__}: {exc})")
            except (OSError, EOFError, zlib.error) as exc:
                if not read and not bad:
                    raise TranscriptError(
                        f"Transcript {path} is damaged ({type(exc).__name__}: {exc}). {fix}. Nothing from it was "
                        "imported."
                    ) from None
                bad.append(f"{path}:{lineno + 1} and after (damaged: {type(exc).__name__}: {exc})")
            added = self.__len__() - before
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        if bad:
            problem = (
                f"{len(bad)} damaged part(s) of transcript {path} were skipped: {'; '.join(bad[:5])}"
                f"{'; ...' if len(bad) > 5 else ''}. The calls recorded there miss until it is fixed: {fix}."
            )
            problem = self.redact.text(problem)
            self.transcript_problems[str(path)] = problem
            warnings.warn(problem, stacklevel=2)
        return added

    def sync_transcripts(self, directory: str | os.PathLike[str]) -> int:
        """Import every ``*.jsonl.gz`` in ``directory`` that changed since its last import.

        A damaged transcript is skipped with a warning and noted in ``transcript_problems``; only the calls
        that need it fail (their :class:`ReplayMiss` names the file)."""
        added = 0
        for path in sorted(Path(directory).glob("*.jsonl.gz")):
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            row = self._query("SELECT sha256 FROM imports WHERE path = ?", (str(path),)).fetchone()
            if row and row[0] == digest:
                continue
            try:
                n = self.import_file(path)
            except TranscriptError as exc:
                self.transcript_problems[str(path)] = str(exc)
                warnings.warn(str(exc), stacklevel=2)
                continue
            added += n
            if str(path) in self.transcript_problems:  # partly damaged: not marked imported, so it warns again
                continue
            self._query(
                "INSERT OR REPLACE INTO imports (path, sha256, n, imported) VALUES (?, ?, ?, ?)",
                (str(path), digest, n, time.time()),
            )
        return added

    def prune(
        self, *, experiment: str | None = None, model: str | None = None, older_than_s: float | None = None
    ) -> int:
        """Delete matching responses; returns how many. With no filter, deletes nothing (use all=True-like
        filters on purpose rather than by accident). Pruned rows stay pruned: transcripts already imported are
        not imported again unless they change."""
        if experiment is None and model is None and older_than_s is None:
            return 0
        before = time.time() - older_than_s if older_than_s is not None else None
        clause, args = self._select(experiment, model, before)
        return self._query(f"DELETE FROM responses{clause}", args).rowcount

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
