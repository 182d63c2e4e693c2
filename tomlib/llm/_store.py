"""Content-addressed response store: SQLite in WAL mode, shared by threads and processes.

Rows are committed one call at a time, so a killed run keeps every response it received and a rerun
makes no repeated model call for what completed. When another process holds the write lock for longer than
``lock_wait_s``, an answered reply is spooled to a file beside the store and written later: it is never lost.
Transcripts (gzip JSONL) carry responses between machines; ``data/transcripts/`` holds the ones the default
profile replays. Everything written is redacted (:mod:`tomlib.redact`). Requests and responses are stored as zstd
frames with a dictionary per paper (:mod:`tomlib.llm._codec`); rows of older stores, kept as JSON text, are read as
they are and rewritten by :meth:`ResponseStore.compact` (``tomlib cache compact``).
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import hashlib
import io
import json
import logging
import os
import re
import sqlite3
import stat
import threading
import time
import warnings
import zlib
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

import zstandard

from tomlib.llm._codec import (
    Codec,
    dict_id_of,
    dictionary_id,
    paper_of,
    shipped_dictionaries,
    train,
    with_committed,
)
from tomlib.llm._errors import StoreError, TranscriptError
from tomlib.llm._request import canonical_json, request_key, sample_key_from_json
from tomlib.paths import private_dir, private_file, read_own, store_path, write_atomic
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
    created REAL NOT NULL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER
);
CREATE INDEX IF NOT EXISTS responses_experiment ON responses(experiment);
CREATE INDEX IF NOT EXISTS responses_site ON responses(sample_label);
CREATE TABLE IF NOT EXISTS dictionaries (
    id INTEGER PRIMARY KEY,
    paper TEXT NOT NULL,
    data BLOB NOT NULL,
    trained REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS imports (
    path TEXT PRIMARY KEY,
    sha256 TEXT NOT NULL,
    n INTEGER NOT NULL,
    imported REAL NOT NULL
);
"""
_TOKEN_COLUMNS = ("prompt_tokens", "completion_tokens")  # added to stores made before they existed
_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub_surrogates(s: str) -> str:
    """Replace unpaired UTF-16 surrogates (which cannot be stored as UTF-8) by U+FFFD."""
    return _SURROGATE.sub("\ufffd", s) if _SURROGATE.search(s) else s


def model_label(request: dict[str, Any]) -> str:
    m = request["model"]
    return f"{m['endpoint']}#{m['model']}"


def _tokens(column: str) -> str:
    """SQL for a row's token count: its column, or (rows stored as JSON text before the column existed) the
    response's usage field."""
    return (
        f"COALESCE({column}, "
        f"CASE WHEN typeof(response) = 'text' THEN json_extract(response, '$.usage.{column}') END, 0)"
    )


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


MOVE_STORE = (
    "set TOMLIB_STORE to a file in a folder of yours (`mkdir -m 700 ~/tomlib-store`, then "
    "TOMLIB_STORE=~/tomlib-store/responses.sqlite)"
)
"""The way out when a store's folder or file is not this user's alone."""


def _read_spooled(path: Path) -> dict[str, Any] | None:
    """A spooled record, from a file this user owns and no one else can write (:func:`tomlib.paths.read_own`); None
    otherwise (a torn write of a dead process, another's drain got there first, or not this user's)."""
    raw = read_own(path)
    try:
        rec = json.loads(raw) if raw is not None else None
    except ValueError:
        return None
    return rec if isinstance(rec, dict) and rec.get("key") == path.stem else None


