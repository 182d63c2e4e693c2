"""Getting validated JSON out of free-form model replies, in time linear in the reply and bounded in size."""

from __future__ import annotations

import functools
import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from tomlib.errors import describe_validation
from tomlib.llm._errors import StructuredOutputError

M = TypeVar("M", bound=BaseModel)

MAX_REPLY_CHARS = 1_000_000
"""Longest reply searched for JSON; a chat reply this long is a runaway generation, not an answer."""
MAX_JSON_STARTS = 64
"""How many ``{``/``[`` positions are tried as the start of embedded JSON: each try is one linear scan, so the
search is linear in the reply (a reply of a million ``{`` would otherwise be quadratic)."""

_LANG = re.compile(r"(?:json|JSON)?[ \t]*\n?")
_OPEN = re.compile(r"[{\[]")
_DECODER = json.JSONDecoder()


def _loads(text: str) -> Any:
    """``json.loads`` that treats too-deep nesting like any other invalid JSON."""
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text, 0) from None


def extract_json(text: str) -> Any:
    """The first JSON object or array in ``text``: whole reply, a code fence, or embedded in prose."""
    if len(text) > MAX_REPLY_CHARS:
        raise StructuredOutputError(
            f"the reply is {len(text):,} characters long, more than the {MAX_REPLY_CHARS:,} searched for JSON "
            "(a runaway generation); lower max_tokens or fix the prompt"
        )
    stripped = text.strip()
    try:
        return _loads(stripped)
    except json.JSONDecodeError:
        pass
    parts = text.split("```")  # fenced blocks are the odd parts that have a closing fence after them
    for block in parts[1:-1:2][:MAX_JSON_STARTS]:
        try:
            return _loads(block[_LANG.match(block).end() :].strip())  # type: ignore[union-attr]
        except json.JSONDecodeError:
            continue
    for n, match in enumerate(_OPEN.finditer(text)):
        if n >= MAX_JSON_STARTS:
            raise StructuredOutputError(f"the reply contains no JSON object in its first {MAX_JSON_STARTS} brackets")
        try:
            value, _ = _DECODER.raw_decode(text, match.start())
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(value, dict | list):
            return value
    raise StructuredOutputError("the reply contains no JSON object")


def parse_reply(text: str, schema: type[M]) -> M:
    """Extract and validate; raise StructuredOutputError saying what was wrong (never anything else)."""
    data = extract_json(text)
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        raise StructuredOutputError(f"the JSON does not match {schema.__name__}: {describe_validation(exc)}") from None
    except RecursionError:
        raise StructuredOutputError(f"the JSON is nested too deeply to validate as {schema.__name__}") from None


@functools.lru_cache(maxsize=256)
def _schema_json(schema: type[BaseModel]) -> str:
    """The JSON Schema of a reply model, as text: pydantic builds it in about a millisecond, and every structured
    call asks for it twice (an A-ToM step of the simulated model makes six calls)."""
    return json.dumps(schema.model_json_schema())


def response_format_for(schema: type[BaseModel], json_mode: str) -> dict[str, Any] | None:
    """The ``response_format`` a model of the given ``json_mode`` understands."""
    js = json.loads(_schema_json(schema))  # a fresh copy: the caller's request may be changed
    if json_mode == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": schema.__name__, "schema": js, "strict": False}}
    if json_mode == "json_object":
        return {"type": "json_object"}
    if json_mode == "json_object_schema":
        return {"type": "json_object", "schema": js}
    return None


@functools.lru_cache(maxsize=256)
def schema_instruction(schema: type[BaseModel]) -> str:
    """A system message telling the model the exact shape to reply in (made once per reply model)."""
    js = json.dumps(json.loads(_schema_json(schema)), sort_keys=True)
    return f"Reply with one JSON object and nothing else. It must match this JSON Schema: {js}"


def reask_message(error: str) -> str:
    """The follow-up sent after an unusable reply."""
    return (
        f"Your previous reply could not be used: {error}. "
        "Reply again with only the JSON object, following the schema exactly."
    )
