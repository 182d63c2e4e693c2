"""Model access: named models, an async client with retries and budgets, and a replayable response store.

>>> chat = ChatModel.from_name("local", mode="replay")          # doctest: +SKIP
>>> reply = await chat.complete(messages, sample_key=key)          # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from tomlib.llm._budget import (
    ENV_ESTIMATES,
    ENV_LEDGER,
    ENV_MAX_TOKENS,
    ENV_MAX_USD,
    ENV_SPEND_TO_BUDGET,
    Budget,
    BudgetLedger,
    announce_estimate,
    default_ledger,
    read_ledger,
)
from tomlib.llm._client import (
    MODES,
    CallRecord,
    ChatModel,
    Completion,
    JsonCompletion,
    Mode,
    Usage,
)
from tomlib.llm._config import (
    ModelConfig,
    describe_source,
    get_model_config,
    load_models,
    models_file,
    read_models,
    source_of,
)
from tomlib.llm._errors import (
    BudgetExceeded,
    ConfigError,
    EstimateOverBudget,
    LLMError,
    LocalModelError,
    MissingKeyError,
    ModelCallFailed,
    ReplayMiss,
    StoreError,
    StructuredOutputError,
    TranscriptError,
)
from tomlib.llm._json import extract_json, parse_reply
from tomlib.llm._loop import run_sync
from tomlib.llm._request import Message, SampleKey, Sampling, build_request, request_key
from tomlib.llm._store import ResponseStore, recorded_exchange

M = TypeVar("M", bound=BaseModel)
_cache: dict[tuple[str, str | None], ChatModel] = {}


def get_model(name: str, mode: Mode | None = None) -> ChatModel:
    """A shared ChatModel per (name, mode) for this process."""
    key = (name, mode)
    if key not in _cache:
        _cache[key] = ChatModel.from_name(name, mode=mode)
    return _cache[key]


def _resolve(model: ChatModel | str) -> ChatModel:
    return model if isinstance(model, ChatModel) else get_model(model)


async def complete(model: ChatModel | str, messages: Sequence[Message], **kwargs: Any) -> Completion:
    """``await complete("local", messages, sample_key=...)``: see :meth:`ChatModel.complete`."""
    return await _resolve(model).complete(messages, **kwargs)


async def complete_json(
    model: ChatModel | str, messages: Sequence[Message], schema: type[M], **kwargs: Any
) -> JsonCompletion[M]:
    """Structured output validated by a pydantic schema: see :meth:`ChatModel.complete_json`."""
    return await _resolve(model).complete_json(messages, schema, **kwargs)


__all__ = [
    "ENV_ESTIMATES",
    "ENV_LEDGER",
    "ENV_MAX_TOKENS",
    "ENV_MAX_USD",
    "ENV_SPEND_TO_BUDGET",
    "MODES",
    "Budget",
    "BudgetExceeded",
    "BudgetLedger",
    "CallRecord",
    "ChatModel",
    "Completion",
    "ConfigError",
    "EstimateOverBudget",
    "JsonCompletion",
    "LLMError",
    "LocalModelError",
    "Message",
    "MissingKeyError",
    "Mode",
    "ModelCallFailed",
    "ModelConfig",
    "ReplayMiss",
    "ResponseStore",
    "SampleKey",
    "Sampling",
    "StoreError",
    "StructuredOutputError",
    "TranscriptError",
    "Usage",
    "announce_estimate",
    "build_request",
    "complete",
    "complete_json",
    "default_ledger",
    "describe_source",
    "extract_json",
    "get_model",
    "get_model_config",
    "load_models",
    "models_file",
    "parse_reply",
    "read_ledger",
    "read_models",
    "recorded_exchange",
    "request_key",
    "run_sync",
    "source_of",
]
