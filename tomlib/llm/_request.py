"""What a model call asks for, and the content-addressed key of its response.

The key covers everything that can change a reply and nothing that cannot (inspect_ai's rule): model
identity, messages, sampling parameters, response format and the caller's ``sample_key``. Retries,
timeouts, concurrency, the local server's port and API keys never enter it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

Message = Mapping[str, Any]
_SURROGATE = re.compile("[\ud800-\udfff]")  # unpaired surrogates cannot be sent or stored as UTF-8


class SampleKey(BaseModel):
    """Names the call site so repeated episodes at temperature > 0 get their own samples."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    experiment: str = Field(description="Experiment or notebook, e.g. `adaptive_tom.table1`.")
    condition: str = Field(default="", description="Condition within it, e.g. `matrix_m1:tom1_vs_tom2`.")
    episode: int | None = Field(default=None, description="Repetition index.")
    step: int | None = Field(default=None, description="Environment step or round.")
    agent: str = Field(default="", description="Which agent asks, e.g. `player1`.")
    purpose: str = Field(default="", description="Why, e.g. `predict_partner`, `decide`, `translate_beliefs`.")
    extra: tuple[tuple[str, str], ...] = Field(default=(), description="Further (name, value) pairs.")

    def label(self) -> str:
        """A compact, human-readable form used in messages and store listings."""
        parts = [self.experiment, self.condition]
        parts += [
            f"ep{self.episode}" if self.episode is not None else "",
            f"t{self.step}" if self.step is not None else "",
        ]
        parts += [self.agent, self.purpose, *(f"{k}={v}" for k, v in self.extra)]
        return "/".join(p for p in parts if p)


def sample_key_from_json(data: Mapping[str, Any]) -> SampleKey:
    """Rebuild a SampleKey from its JSON dump (lists back to tuples)."""
    fields = dict(data)
    fields["extra"] = tuple(tuple(x) for x in fields.get("extra", ()))
    return SampleKey(**fields)


def as_sample_key(value: SampleKey | Mapping[str, Any] | str) -> SampleKey:
    """Accept a SampleKey, a mapping of its fields, or a bare string naming the experiment."""
    if isinstance(value, SampleKey):
        return value
    if isinstance(value, str):
        return SampleKey(experiment=value)
    fields = dict(value)
    extra = fields.pop("extra", ())
    if isinstance(extra, Mapping):
        extra = tuple(sorted((str(k), str(v)) for k, v in extra.items()))
    return SampleKey(**fields, extra=tuple(extra))


class Sampling(BaseModel):
    """Sampling parameters sent with a call (all of them are part of the key)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    max_tokens: int = Field(default=512, ge=1)
    seed: int | None = None
    stop: tuple[str, ...] | None = None

    def api_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``chat.completions.create``."""
        out: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        if self.top_p is not None:
            out["top_p"] = self.top_p
        if self.seed is not None:
            out["seed"] = self.seed
        if self.stop:
            out["stop"] = list(self.stop)
        return out


def normalize_messages(messages: Sequence[Message]) -> list[dict[str, str]]:
    """Check and copy chat messages into plain ``{"role", "content"}`` dicts."""
    out = []
    for i, m in enumerate(messages):
        role, content = m.get("role"), m.get("content")
        if role not in {"system", "user", "assistant"} or not isinstance(content, str):
            raise ValueError(
                f"message {i} must be {{'role': 'system'|'user'|'assistant', 'content': str}}, got {dict(m)!r}"
            )
        out.append({"role": role, "content": _SURROGATE.sub("\ufffd", content)})
    if not out:
        raise ValueError("a model call needs at least one message")
    return out


def build_request(
    identity: Mapping[str, str],
    messages: Sequence[Message],
    sampling: Sampling,
    response_format: Mapping[str, Any] | None,
    sample_key: SampleKey,
) -> dict[str, Any]:
    """The full key material of one call; stored beside the response so a transcript can be re-keyed."""
    return {
        "model": dict(identity),
        "messages": normalize_messages(messages),
        "sampling": sampling.model_dump(mode="json"),
        "response_format": dict(response_format) if response_format else None,
        "sample_key": sample_key.model_dump(mode="json"),
    }


def canonical_json(obj: Any) -> str:
    """Deterministic JSON: sorted keys, no whitespace, unicode kept."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_key(request: Mapping[str, Any]) -> str:
    """sha256 of the canonical request."""
    return hashlib.sha256(canonical_json(request).encode()).hexdigest()


def _first_difference(old: str, new: str, width: int = 40) -> str:
    i = next((j for j, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new)))
    lo = max(0, i - 10)
    return f"at character {i + 1}: recorded {old[lo : i + width]!r}, now {new[lo : i + width]!r}"


def describe_change(recorded: Mapping[str, Any], now: Mapping[str, Any]) -> str:
    """Which part of a request changed since a recording of the same call site: model, messages, sampling or
    response format, with the first difference."""
    if recorded["model"] != now["model"]:
        return f"the model identity changed (recorded {recorded['model']}, now {now['model']})"
    old_m, new_m = recorded["messages"], now["messages"]
    if old_m != new_m:
        if len(old_m) != len(new_m):
            return f"the messages changed: {len(old_m)} recorded, {len(new_m)} now"
        i = next(j for j, (a, b) in enumerate(zip(old_m, new_m, strict=True)) if a != b)
        a, b = old_m[i], new_m[i]
        if a["role"] != b["role"]:
            return f"the messages changed: message {i} was {a['role']}, now {b['role']}"
        return (
            f"the messages changed: message {i} ({b['role']}) differs {_first_difference(a['content'], b['content'])}"
        )
    if recorded["sampling"] != now["sampling"]:
        keys = sorted(
            k
            for k in {*recorded["sampling"], *now["sampling"]}
            if recorded["sampling"].get(k) != now["sampling"].get(k)
        )
        diffs = ", ".join(
            f"{k}: recorded {recorded['sampling'].get(k)!r}, now {now['sampling'].get(k)!r}" for k in keys
        )
        return f"the sampling parameters changed ({diffs})"
    if recorded["response_format"] != now["response_format"]:
        return "the response format (JSON schema or json_mode) changed"
    return "the request is the same but its key differs (a transcript re-keyed by another tomlib version?)"