class ResponseStore:
    """Model responses keyed by :func:`tomlib.llm._request.request_key`.

    The store holds every prompt and reply, and what it returns becomes a notebook's model output, so it lives in a
    folder only this user can change (:func:`tomlib.paths.private_dir`) and its file is this user's alone (mode 600),
    as is its spool folder; anything else is refused in one line naming the fix."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, lock_wait_s: float = 10.0) -> None:
        self.path = Path(path) if path else store_path()
        private_file(self.path, instead=MOVE_STORE)
        for side in (f"{self.path}-wal", f"{self.path}-shm"):  # SQLite's own files take the store's mode when made
            with contextlib.suppress(OSError):
                if (st := os.lstat(side)).st_uid == os.geteuid() and stat.S_ISREG(st.st_mode) and st.st_mode & 0o077:
                    os.chmod(side, stat.S_IMODE(st.st_mode) & 0o700)
        self.lock_wait_s = lock_wait_s
        self.spool_dir = self.path.with_name(self.path.name + ".spool")
        self.transcript_problems: dict[str, str] = {}
        self._spooled: dict[str, dict[str, Any]] = {}
        self._spool_lock = threading.Lock()
        self._local = threading.local()
        try:
            self._conn().executescript(_SCHEMA)
            self._upgrade()
            self._codec = self._load_codec()
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and _locked(exc):
                raise StoreError(
                    f"The response store {self.path} stayed locked by another process for {lock_wait_s:g} s while "
                    "opening it. Wait for that process (another run or `cache import`) or stop it, then rerun."
                ) from None
            raise _damaged(self.path, exc) from None
        self.drain_spool()

    @functools.cached_property
    def redact(self) -> Redactor:
        """The store's redactor (one per store, built when first written through: a reader never needs it)."""
        return Redactor()

    def _upgrade(self) -> None:
        """Bring a store made by an older tomlib up to this schema (token columns; its rows stay as they are). Safe
        when several processes open the store at once."""
        have = {r[1] for r in self._conn().execute("PRAGMA table_info(responses)")}
        for col in _TOKEN_COLUMNS:
            if col not in have:
                try:
                    self._conn().execute(f"ALTER TABLE responses ADD COLUMN {col} INTEGER")
                except sqlite3.OperationalError as exc:
                    if "duplicate column" not in str(exc):
                        raise

    def _load_codec(self) -> Codec:
        """The store's dictionaries and the committed ones; new values use, per paper, the one this store trained
        last, else the committed one. A committed dictionary is copied into the store with the first row that uses it
        (:meth:`_keep_dictionary`), not before: a store of a few calls does not carry every paper's 16 KB."""
        rows = self._conn().execute("SELECT id, paper, data, trained FROM dictionaries ORDER BY trained, id").fetchall()
        committed = shipped_dictionaries()
        preferred = {paper: dictionary_id(d) for paper, d in committed.items()}
        for i, paper, _, trained in rows:
            if trained > 0 or paper not in preferred:
                preferred[paper] = i
        self._stored = {i for i, _, _, _ in rows}
        return Codec(with_committed({i: d for i, _, d, _ in rows}), preferred)

    def _keep_dictionary(self, paper: str) -> None:
        """Copy the dictionary ``paper``'s new values use into the store before the first row that uses it, so the
        store reads back on a checkout whose committed dictionaries differ (in the same transaction as that row
        when the caller holds one)."""
        i = self._codec.preferred.get(paper, 0)
        if i and i not in self._stored:
            self._query(
                "INSERT OR IGNORE INTO dictionaries (id, paper, data, trained) VALUES (?, ?, ?, 0)",
                (i, paper, self._codec.dictionary(i)),
            )
            self._stored.add(i)

    def _decode(self, value: str | bytes, key: str = "") -> Any:
        """A stored value as JSON; a dictionary another process added since this one opened is loaded first. A value
        that is not one (a row written by something else, or damaged) raises :class:`StoreError` naming the key."""
        try:
            try:
                return json.loads(self._codec.decode(value))
            except KeyError:
                self._codec = self._load_codec()
            try:
                return json.loads(self._codec.decode(value))
            except KeyError:
                raise StoreError(
                    f"A response in the store {self.path} was compressed with dictionary {dict_id_of(value)}, which "
                    "the store does not hold (it was copied between stores row by row?). Export what it can read and "
                    "import it into a new store (`.venv/bin/tomlib cache export` / `cache import`)."
                ) from None
        except (ValueError, zstandard.ZstdError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            which = f"key {key}" if key else "a row"
            raise StoreError(
                f"The response store {self.path} holds a row it cannot read ({which}: {type(exc).__name__}). "
                f"Delete it (`sqlite3 {self.path} \"DELETE FROM responses WHERE key = '{key or 'KEY'}'\"`) so the "
                "call is made or replayed again, or move the store aside to start a new one."
            ) from None

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
            return self._decode(row[0], key)
        if key in self._spooled:
            return self._spooled[key]["response"]
        spooled = self.spool_dir / f"{key}.json"
        if spooled.exists():  # spooled by a process that died before it could write it
            self._private_spool()
            rec = _read_spooled(spooled)
            return rec.get("response") if rec is not None else None
        return None

    def _insert(self, key: str, request: dict[str, Any], response: dict[str, Any], replace: bool) -> None:
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        experiment = request["sample_key"]["experiment"]
        req, resp, prompt, completion = self._encoded(experiment, request, response)
        self._query(
            f"{verb} INTO responses (key, experiment, model, sample_label, request, response, created, "
            "prompt_tokens, completion_tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (key, experiment, model_label(request), _sample_label(request), req, resp, time.time(), prompt, completion),
        )

    def _encoded(
        self, experiment: str, request: dict[str, Any], response: dict[str, Any]
    ) -> tuple[bytes, bytes, int | None, int | None]:
        """A row's stored values: request and response in the store's encoding, and the response's token counts."""
        paper = paper_of(experiment)
        self._keep_dictionary(paper)
        usage = response.get("usage") if isinstance(response.get("usage"), dict) else {}
        return (
            self._codec.encode(paper, scrub_surrogates(canonical_json(request))),
            self._codec.encode(paper, scrub_surrogates(canonical_json(response))),
            usage.get("prompt_tokens"),
            usage.get("completion_tokens"),
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

    def _private_spool(self) -> Path:
        """The spool folder, made or checked as this user's alone at every use: what is in it becomes replies."""
        return private_dir(self.spool_dir, instead=MOVE_STORE)

    def _spool(self, key: str, request: dict[str, Any], response: dict[str, Any], replace: bool) -> None:
        spool = self._private_spool()
        rec = {"key": key, "request": request, "response": response, "replace": replace}
        write_atomic(spool / f"{key}.json", scrub_surrogates(canonical_json(rec)), mode=0o600)
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
        if not os.path.lexists(self.spool_dir):
            return 0
        done = 0
        for path in sorted(self._private_spool().glob("*.json")):
            rec = _read_spooled(path)
            if rec is None:
                continue  # another process drained it first, a torn write of a dead process, or not ours
            try:
                self._insert(rec["key"], rec["request"], rec["response"], bool(rec.get("replace")))
            except sqlite3.OperationalError as exc:
                if _locked(exc):
                    return done
                raise
            except (KeyError, TypeError, AttributeError):
                continue
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
        return [self._decode(r[0]) for r in rows]

    def recorded_in_experiment(self, request: dict[str, Any]) -> int:
        """How many responses of ``request``'s model and experiment are stored, at any call site."""
        experiment = request["sample_key"]["experiment"]
        row = self._query(
            "SELECT COUNT(*) FROM responses WHERE experiment = ? AND model = ?", (experiment, model_label(request))
        ).fetchone()
        return int(row[0])

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
            f"SUM({_tokens('prompt_tokens')}), SUM({_tokens('completion_tokens')}), "
            "MIN(created), MAX(created) FROM responses GROUP BY experiment, model ORDER BY experiment, model"
        ).fetchall()
        cols = ["experiment", "model", "responses", "prompt_tokens", "completion_tokens", "first", "last"]
        return [dict(zip(cols, r, strict=True)) for r in rows]

    def bytes_stored(self) -> dict[str, int]:
        """Rows and the bytes their requests and responses take as stored (after compression), for ``cache stats``."""
        n, req, resp = self._query(
            "SELECT COUNT(*), COALESCE(SUM(LENGTH(CAST(request AS BLOB))), 0), "
            "COALESCE(SUM(LENGTH(CAST(response AS BLOB))), 0) FROM responses"
        ).fetchone()
        return {"rows": n, "request_bytes": req, "response_bytes": resp, "file_bytes": self._file_bytes()}

    def _file_bytes(self) -> int:
        return sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())

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
            yield {"key": key, "request": self._decode(req, key), "response": self._decode(resp, key)}

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

    # -- compaction ---------------------------------------------------------------------------------

    def compact(self, *, train_new: bool = False, progress: bool = False) -> dict[str, int]:
        """Rewrite every row in the current encoding and give the space back (VACUUM): rows of older stores (JSON
        text) are compressed, and rows compressed with another dictionary than their paper's preferred one are
        re-encoded. ``train_new`` first trains a dictionary per paper on this store's own rows (papers with at
        least :data:`tomlib.llm._codec.MIN_SAMPLES` rows) and prefers it from then on. Replies stay byte for byte
        what they were; keys do not change. Returns rows rewritten and the file's bytes before and after."""
        before = self._file_bytes()
        if train_new:
            self._train_dictionaries()
        from tqdm.auto import tqdm

        total = len(self)
        rewritten = 0
        conn = self._conn()
        keys = [r[0] for r in self._query("SELECT key FROM responses ORDER BY key")]
        bar = tqdm(total=len(keys), desc="cache compact", disable=not progress, unit="row")
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            bar.update(len(chunk))
            marks = ",".join("?" * len(chunk))
            rows = self._query(
                f"SELECT key, experiment, request, response FROM responses WHERE key IN ({marks})", chunk
            ).fetchall()
            conn.execute("BEGIN IMMEDIATE")
            try:
                for key, experiment, req, resp in rows:
                    want = self._codec.preferred.get(paper_of(experiment), 0)
                    if dict_id_of(req) == want and dict_id_of(resp) == want:
                        continue
                    conn.execute(
                        "UPDATE responses SET request = ?, response = ?, prompt_tokens = ?, completion_tokens = ? "
                        "WHERE key = ?",
                        (*self._encoded(experiment, self._decode(req, key), self._decode(resp, key)), key),
                    )
                    rewritten += 1
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        bar.close()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # VACUUM wrote the whole file again through the WAL
        return {"rows": total, "rewritten": rewritten, "bytes_before": before, "bytes_after": self._file_bytes()}

    def _train_dictionaries(self) -> None:
        """A dictionary per paper from this store's latest rows (requests and responses), kept and preferred."""
        papers = [r[0] for r in self._query("SELECT DISTINCT experiment FROM responses")]
        for paper in sorted({paper_of(e) for e in papers}):
            rows = self._query(
                "SELECT request, response FROM responses WHERE experiment = ? OR experiment LIKE ? "
                "ORDER BY created DESC LIMIT 1000",
                (paper, paper + ".%"),
            ).fetchall()
            samples = [self._codec.decode(v).encode() for row in rows for v in row]
            data = train(samples)
            if data is None:
                continue
            self._query(
                "INSERT OR REPLACE INTO dictionaries (id, paper, data, trained) VALUES (?, ?, ?, ?)",
                (dictionary_id(data), paper, data, time.time()),
            )
        self._codec = self._load_codec()

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


