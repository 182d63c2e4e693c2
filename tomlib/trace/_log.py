"""Append-only JSONL run logs: one file per run under ``results/runs/<run_id>/events.jsonl``.

Durability: events are buffered and written in batches: by a background thread every ``FLUSH_INTERVAL_S / 2``,
when a buffer grows past :data:`FLUSH_BYTES`, on :meth:`RunLog.flush`, on :meth:`RunLog.close` and at interpreter
exit. So a run killed
outright (``kill -9``) keeps every event logged more than ``FLUSH_INTERVAL_S`` before it died, and a run that exits
or closes its log keeps all of them. A rerun with the same ``run_id`` appends to the same log.

Cost: each event is serialized once with orjson (json for what orjson refuses, e.g. a lone surrogate). Redaction
and indexing happen per batch, when it is written: a batch is scanned once, and its lines are redacted one by one
only when a secret or a key-shaped pattern's literal occurs in it. Nothing reaches the file unredacted.

What a formal log keeps: every step kind (:data:`STEP_KINDS`: predictions, actions, states, A-ToM's weights and
alignment) of its first ``detail_episodes`` only (3 for a notebook's own run, 0 for runs under other readings). A
table or figure must never read those kinds back from a log: compute it from the run in memory (``EpisodeResult``,
``Reproduction.weights``), as §6.1 and Fig. 3 do, or it silently averages a few episodes.
"""

from __future__ import annotations

import atexit
import json
import os
import platform
import secrets
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from pydantic import BaseModel, ConfigDict, Field

import tomlib
from tomlib.errors import UsageError
from tomlib.paths import results_for_writing
from tomlib.redact import Redactor
from tomlib.trace._index import GZ_NAME, SUMMARY_KINDS, RunIndex, decompress_log, parse_line, read_index

if TYPE_CHECKING:
    from tomlib.llm import CallRecord, ChatModel

ENV_RUNS_MANIFEST = "TOMLIB_RUNS_MANIFEST"  # set by the runner: every run a kernel opens is named there
FLUSH_INTERVAL_S = 0.1
"""The longest an event waits in memory before it reaches the file (see the module docstring)."""
FLUSH_BYTES = 1 << 20
STEP_KINDS = frozenset({"prediction", "action", "env_state", "expert_weights", "alignment"})
"""What only a step view shows (a formal agent's reasoning chain, each action and state, A-ToM's weights before and
after each step): dropped past a log's ``detail_episodes``. Scores, beliefs, model calls and an episode's first state
(its summary) are always written. Tables read A-ToM's weights from the run in memory
(:attr:`tomlib.agents.EpisodeResult.experts`), never back from a log."""
_ORJSON = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY

EVENT_KINDS = (
    "run_start",
    "llm_call",
    "prediction",
    "belief",
    "decision",
    "action",
    "alignment",
    "expert_weights",
    "coalition",
    "rematch",
    "verification",
    "env_state",
    "score",
    "note",
)


class Event(BaseModel):
    """One line of a run log."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    experiment: str
    condition: str = ""
    episode: int | None = None
    step: int | None = None
    agent: str = ""
    kind: str = Field(description=f"One of {', '.join(EVENT_KINDS)} (others allowed).")
    payload: dict[str, Any] = Field(default_factory=dict)
    time: float = Field(default_factory=time.time)


def _ends_with_newline(path: Path) -> bool:
    """True for an empty file or one whose last byte is a newline."""
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell() == 0:
            return True
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


def dumps(ev: dict[str, Any]) -> bytes:
    """One event as one JSON line (no newline). orjson first; json (with ``default=str``) for what orjson refuses,
    such as a lone surrogate (written as its escape) or an integer beyond 64 bits. NaN and infinities become null."""
    try:
        return orjson.dumps(ev, default=str, option=_ORJSON)
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(ev, ensure_ascii=False, default=str).encode("utf-8", "backslashreplace")


_open_logs: weakref.WeakSet[RunLog] = weakref.WeakSet()
_PLACES: ContextVar[dict[int, dict[str, Any]] | None] = ContextVar("tomlib_run_log_places", default=None)
"""Each open :meth:`RunLog.context` block's fields, by the log's id, for this thread or task (one module-level
variable, as :mod:`contextvars` asks, not one per log)."""
_flusher: list[threading.Thread] = []
_flusher_lock = threading.Lock()


def _flush_loop() -> None:
    """Write every open log's buffer twice per interval, so no event waits longer than FLUSH_INTERVAL_S."""
    while True:
        time.sleep(FLUSH_INTERVAL_S / 2)
        for log in list(_open_logs):
            if log._buffer:
                log.flush()


def _start_flusher() -> None:
    with _flusher_lock:
        if not _flusher or not _flusher[0].is_alive():
            t = threading.Thread(target=_flush_loop, name="tomlib-runlog-flusher", daemon=True)
            t.start()
            _flusher[:] = [t]


@atexit.register
def _close_all() -> None:
    for log in list(_open_logs):
        log.close()


RUN_ID_MAX_BYTES = 200  # a folder name; file systems stop at 255


