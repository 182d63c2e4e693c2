"""Getting validated JSON out of free-form model replies."""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from tomlib.llm._errors import StructuredOutputError

M = TypeVar("M", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.S)
_DECODER = json.JSONDecoder()


def extract_json(text: str) -> Any:
    """The first JSON object or array in ``text``: whole reply, a code fence, or embedded in prose."""
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        pass
    for block in _FENCE.findall(text):
        try:
            return json.loads(block.strip())
        except json.JSONDecodeError:
            continue
    for i, ch in enumerate(text):
        if ch in "{[":
            try:
                value, _ = _DECODER.raw_decode(text, i)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict | list):
                return value
    raise StructuredOutputError("the reply contains no JSON object")


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:8]:
        loc = ".".join(str(x) for x in err["loc"]) or "(root)"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


def parse_reply(text: str, schema: type[M]) -> M:
    """Extract and validate; raise StructuredOutputError saying what was wrong."""
    data = extract_json(text)
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        raise StructuredOutputError(f"the JSON does not match {schema.__name__}: {_describe(exc)}") from None


def response_format_for(schema: type[BaseModel], json_mode: str) -> dict[str, Any] | None:
    """The ``response_format`` a model of the given ``json_mode`` understands."""
    js = schema.model_json_schema()
    if json_mode == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": schema.__name__, "schema": js, "strict": False}}
    if json_mode == "json_object":
        return {"type": "json_object"}
    if json_mode == "json_object_schema":
        return {"type": "json_object", "schema": js}
    return None


def schema_instruction(schema: type[BaseModel]) -> str:
    """A system message telling the model the exact shape to reply in."""
    js = json.dumps(schema.model_json_schema(), sort_keys=True)
    return f"Reply with one JSON object and nothing else. It must match this JSON Schema: {js}"


def reask_message(error: str) -> str:
    """The follow-up sent after an unusable reply."""
    return (
        f"Your previous reply could not be used: {error}. "
        "Reply again with only the JSON object, following the schema exactly."
    )
