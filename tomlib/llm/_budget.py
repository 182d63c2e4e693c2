"""Budgets for live calls that hold under any concurrency: reserve before sending, settle after.

A call reserves its estimated cost (prompt estimate + ``max_tokens``) once it holds a concurrency slot, and
settles with what the endpoint reports. A call is admitted while ``spent + reserved < limit``; when the
reservations of calls in flight fill the budget, it waits for them to settle, and once ``spent >= limit`` every
new live call is refused. So the spend can pass the limit only by what the calls already in flight cost beyond
their share: less than one call (prompt + ``max_tokens``) when the estimates hold, and never more than the calls
in flight (at most ``concurrency`` of them) when a prompt estimate was low.

A ledger file lets the processes of one ``python -m tomlib run`` (kernels one after another, or side by side with
``--jobs``) share one budget, reservations included: under an exclusive lock on ``<ledger>.lock``, a call reads what
the others wrote, counts their reservations still open, and appends its own (a ``hold`` line) before it is sent;
settling appends a ``release`` line with what it cost. So the admission rule above holds across processes, and all
of them together can pass the limit only by what the calls in flight cost beyond their estimates. A hold of a process
that died is ignored (same host: its PID is gone; another host: after ``STALE_HOLD_S``).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import secrets
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tomlib.llm._errors import BudgetExceeded, EstimateOverBudget

ENV_MAX_TOKENS = "TOMLIB_MAX_TOKENS"
ENV_MAX_USD = "TOMLIB_MAX_USD"
ENV_LEDGER = "TOMLIB_SPEND_LEDGER"
ENV_ESTIMATES = "TOMLIB_ESTIMATES"  # a file the runner watches: each estimate line reaches its terminal at once
ENV_SPEND_TO_BUDGET = "TOMLIB_SPEND_TO_BUDGET"  # "1": start live work whose estimate exceeds the budget anyway
STALE_HOLD_S = 900.0  # a hold from another host older than this is taken as lost (its call cannot last that long)
POLL_S = 0.05  # how often a call waiting on other processes' reservations looks again


class Budget(BaseModel):
    """Spending limit for live calls; once reached, new live calls are refused (stored replies still flow)."""

    model_config = ConfigDict(extra="forbid")

    max_tokens: int | None = Field(default=None, ge=0, description="Prompt + completion tokens.")
    max_usd: float | None = Field(default=None, ge=0, description="Needs prices in the model config.")

    @property
    def limited(self) -> bool:
        return self.max_tokens is not None or self.max_usd is not None

    def describe(self) -> str:
        parts = [f"{self.max_tokens:,} tokens" if self.max_tokens is not None else ""]
        parts.append(f"${self.max_usd:g}" if self.max_usd is not None else "")
        return " and ".join(p for p in parts if p) or "no limit"


def estimate_prompt_tokens(messages: Sequence[dict[str, Any]]) -> int:
    """A rough prompt size: ~4 characters a token plus a few tokens of chat template per message."""
    return 3 + sum(len(m.get("content", "")) // 4 + 4 for m in messages)


@dataclass
class Reservation:
    tokens: int
    usd: float
    hold: str = ""  # the id of its hold line in the ledger file


@dataclass
class _Hold:
    tokens: int
    usd: float
    pid: int
    host: str
    at: float

    def alive(self, host: str) -> bool:
        if self.host != host:
            return time.time() - self.at < STALE_HOLD_S
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


class BudgetLedger:
    """What live calls spent and reserved against one :class:`Budget`; shared by the models holding it."""

    def __init__(self, budget: Budget | None = None, *, path: str | os.PathLike[str] | None = None) -> None:
        self.budget = budget or Budget()
        self.path = Path(path) if path else None
        self.spent_tokens = 0
        self.spent_usd = 0.0
        self.reserved_tokens = 0
        self.reserved_usd = 0.0
        self.in_flight = 0
        self.calls = 0  # settled live calls, this process's and those read from the ledger file
        self._me = secrets.token_hex(6)
        self._host = socket.gethostname()
        self._offset = 0
        self._held: dict[str, _Hold] = {}  # other processes' open reservations, from the ledger file
        self._lock = threading.Lock()
        self._settled: asyncio.Event | None = None
        self._refresh()

    @classmethod
    def from_env(cls) -> BudgetLedger:
        """The ledger the runner hands to notebook kernels through ``TOMLIB_MAX_*`` and ``TOMLIB_SPEND_LEDGER``."""
        tokens, usd = os.environ.get(ENV_MAX_TOKENS), os.environ.get(ENV_MAX_USD)
        try:
            budget = Budget(max_tokens=int(tokens) if tokens else None, max_usd=float(usd) if usd else None)
        except ValueError as exc:
            raise BudgetExceeded(
                f"{ENV_MAX_TOKENS}={tokens!r} / {ENV_MAX_USD}={usd!r} is not a budget ({exc}); set whole tokens "
                "and dollars, e.g. 200000 and 5.0, or unset them."
            ) from None
        return cls(budget, path=os.environ.get(ENV_LEDGER) or None)

    @contextlib.contextmanager
    def _file_lock(self) -> Iterator[None]:
        """Exclusive across processes (an flock on ``<ledger>.lock``); a no-op without a ledger file."""
        if self.path is None:
            yield
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_name(self.path.name + ".lock"), "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _append(self, record: dict[str, Any]) -> None:
        assert self.path is not None
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")

    def _refresh(self) -> None:
        """Add what other processes settled since the last look, and follow their open reservations."""
        if self.path is None or not self.path.exists():
            return
        with open(self.path, "rb") as fh:
            fh.seek(self._offset)
            data = fh.read()
        end = data.rfind(b"\n") + 1  # a line still being written is read next time
        self._offset += end
        for line in data[:end].splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if rec.get("by") == self._me:
                continue
            if "hold" in rec:
                self._held[rec["hold"]] = _Hold(
                    int(rec.get("tokens", 0)),
                    float(rec.get("usd", 0.0)),
                    int(rec.get("pid", 0)),
                    str(rec.get("host", "")),
                    float(rec.get("at", 0.0)),
                )
                continue
            self._held.pop(rec.get("release", ""), None)
            self.spent_tokens += int(rec.get("tokens", 0))
            self.spent_usd += float(rec.get("usd", 0.0))
            self.calls += int(rec.get("tokens", 0)) > 0

    def left(self) -> tuple[int | None, float | None]:
        """(tokens, USD) of the budget not yet spent by any process sharing the ledger (None: that limit unset)."""
        with self._lock, self._file_lock():
            self._refresh()
        b = self.budget
        tokens = None if b.max_tokens is None else max(0, b.max_tokens - self.spent_tokens)
        usd = None if b.max_usd is None else max(0.0, b.max_usd - self.spent_usd)
        return tokens, usd

    def _others(self) -> tuple[int, float, int]:
        """Tokens, USD and count of the open reservations of other live processes."""
        live = [h for h in self._held.values() if h.alive(self._host)]
        return sum(h.tokens for h in live), sum(h.usd for h in live), len(live)

    def _over(self, with_reserved: bool) -> str | None:
        b = self.budget
        tokens, usd = self.spent_tokens, self.spent_usd
        if with_reserved:
            other_tokens, other_usd, _ = self._others()
            tokens += self.reserved_tokens + other_tokens
            usd += self.reserved_usd + other_usd
        if b.max_tokens is not None and tokens >= b.max_tokens:
            return "tokens"
        if b.max_usd is not None and usd >= b.max_usd:
            return "usd"
        return None

    def status(self) -> str:
        """One line: spent, reserved and the limit."""
        return (
            f"spent {self.spent_tokens:,} tokens and ${self.spent_usd:.4f} of {self.budget.describe()}; "
            f"{self.in_flight} call(s) in flight holding an estimated {self.reserved_tokens:,} tokens"
        )

    async def reserve(self, model: str, tokens: int, usd: float, *, priced: bool) -> Reservation:
        """Admit one live call or raise :class:`BudgetExceeded`; waits while calls in flight fill the budget."""
        if not self.budget.limited:
            return Reservation(0, 0.0)
        if self.budget.max_usd is not None and not priced:
            raise BudgetExceeded(
                f"A money budget ({self.budget.describe()}) is set but model '{model}' has no prices, so its "
                "spend cannot be counted. Add price_per_1k_input / price_per_1k_output to configs/models.yaml, "
                "or use a token budget only (--max-tokens, Budget(max_tokens=...))."
            )
        if self._settled is None:
            self._settled = asyncio.Event()
        while True:
            with self._lock, self._file_lock():
                self._refresh()
                over = self._over(with_reserved=False)
                nobody_waits = self.in_flight == 0 and self._others()[2] == 0
                if over is None and (self._over(with_reserved=True) is None or nobody_waits):
                    self.reserved_tokens += tokens
                    self.reserved_usd += usd
                    self.in_flight += 1
                    hold = ""
                    if self.path is not None:
                        hold = f"{self._me}-{secrets.token_hex(4)}"
                        self._append(
                            {"by": self._me, "hold": hold, "tokens": tokens, "usd": round(usd, 8)}
                            | {"pid": os.getpid(), "host": self._host, "at": round(time.time(), 3)}
                        )
                    return Reservation(tokens, usd, hold)
            if over is not None:
                what = "Token" if over == "tokens" else "Money"
                raise BudgetExceeded(
                    f"{what} budget spent: {self.status()}. New live calls are refused (model '{model}'); "
                    "everything already answered is kept in the response store, so a rerun with a larger budget "
                    "(--max-tokens / --max-usd, or Budget(...)) resumes without repeating a call."
                )
            self._settled.clear()
            if self.in_flight:  # one of ours settles: we hear it at once
                await self._settled.wait()
            else:  # only other processes hold the rest: look again shortly
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._settled.wait(), POLL_S)

    def settle(self, held: Reservation, *, model: str, tokens: int, usd: float) -> None:
        """Replace a reservation by what the call cost (``tokens=0`` when it failed and was not billed)."""
        with self._lock, self._file_lock():
            if self.budget.limited:
                self.reserved_tokens -= held.tokens
                self.reserved_usd -= held.usd
                self.in_flight -= 1
            self.spent_tokens += tokens
            self.spent_usd += usd
            self.calls += tokens > 0
            if self.path is not None and (tokens or held.hold):
                record = {"by": self._me, "model": model, "tokens": tokens, "usd": round(usd, 8)}
                self._append(record | ({"release": held.hold} if held.hold else {}))
        if self._settled is not None:
            self._settled.set()


def read_ledger(path: str | os.PathLike[str]) -> tuple[int, float, int]:
    """(tokens, usd, calls) settled in a ledger file so far."""
    led = BudgetLedger(path=path)
    return led.spent_tokens, led.spent_usd, led.calls


_default: dict[int, BudgetLedger] = {}


def default_ledger() -> BudgetLedger:
    """The process's shared ledger, configured from the environment (no limit when nothing is set)."""
    pid = os.getpid()
    if pid not in _default:
        _default.clear()
        _default[pid] = BudgetLedger.from_env()
    return _default[pid]


