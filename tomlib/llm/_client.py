"""``ChatModel``: one async client over ``openai.AsyncOpenAI`` with a response store in front of it.

Bounded concurrency, retries with exponential backoff and jitter (honouring Retry-After), a per-call
timeout, token accounting and an optional budget. Works with ``await`` in a notebook cell and, through
the ``*_sync`` methods, from plain synchronous code.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import logging
import os
import random
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from tomlib.llm._budget import Budget, BudgetLedger, default_ledger, estimate_prompt_tokens
from tomlib.llm._config import ModelConfig, get_model_config
from tomlib.llm._errors import ConfigError, ModelCallFailed, ReplayMiss, StructuredOutputError
from tomlib.llm._json import parse_reply, reask_message, response_format_for, schema_instruction
from tomlib.llm._local import LocalServer
from tomlib.llm._loop import on_engine, run_sync
from tomlib.llm._miss import explain_miss, moved_endpoint, rerecord_hint
from tomlib.llm._request import (
    Message,
    SampleKey,
    Sampling,
    as_sample_key,
    build_request,
    request_key,
    sample_key_from_json,
)
from tomlib.llm._store import ResponseStore, scrub_surrogates
from tomlib.paths import transcripts_dir

if TYPE_CHECKING:  # the SDK is imported when a live call needs it: replay never does (a third of a second)
    import openai

log = logging.getLogger("tomlib.llm")
LONG_WAIT_S = 5.0
"""A retry wait at least this long is announced (a warning on stderr, shown under the notebook cell)."""
PARSE_IN_THREAD_CHARS = 65_536
"""Replies at least this long are parsed off the engine loop, so other calls keep flowing meanwhile."""

Mode = Literal["replay", "record", "auto"]
MODES: tuple[str, ...] = ("replay", "record", "auto")
M = TypeVar("M", bound=BaseModel)


class _Served(Protocol):
    """A server tomlib started for a model (llama.cpp for `local`, the simulation for `sim`)."""

    def stop(self) -> None: ...


class Completion(BaseModel):
    """One model reply, live or from the store."""

    model_config = ConfigDict(frozen=True)

    model: str = Field(description="Configured model name.")
    content: str
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = Field(description="Wall time of this call (a store lookup on a hit).")
    cache_hit: bool
    retries: int = 0
    key: str
    sample_key: SampleKey
    messages: list[dict[str, str]]
    response_format: dict[str, Any] | None = None


class CallRecord(BaseModel):
    """What observers (e.g. a run log) receive after every call or structured-output attempt."""

    completion: Completion
    purpose: Literal["complete", "complete_json"]
    attempt: int = 1
    parsed: Any = None
    error: str | None = None


class Usage(BaseModel):
    """Running totals for one ChatModel."""

    live_calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    retries: int = 0
    failures: int = 0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class JsonCompletion(Generic[M]):
    """A validated structured reply and every attempt it took."""

    value: M
    completion: Completion
    attempts: list[Completion] = field(default_factory=list)


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return float(ms) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


def _classify(exc: Exception, timeout_s: float) -> tuple[bool, str]:
    """(retryable, reason) for an exception raised by the SDK during one attempt."""
    import openai

    if isinstance(exc, openai.APITimeoutError | TimeoutError):
        return True, f"timed out after {timeout_s:g} s"
    if isinstance(exc, openai.APIConnectionError):
        return True, f"connection error ({exc.__cause__ or exc})"
    if isinstance(exc, openai.APIStatusError):
        code = exc.status_code
        if code == 429 or code == 408 or code == 409 or code >= 500:
            return True, f"HTTP {code}"
        return False, f"HTTP {code}: {exc.message}"
    if isinstance(exc, openai.APIResponseValidationError | json.JSONDecodeError | _MalformedReply):
        return True, f"malformed response ({exc})"
    return False, f"{type(exc).__name__}: {exc}"


class _MalformedReply(Exception):
    pass


class ChatModel:
    """A configured model behind the response store (modes: replay, record, auto)."""

    def __init__(
        self,
        config: ModelConfig,
        *,
        mode: Mode | None = None,
        store: ResponseStore | None = None,
        budget: Budget | BudgetLedger | None = None,
        concurrency: int | None = None,
        sync_transcripts: bool = True,
    ) -> None:
        mode = mode or os.environ.get("TOMLIB_LLM_MODE", "auto")  # type: ignore[assignment]
        if mode not in MODES:
            raise ConfigError(f"llm_mode must be one of {', '.join(MODES)}; got {mode!r}.")
        self.config = config
        self.mode: Mode = mode  # type: ignore[assignment]
        self.store = store if store is not None else ResponseStore()
        # no budget given: the process's shared ledger, which the runner configures (--max-usd / --max-tokens)
        self.ledger = budget if isinstance(budget, BudgetLedger) else BudgetLedger(budget) if budget else None
        self.concurrency = concurrency or config.concurrency
        self.usage = Usage()
        self._observers: list[Callable[[CallRecord], None]] = []
        self._warned_moved = False  # said once whether the live calls were recorded under another endpoint
        self._client: openai.AsyncOpenAI | None = None
        self._sem: asyncio.Semaphore | None = None
        self._server: _Served | None = None
        self._client_lock: asyncio.Lock | None = None
        self._rng = random.Random()
        if sync_transcripts and transcripts_dir().is_dir():
            self.store.sync_transcripts(transcripts_dir())

    @classmethod
    def from_name(cls, name: str, **kwargs: Any) -> ChatModel:
        """The model configured as ``name`` in ``configs/models.yaml``.

        Args:
            name: the entry's name (``local``, ``sim:<name>``, or one of yours); an unknown name is refused with the
                closest names.
            kwargs: overrides of the entry, e.g. ``mode`` (``replay``, ``record``, ``live``) or ``concurrency``.
        """
        return cls(get_model_config(name), **kwargs)

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def budget(self) -> Budget:
        """The limit live calls are held to (shared with every model on the same ledger)."""
        return self._ledger().budget

    @budget.setter
    def budget(self, value: Budget | BudgetLedger) -> None:
        self.ledger = value if isinstance(value, BudgetLedger) else BudgetLedger(value)

    def _ledger(self) -> BudgetLedger:
        return self.ledger if self.ledger is not None else default_ledger()

    @property
    def _priced(self) -> bool:
        """Whether the spend of a call can be counted in dollars (free endpoints cost nothing)."""
        cfg = self.config
        free = cfg.kind == "local" or cfg.api_key_env is None
        return free or cfg.price_per_1k_input is not None or cfg.price_per_1k_output is not None

    def _cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        cfg = self.config
        return (prompt_tokens / 1000) * (cfg.price_per_1k_input or 0.0) + (completion_tokens / 1000) * (
            cfg.price_per_1k_output or 0.0
        )

    def __repr__(self) -> str:
        return f"ChatModel({self.name!r}, mode={self.mode!r})"

    def add_observer(self, fn: Callable[[CallRecord], None]) -> None:
        """Call ``fn`` with a CallRecord after every call and every structured-output attempt."""
        self._observers.append(fn)

    def remove_observer(self, fn: Callable[[CallRecord], None]) -> None:
        self._observers.remove(fn)

    def _notify(self, record: CallRecord) -> None:
        for fn in list(self._observers):
            fn(record)

    # -- the engine-loop side -------------------------------------------------------------------

    async def _ensure_client(self) -> openai.AsyncOpenAI:
        """The HTTP client (and, for kind `local`, a started server), created once on the engine loop."""
        if self._client is not None:
            return self._client
        import openai

        if self._client_lock is None:
            self._client_lock = asyncio.Lock()
        async with self._client_lock:
            if self._client is None:
                api_key = self.config.api_key()  # a missing key fails here, before any server starts
                base_url = self.config.base_url
                if self.config.kind == "local":
                    server = LocalServer(
                        self.config.model_file,
                        self.config.served_model(),
                        n_ctx=self.config.n_ctx,
                        n_threads=self.config.n_threads,
                    )
                    await asyncio.to_thread(server.start)  # other models keep running while it loads
                    self._server = server
                    base_url, api_key = server.base_url, server.api_key  # the server's own token
                elif self.config.kind == "sim" and base_url is None:
                    from tomlib.sim import SimServer, SimSpec  # the simulated model, served in this process

                    spec = SimSpec(name=self.name, **(self.config.sim or {}))
                    sim = SimServer(spec).start()
                    self._server = sim
                    base_url = sim.base_url
                self._sem = asyncio.Semaphore(self.concurrency)
                self._client = openai.AsyncOpenAI(
                    api_key=api_key, base_url=base_url, max_retries=0, timeout=self.config.timeout_s
                )
        return self._client

    async def _live(self, request: dict[str, Any], key: str) -> dict[str, Any]:
        """One answered call (``key``: its store key): a concurrency slot, a budget reservation, attempts, then the
        settled cost."""
        client = await self._ensure_client()
        assert self._sem is not None
        kwargs: dict[str, Any] = {
            "model": self.config.served_model(),
            "messages": request["messages"],
            **Sampling(**request["sampling"]).api_kwargs(),
        }
        if request["response_format"]:
            kwargs["response_format"] = request["response_format"]
        if self.config.kind == "sim":  # the sim draws by call site, not by which identical prompt arrives first
            from tomlib.sim import CALL_HEADER

            kwargs["extra_headers"] = {CALL_HEADER: key}
        ledger = self._ledger()
        async with self._sem:
            est_prompt = estimate_prompt_tokens(request["messages"])
            est_completion = int(kwargs["max_tokens"])
            held = await ledger.reserve(
                self.name, est_prompt + est_completion, self._cost(est_prompt, est_completion), priced=self._priced
            )
            try:
                stored = await self._attempts(client, kwargs, request)
            except BaseException:
                ledger.settle(held, model=self.name, tokens=0, usd=0.0)
                raise
            usage = stored["usage"]
            p, c = usage["prompt_tokens"], usage["completion_tokens"]
            if p + c == 0:  # the endpoint reported no usage: count an estimate rather than nothing
                p, c = est_prompt, len(stored["content"]) // 4 + 1
                stored["usage_estimated"] = True
            ledger.settle(held, model=self.name, tokens=p + c, usd=self._cost(p, c))
            return stored

    async def _attempts(self, client: openai.AsyncOpenAI, kwargs: dict[str, Any], request: dict[str, Any]) -> dict:
        """Send with retries: backoff with jitter, Retry-After floored by our backoff and capped, a deadline
        on each attempt (a server trickling bytes cannot hold a call past ``timeout_s``)."""
        import openai

        cfg = self.config
        for attempt in range(cfg.max_retries + 1):
            t0 = time.perf_counter()
            try:
                resp = await asyncio.wait_for(
                    client.chat.completions.create(**kwargs, timeout=cfg.timeout_s), cfg.timeout_s
                )
                if not getattr(resp, "choices", None) or resp.choices[0].message.content is None:
                    raise _MalformedReply("no choices or no message content in the reply")
                latency = time.perf_counter() - t0
                usage = resp.usage
                return {
                    "content": scrub_surrogates(resp.choices[0].message.content),
                    "finish_reason": resp.choices[0].finish_reason,
                    "usage": {
                        "prompt_tokens": (usage.prompt_tokens or 0) if usage else 0,
                        "completion_tokens": (usage.completion_tokens or 0) if usage else 0,
                    },
                    "served_model": scrub_surrogates(str(getattr(resp, "model", "") or "")) or None,
                    "latency_s": round(latency, 4),
                    "retries": attempt,
                }
            except Exception as exc:
                retryable, reason = _classify(exc, cfg.timeout_s)
                site = sample_key_from_json(request["sample_key"]).label()
                hinted = _retry_after(exc) if retryable else None
                if hinted is not None and hinted > cfg.retry_after_max_s:
                    self.usage.failures += 1
                    raise ModelCallFailed(
                        f"Model '{self.name}' call failed: {reason}, and the server asks to retry after "
                        f"{hinted:g} s, longer than retry_after_max_s ({cfg.retry_after_max_s:g} s). That is a "
                        "spent quota or a long outage, not a hiccup: try later, or raise retry_after_max_s in "
                        f"configs/models.yaml to wait. Call site: {site}"
                    ) from None
                if not retryable or attempt == cfg.max_retries:
                    self.usage.failures += 1
                    hint = (
                        "the endpoint kept failing; check it is up, lower concurrency, or raise max_retries"
                        if retryable
                        else "this error is not transient; fix the request or the model config"
                    )
                    if isinstance(exc, openai.AuthenticationError):
                        hint = f"the key in ${cfg.api_key_env} was rejected; check it"
                    # `from None`: the SDK's own message may quote the key (a 401 body); ours is redacted
                    raise ModelCallFailed(
                        f"Model '{self.name}' call failed after {attempt + 1} attempt(s): {reason}; {hint}. "
                        f"Call site: {site}"
                    ) from None
                self.usage.retries += 1
                delay = min(cfg.backoff_max_s, cfg.backoff_base_s * 2**attempt) * self._rng.uniform(0.5, 1.5)
                if hinted is not None:  # never sooner than our own backoff: Retry-After: 0 is no hot loop
                    delay = max(delay, hinted * self._rng.uniform(1.0, 1.1))
                if delay >= LONG_WAIT_S:
                    asked = f"; the server asked for {hinted:g} s" if hinted is not None else ""
                    log.warning(
                        "Model '%s' waits %.0f s before retry %d of %d (%s%s). Call site: %s",
                        self.name,
                        delay,
                        attempt + 1,
                        cfg.max_retries,
                        reason,
                        asked,
                        site,
                    )
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    async def _call(
        self,
        messages: Sequence[Message],
        sample_key: SampleKey,
        sampling: Sampling,
        response_format: Mapping[str, Any] | None,
    ) -> Completion:
        t0 = time.perf_counter()
        request = build_request(self.config.identity(), messages, sampling, response_format, sample_key)
        key = request_key(request)
        stored = None if self.mode == "record" else self.store.get(key)
        if stored is None and self.mode == "replay":
            raise ReplayMiss(
                f"No recorded response from model '{self.name}' for call site '{sample_key.label()}' "
                f"(key {key[:12]}). This run is in replay mode, which only reads recorded responses."
                f"{explain_miss(self.store, request)} To call the model live: {rerecord_hint(self.config)}."
            )
        if stored is None and not self._warned_moved:  # the first live call: would a moved server pay again?
            self._warned_moved = True
            for line in await asyncio.to_thread(moved_endpoint, self.store, request, self.name):
                warnings.warn(f"Paying again for recorded calls? {line}", stacklevel=2)
        if stored is None:
            # redacted before anyone sees it, so a live reply and its replay are the same text
            stored = self.store.redact(await self._live(request, key))
            # off the engine loop: a store locked by another process must not stall the other calls
            await asyncio.to_thread(self.store.put, request, stored, replace=self.mode == "record", key=key)
            self._account(stored)
            hit = False
        else:
            self.usage.cache_hits += 1
            hit = True
        return Completion(
            model=self.name,
            content=stored["content"],
            finish_reason=stored.get("finish_reason"),
            prompt_tokens=stored["usage"]["prompt_tokens"],
            completion_tokens=stored["usage"]["completion_tokens"],
            latency_s=round(time.perf_counter() - t0, 6),
            cache_hit=hit,
            retries=0 if hit else stored.get("retries", 0),
            key=key,
            sample_key=sample_key,
            messages=request["messages"],
            response_format=request["response_format"],
        )

    def _account(self, stored: dict[str, Any]) -> None:
        u = self.usage
        p, c = stored["usage"]["prompt_tokens"], stored["usage"]["completion_tokens"]
        u.live_calls += 1
        u.prompt_tokens += p
        u.completion_tokens += c
        u.cost_usd += self._cost(p, c)

    async def _complete(self, messages, sample_key, sampling, response_format) -> Completion:  # type: ignore[no-untyped-def]
        completion = await self._call(messages, sample_key, sampling, response_format)
        self._notify(CallRecord(completion=completion, purpose="complete"))
        return completion

    async def _complete_json(  # type: ignore[no-untyped-def]
        self, messages, schema, sample_key, sampling, max_attempts, schema_in_prompt
    ) -> JsonCompletion[Any]:
        convo = [dict(m) for m in messages]
        if schema_in_prompt:
            instruction = schema_instruction(schema)
            if convo and convo[0]["role"] == "system":
                convo[0] = {"role": "system", "content": convo[0]["content"] + "\n\n" + instruction}
            else:
                convo.insert(0, {"role": "system", "content": instruction})
        fmt = response_format_for(schema, self.config.json_mode)
        attempts: list[Completion] = []
        error = ""
        for attempt in range(1, max_attempts + 1):
            completion = await self._call(convo, sample_key, sampling, fmt)
            attempts.append(completion)
            try:
                if len(completion.content) >= PARSE_IN_THREAD_CHARS:
                    value = await asyncio.to_thread(parse_reply, completion.content, schema)
                else:
                    value = parse_reply(completion.content, schema)
            except Exception as exc:  # any unusable reply is one failed attempt, logged, never a crash
                error = str(exc) if isinstance(exc, StructuredOutputError) else f"unusable reply ({exc!r})"[:500]
                self._notify(CallRecord(completion=completion, purpose="complete_json", attempt=attempt, error=error))
                convo = [
                    *convo,
                    {"role": "assistant", "content": completion.content},
                    {"role": "user", "content": reask_message(error)},
                ]
                continue
            self._notify(
                CallRecord(
                    completion=completion,
                    purpose="complete_json",
                    attempt=attempt,
                    parsed=value.model_dump(mode="json"),
                )
            )
            return JsonCompletion(value=value, completion=completion, attempts=attempts)
        raise StructuredOutputError(
            f"Model '{self.name}' gave no valid {schema.__name__} in {max_attempts} attempt(s) at call site "
            f"'{sample_key.label()}'; last problem: {error}. Every attempt is in the run log. Raise "
            "max_attempts, simplify the schema, or use a stronger model."
        )

    # -- the public side ----------------------------------------------------------------------------

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        sample_key: SampleKey | Mapping[str, Any] | str,
        response_format: Mapping[str, Any] | None = None,
        **sampling: Any,
    ) -> Completion:
        """One chat completion (``await`` it). ``sampling``: temperature, top_p, max_tokens, seed, stop."""
        sk, sp = as_sample_key(sample_key), Sampling(**sampling)
        return await on_engine(self._complete(messages, sk, sp, response_format))

    async def complete_json(
        self,
        messages: Sequence[Message],
        schema: type[M],
        *,
        sample_key: SampleKey | Mapping[str, Any] | str,
        max_attempts: int = 3,
        schema_in_prompt: bool = True,
        **sampling: Any,
    ) -> JsonCompletion[M]:
        """A reply validated against the pydantic ``schema``; re-asks with the validation error on failure."""
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        sk, sp = as_sample_key(sample_key), Sampling(**sampling)
        return await on_engine(self._complete_json(messages, schema, sk, sp, max_attempts, schema_in_prompt))

    def complete_sync(self, messages: Sequence[Message], **kwargs: Any) -> Completion:
        """:meth:`complete` for synchronous code."""
        return run_sync(self.complete(messages, **kwargs))

    def complete_json_sync(self, messages: Sequence[Message], schema: type[M], **kwargs: Any) -> JsonCompletion[M]:
        """:meth:`complete_json` for synchronous code."""
        return run_sync(self.complete_json(messages, schema, **kwargs))

    def close(self) -> None:
        """Stop the local server (if any) and drop the HTTP client."""
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(RuntimeError):
                run_sync(client.close())
        if self._server is not None:
            self._server.stop()
            self._server = None

    def __enter__(self) -> ChatModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
