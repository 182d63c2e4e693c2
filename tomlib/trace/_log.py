"""Append-only JSONL run logs: one file per run under ``results/runs/<run_id>/events.jsonl``.

Each event is written and flushed on its own line, so a killed run keeps everything it did; a rerun with
the same ``run_id`` appends to the same log.
"""

from __future__ import annotations

import json
import os
import platform
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

import tomlib
from tomlib.paths import results_dir
from tomlib.redact import Redactor

if TYPE_CHECKING:
    from tomlib.llm import CallRecord, ChatModel

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


def new_run_id(experiment: str) -> str:
    """``<experiment>-<UTC timestamp>-<random>``: sortable and unique."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    return f"{experiment.replace('/', '_')}-{stamp}-{secrets.token_hex(2)}"


class RunLog:
    """Writes events for one run; ``with RunLog(...) as log:`` closes the file."""

    def __init__(
        self,
        experiment: str,
        *,
        run_id: str | None = None,
        results: str | os.PathLike[str] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.experiment = experiment
        self.run_id = run_id or new_run_id(experiment)
        self.dir = results_dir(results) / "runs" / self.run_id
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / "events.jsonl"
        self._redact = Redactor()
        self._lock = threading.Lock()
        # backslashreplace: an unpaired surrogate is written as its JSON escape instead of failing the write
        self._fh = open(self.path, "a", encoding="utf-8", errors="backslashreplace")  # noqa: SIM115 - kept open
        if not _ends_with_newline(self.path):
            self._fh.write("\n")  # a killed run left half a line: start ours on a fresh one
        self._context: dict[str, Any] = {}
        self._observed: list[tuple[ChatModel, Callable[[CallRecord], None]]] = []
        self.event(
            "run_start",
            {"tomlib": tomlib.__version__, "python": platform.python_version(), "pid": os.getpid(), **(meta or {})},
        )

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
        """Append one event (the fields of :class:`Event`), redacted and flushed; return it as a dict."""
        ctx = self._context
        ev = {
            "run_id": self.run_id,
            "experiment": self.experiment,
            "condition": condition if condition is not None else ctx.get("condition", ""),
            "episode": episode if episode is not None else ctx.get("episode"),
            "step": step if step is not None else ctx.get("step"),
            "agent": agent if agent is not None else ctx.get("agent", ""),
            "kind": kind,
            "payload": payload or {},
            "time": time.time(),
        }
        # redact the serialized line once: cheaper than walking every payload leaf, and it covers keys too
        line = self._redact.text(json.dumps(ev, ensure_ascii=False, default=str))
        with self._lock:
            self._fh.write(line + "\n")
            self._fh.flush()
        return ev

    @contextmanager
    def context(self, **fields: Any) -> Iterator[RunLog]:
        """Default condition / episode / step / agent for events written inside the block."""
        unknown = set(fields) - {"condition", "episode", "step", "agent"}
        if unknown:
            raise TypeError(f"unknown context field(s): {', '.join(sorted(unknown))}")
        saved = dict(self._context)
        self._context.update(fields)
        try:
            yield self
        finally:
            self._context = saved

    def observe(self, model: ChatModel) -> None:
        """Log every call of ``model`` as an ``llm_call`` event, placed by its sample key."""

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
                    "messages": c.messages,
                    "response_format": c.response_format,
                    "reply": c.content,
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
            if not self._fh.closed:
                self._fh.close()

    def __enter__(self) -> RunLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