def run_id_problem(run_id: str) -> str | None:
    """Why ``run_id`` cannot name one folder under ``results/runs/`` (None when it can): a path separator would make
    nested folders, or reach out of the runs folder with ``..``; a leading dot hides it from ``runs list``."""
    if not run_id:
        return "it is empty"
    if "/" in run_id or "\\" in run_id or (os.altsep and os.altsep in run_id):
        return "it holds a path separator"
    if run_id.startswith("."):
        return "it starts with a dot"
    if any(ord(c) < 32 or ord(c) == 127 for c in run_id):
        return "it holds a control character"
    if len(run_id.encode("utf-8", "surrogateescape")) > RUN_ID_MAX_BYTES:
        return f"it is longer than {RUN_ID_MAX_BYTES} bytes"
    return None


RUN_ID_FIX = "give a plain name such as my-run-1 (letters, digits, '.', '_', '-'), or leave it empty for a new id"


def new_run_id(experiment: str) -> str:
    """``<experiment>-<UTC timestamp>-<random>``: sortable and unique."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    return f"{experiment.replace('/', '_')}-{stamp}-{secrets.token_hex(2)}"


def keeps_steps(detail_episodes: int | None, episode: int | None) -> bool:
    """Whether a log of ``detail_episodes`` writes the :data:`STEP_KINDS` of ``episode``."""
    return detail_episodes is None or episode is None or episode < detail_episodes


def drops_event(detail_episodes: int | None, kind: str, episode: int | None, step: int | None) -> bool:
    """Whether a log of ``detail_episodes`` leaves this event out: a step kind past the detail episodes, except an
    episode's first state."""
    return (
        detail_episodes is not None
        and kind in STEP_KINDS
        and episode is not None
        and episode >= detail_episodes
        and not (kind == "env_state" and step == 0)
    )