def announce_estimate(line: str, *, tokens: int, usd: float | None) -> None:
    """Say what live work is about to cost, before its first call: in the notebook, and through ``TOMLIB_ESTIMATES``
    on the runner's terminal. Then refuse it (:class:`EstimateOverBudget`, nothing sent) when the estimate exceeds
    what is left of the run's budget, unless ``TOMLIB_SPEND_TO_BUDGET=1`` (``--spend-to-budget``) lets it spend up to
    the budget and stop there."""
    print(line, flush=True)
    channel = os.environ.get(ENV_ESTIMATES)
    if channel:
        with open(channel, "a", encoding="utf-8") as fh:
            fh.write(" ".join(line.split()) + "\n")
    led = default_ledger()
    if not led.budget.limited or os.environ.get(ENV_SPEND_TO_BUDGET) == "1":
        return
    tokens_left, usd_left = led.left()
    over = []
    if usd_left is not None and usd is not None and usd > usd_left:
        over.append((f"about ${usd:,.2f}", f"${usd_left:,.2f}", f"--max-usd {usd:.2f}"))
    if tokens_left is not None and tokens > tokens_left:
        over.append((f"about {tokens:,} tokens", f"{tokens_left:,} tokens", f"--max-tokens {tokens}"))
    if over:
        need, left, flag = over[0]
        raise EstimateOverBudget(
            f"Refused before spending: this work is estimated at {need} but {left} of the budget is left. Raise the "
            f"budget ({flag} or more), or pass --spend-to-budget to spend up to the budget and stop there (a rerun "
            "with a larger budget resumes; recorded calls are free, so a resumed run costs less than its estimate)."
        )
