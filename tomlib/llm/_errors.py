"""Errors a user can cause or meet when talking to models; each message names the cause and the fix."""

from __future__ import annotations

from tomlib.errors import TomlibError


class LLMError(TomlibError, RuntimeError):
    """Base class for every model-access error raised by tomlib (messages are redacted)."""


class ConfigError(LLMError):
    """A model name or model configuration that cannot be used."""


class MissingKeyError(ConfigError):
    """The environment variable holding a model's API key is not set."""


class ReplayMiss(LLMError):
    """Replay mode found no recorded response for a call site."""


class BudgetExceeded(LLMError):
    """The token or money budget is spent; new live calls are refused."""


class EstimateOverBudget(BudgetExceeded):
    """A notebook's estimated live spend exceeds what is left of the budget; refused before any call is sent."""


class ModelCallFailed(LLMError):
    """A live call failed for good (non-retryable error, or retries exhausted)."""


class StructuredOutputError(LLMError):
    """A reply did not contain JSON matching the requested schema."""


class LocalModelError(LLMError):
    """The bundled local model could not be found or its server would not start."""


class StoreError(LLMError):
    """The response store or a transcript file cannot be read or written."""


class TranscriptError(StoreError, ValueError):
    """A transcript file (gzip JSONL) that is damaged or not a tomlib transcript."""