class RunLog:
    """Writes events for one run; ``with RunLog(...) as log:`` closes the file.

    Args:
        experiment: the experiment's id (``adaptive_tom.table1``); it starts the run id.
        run_id: a plain name for the run's folder; None: ``<experiment>-<time>-<random>``.
        results: the results folder (``runs/<run_id>/`` goes there); None: the default.
        meta: what the run is (model, source, reading, ...), written in its first line.
        detail_episodes: episodes per condition logged step by step (see ``__init__``); None: all.
    """

    def __init__(
        self,
        experiment: str,
        *,
        run_id: str | None = None,
        results: str | os.PathLike[str] | None = None,
        meta: dict[str, Any] | None = None,
        detail_episodes: int | None = None,
    ) -> None:
        """``detail_episodes``: episodes per condition (numbers below it) logged step by step; later episodes keep
        everything but the :data:`STEP_KINDS` of their steps. None logs every step of every episode. For formal
        runs, whose episodes replay exactly from their seed, a few such episodes show what the agents do; the rest
        would be most of the results folder (``detail_episodes`` is written in the run's first line)."""
        self.experiment = experiment
        self.detail_episodes = detail_episodes
        if run_id and (why := run_id_problem(run_id)):
            raise UsageError(f"run_id {run_id!r} cannot name a run folder: {why}; {RUN_ID_FIX}.")
        self.run_id = run_id or new_run_id(experiment)
        self.dir = results_for_writing(results) / "runs" / self.run_id
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / "events.jsonl"
        self._redact = Redactor()
        self._lock = threading.Lock()
        manifest = os.environ.get(ENV_RUNS_MANIFEST)
        if manifest:  # the runner compresses the logs a notebook wrote once it has finished (and only those)
            with open(manifest, "a", encoding="utf-8") as fh:
                fh.write(f"{self.dir}\n")
        if not self.path.exists() and (self.dir / GZ_NAME).exists():
            decompress_log(self.dir / GZ_NAME)  # a rerun appends to a run that was compressed when it finished
        existing = self.path.exists() and self.path.stat().st_size > 0
        self._index = read_index(self.path, warn=False) if existing else RunIndex()  # a rerun extends the run's index
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC  # a planted link is not followed
        self._fh = os.fdopen(os.open(self.path, flags, 0o644), "ab")
        self._buffer: list[tuple[bytes, str, str, int | None, int | None, str | None]] = []
        self._buffered = 0
        self._next = self._fh.tell()  # where the next line will start
        if not _ends_with_newline(self.path):
            self._fh.write(b"\n")  # a killed run left half a line: start ours on a fresh one
            self._next += 1
        self._observed: list[tuple[ChatModel, Callable[[CallRecord], None]]] = []
        _open_logs.add(self)
        _start_flusher()
        start = {"tomlib": tomlib.__version__, "python": platform.python_version(), "pid": os.getpid(), **(meta or {})}
        if detail_episodes is not None:
            start["detail_episodes"] = detail_episodes
        self.event("run_start", start)
        self.flush()  # the run is visible as soon as it starts

    def keeps_steps(self, episode: int | None) -> bool:
        """Whether this log writes the :data:`STEP_KINDS` of ``episode`` (callers skip building what it would drop)."""
        return keeps_steps(self.detail_episodes, episode)

    @property
    def closed(self) -> bool:
        return self._fh.closed

    def event(
        self,
        kind: str,
        payload: dict[str, Any] | None = None,
        *,
        condition: str | None = None,
        episode: int | None = None,
        step: int | None = None,
        agent: str | None = None,
    ) -> dict[str, Any]:
        """Append one event (the fields of :class:`Event`), redacted; it reaches the file within
        :data:`FLUSH_INTERVAL_S`. Return it as a dict."""
        places = _PLACES.get()
        ctx = places.get(id(self)) if places else None
        if ctx:
            condition = condition if condition is not None else ctx.get("condition", "")
            episode = episode if episode is not None else ctx.get("episode")
            step = step if step is not None else ctx.get("step")
            agent = agent if agent is not None else ctx.get("agent", "")
        if drops_event(self.detail_episodes, kind, episode, step):
            return {"kind": kind, "payload": payload or {}, "episode": episode, "step": step, "dropped": True}
        ev = {
            "run_id": self.run_id,
            "experiment": self.experiment,
            "condition": condition or "",
            "episode": episode,
            "step": step,
            "agent": agent or "",
            "kind": kind,
            "payload": payload or {},
            "time": time.time(),
        }
        try:
            raw = orjson.dumps(ev, default=str, option=_ORJSON)
        except (orjson.JSONEncodeError, TypeError):
            raw = dumps(ev)
        with self._lock:
            self._buffer.append((raw, kind, ev["condition"], episode, step, agent))
            self._buffered += len(raw)
            if self._buffered >= FLUSH_BYTES:
                self._write()
        return ev

    def flush(self) -> None:
        """Write every buffered event to the file now."""
        with self._lock:
            self._write()

    def _write(self) -> None:
        """Redact, index and write the buffer (the caller holds the lock).

        Redaction looks at the whole batch once: only when a secret or a key-shaped pattern's literal occurs
        somewhere in it are its lines redacted one by one (most batches of a formal run hold neither). The index
        keeps only what was written: a line redaction changed is parsed again, as are the few events whose payload
        the index keeps."""
        if not self._buffer or self._fh.closed:
            return
        lines = [entry[0] for entry in self._buffer]
        batch = b"\n".join(lines)
        if self._redact.suspect(batch):
            lines = [self._redact.line(line) for line in lines]
            batch = b"\n".join(lines)
        index, offset = self._index, self._next
        for line, (raw, kind, condition, episode, step, agent) in zip(lines, self._buffer, strict=True):
            n = len(line)
            keeps = kind in SUMMARY_KINDS and (kind != "env_state" or index.wants_state(condition, episode))
            if line is raw and not keeps:
                index.add_fields(offset, n, kind, condition, episode, step, agent, None)
            else:
                index.add(offset, n, parse_line(line) or {})
            offset += n + 1
        self._next = offset
        self._fh.write(batch + b"\n")
        self._fh.flush()
        self._buffer.clear()
        self._buffered = 0

    @contextmanager
    def context(self, **fields: Any) -> Iterator[RunLog]:
        """Default condition / episode / step / agent for events written inside the block, by this thread or task
        only (:data:`_PLACES`: asyncio tasks playing episodes side by side keep their own)."""
        unknown = set(fields) - {"condition", "episode", "step", "agent"}
        if unknown:
            raise TypeError(f"unknown context field(s): {', '.join(sorted(unknown))}")
        places = _PLACES.get() or {}
        token = _PLACES.set({**places, id(self): {**places.get(id(self), {}), **fields}})
        try:
            yield self
        finally:
            _PLACES.reset(token)

    def observe(self, model: ChatModel) -> None:
        """Log every call of ``model`` as an ``llm_call`` event, placed by its sample key.

        The prompt and the reply are not copied into the log: every call's exchange is in the response store
        under the event's ``key`` (the store's path is the event's ``store``), and the explorer reads it from there
        (:func:`tomlib.llm.recorded_exchange`). A transcript for sharing is exported from the store
        (``tomlib cache export --used-in``)."""
        store = str(model.store.path)

        def on_call(rec: CallRecord) -> None:
            c, sk = rec.completion, rec.completion.sample_key
            self.event(
                "llm_call",
                {
                    "model": c.model,
                    "purpose": sk.purpose or rec.purpose,
                    "call": rec.purpose,
                    "attempt": rec.attempt,
                    "sample_key": sk.label(),
                    "store": store,
                    "parsed": rec.parsed,
                    "error": rec.error,
                    "prompt_tokens": c.prompt_tokens,
                    "completion_tokens": c.completion_tokens,
                    "latency_s": c.latency_s,
                    "cache": "hit" if c.cache_hit else "miss",
                    "retries": c.retries,
                    "key": c.key,
                },
                condition=sk.condition or None,
                episode=sk.episode,
                step=sk.step,
                agent=sk.agent or None,
            )

        model.add_observer(on_call)
        self._observed.append((model, on_call))

    def close(self) -> None:
        for model, fn in self._observed:
            model.remove_observer(fn)
        self._observed.clear()
        with self._lock:
            self._write()
            if not self._fh.closed:
                self._fh.close()
                self._index.size = self._next
                self._index.save(self.path)
        _open_logs.discard(self)

    def __enter__(self) -> RunLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