class StoreReader:
    """A store opened read-only (SQLite ``mode=ro``): what the explorer reads an exchange with. It never writes, so a
    store another user made, or one on a read-only disk, shows its exchanges; a store whose write-ahead log cannot be
    read that way is read as it was last checkpointed (``immutable``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._conn = self._open(immutable=False)
        except sqlite3.OperationalError:  # its -shm cannot be made here: read what is in the main file
            self._conn = self._open(immutable=True)
        self._codec = self._load_codec()

    def _open(self, *, immutable: bool) -> sqlite3.Connection:
        from urllib.parse import quote

        uri = f"file:{quote(str(self.path))}?mode=ro" + ("&immutable=1" if immutable else "")
        conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        conn.execute("SELECT 1 FROM responses LIMIT 1").fetchall()
        return conn

    def _load_codec(self) -> Codec:
        try:
            rows = self._conn.execute("SELECT id, data FROM dictionaries").fetchall()
        except sqlite3.OperationalError:  # a store older than its dictionaries: its rows are JSON text
            rows = []
        return Codec(with_committed(dict(rows)), {})

    def exchange(self, key: str) -> dict[str, Any] | None:
        row = self._conn.execute("SELECT request, response FROM responses WHERE key = ?", (key,)).fetchone()
        if not row:
            return None
        try:
            request, response = (json.loads(self._codec.decode(v)) for v in row)
        except KeyError:  # a dictionary written since this reader opened
            self._codec = self._load_codec()
            request, response = (json.loads(self._codec.decode(v)) for v in row)
        return {
            "messages": request.get("messages", []),
            "response_format": request.get("response_format"),
            "reply": response.get("content", ""),
        }


_readers: dict[Path, StoreReader] = {}
_readers_lock = threading.Lock()


def recorded_exchange(key: str, store: str | os.PathLike[str] | None = None) -> dict[str, Any] | None:
    """The exchange a run log's ``llm_call`` event points to: the request's ``messages`` and ``response_format``
    and the ``reply``, read from the store the call was made with (``store``) or else the default store, read-only
    (:class:`StoreReader`: nothing is written, so another user's store works too). None when neither holds ``key``
    (a log moved without its store: import the store's transcript to see it).

    Args:
        key: the ``llm_call`` event's ``key`` (the request's cache key).
        store: the store the call was made with (the event's ``store``); None: the default store.
    """
    paths = [Path(store)] if store else []
    paths.append(store_path())
    for path in dict.fromkeys(p.resolve() for p in paths):
        if not path.is_file():
            continue
        try:
            with _readers_lock:
                reader = _readers.get(path)
                if reader is None:
                    reader = _readers[path] = StoreReader(path)
            got = reader.exchange(key)
        except (sqlite3.Error, OSError, KeyError, ValueError) as exc:  # unreadable here: say so in the log, go on
            log.info("cannot read the response store %s: %s", path, exc)
            continue
        if got is not None:
            return got
    return None
