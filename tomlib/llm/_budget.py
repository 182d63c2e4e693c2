"""Budgets for live calls that hold under any concurrency: reserve before sending, settle after.

A call reserves its estimated cost (prompt estimate + ``max_tokens``) once it holds a concurrency slot, and
settles with what the endpoint reports. A call is admitted while ``spent + reserved < limit``; when the
reservations of calls in flight fill the budget, it waits for them to settle, and once ``spent >= limit`` every
new live call is refused. So the spend can pass the limit only by what the calls already in flight cost beyond
their share: less than one call (prompt + ``max_tokens``) when the estimates hold, and never more than the calls
in flight (at most ``concurrency`` of them) when a prompt estimate was low.

A ledger file lets the kernels of one ``python -m tomlib run`` (one notebook after another) share one budget:
every settled call appends a line, and every process adds the lines other processes wrote.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tomlib.llm._errors import BudgetExceeded

ENV_MAX_TOKENS = "TOMLIB_MAX_TOKENS"
ENV_MAX_USD = "TOMLIB_MAX_USD"
ENV_LEDGER = "TOMLIB_SPEND_LEDGER"


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
        self._offset = 0
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

    def _refresh(self) -> None:
        """Add what other processes sharing the ledger file settled since the last look."""
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
            if rec.get("by") != self._me:
                self.spent_tokens += int(rec.get("tokens", 0))
                self.spent_usd += float(rec.get("usd", 0.0))
                self.calls += 1

    def _over(self, with_reserved: bool) -> str | None:
        b = self.budget
        tokens = self.spent_tokens + (self.reserved_tokens if with_reserved else 0)
        usd = self.spent_usd + (self.reserved_usd if with_reserved else 0.0)
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
            with self._lock:
                self._refresh()
                over = self._over(with_reserved=False)
                if over is None and (self._over(with_reserved=True) is None or self.in_flight == 0):
                    self.reserved_tokens += tokens
                    self.reserved_usd += usd
                    self.in_flight += 1
                    return Reservation(tokens, usd)
            if over is not None:
                what = "Token" if over == "tokens" else "Money"
                raise BudgetExceeded(
                    f"{what} budget spent: {self.status()}. New live calls are refused (model '{model}'); "
                    "everything already answered is kept in the response store, so a rerun with a larger budget "
                    "(--max-tokens / --max-usd, or Budget(...)) resumes without repeating a call."
                )
            self._settled.clear()
            await self._settled.wait()

    def settle(self, held: Reservation, *, model: str, tokens: int, usd: float) -> None:
        """Replace a reservation by what the call cost (``tokens=0`` when it failed and was not billed)."""
        with self._lock:
            if self.budget.limited:
                self.reserved_tokens -= held.tokens
                self.reserved_usd -= held.usd
                self.in_flight -= 1
            self.spent_tokens += tokens
            self.spent_usd += usd
            self.calls += tokens > 0
            if self.path is not None and tokens:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                line = json.dumps({"by": self._me, "model": model, "tokens": tokens, "usd": round(usd, 8)})
                with open(self.path, "a", encoding="utf-8") as fh:
                    fh.write(line + "\n")
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
