"""Structured output: JSON extraction, schema validation, bounded re-asking, every attempt observed."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel

from tests.conftest import user
from tomlib.llm import CallRecord, StructuredOutputError, extract_json

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


class Belief(BaseModel):
    tom_order: int
    predicted_partner_action: Literal["A", "B"]
    action: Literal["A", "B"]


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}',
        'Sure! Here it is:\n```json\n{"a": 1}\n```\nHope that helps.',
        '```\n{"a": 1}\n```',
        'My answer is {"a": 1} as requested.',
        'Thinking {not json} ... final: {"a": 1}',
    ],
)
def test_extract_json_finds_the_object(text: str) -> None:
    assert extract_json(text) == {"a": 1}


def test_extract_json_without_json_is_a_clear_error() -> None:
    with pytest.raises(StructuredOutputError, match="no JSON object"):
        extract_json("I would choose A, probably.")


def test_reasks_with_the_validation_error_until_valid(make_model, server) -> None:  # type: ignore[no-untyped-def]
    server.script(
        "I pick A.",
        '{"tom_order": 1, "predicted_partner_action": "C", "action": "A"}',
        'Here:\n```json\n{"tom_order": 1, "predicted_partner_action": "A", "action": "B"}\n```',
    )
    m = make_model()
    seen: list[CallRecord] = []
    m.add_observer(seen.append)
    out = m.complete_json_sync(user("play"), Belief, sample_key="t")
    assert out.value == Belief(tom_order=1, predicted_partner_action="A", action="B")
    assert len(out.attempts) == 3 and len(seen) == 3
    assert [r.attempt for r in seen] == [1, 2, 3]
    assert "no JSON object" in (seen[0].error or "")
    assert "predicted_partner_action" in (seen[1].error or "")
    assert seen[2].error is None and seen[2].parsed["action"] == "B"
    # the re-ask carries the validation error back to the model
    second = server.requests[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": "I pick A."}
    assert "no JSON object" in second[-1]["content"]
    third = server.requests[2]["messages"]
    assert "predicted_partner_action" in third[-1]["content"]


def test_gives_up_after_max_attempts_naming_the_call_site(make_model, server) -> None:  # type: ignore[no-untyped-def]
    server.script("nope", "still nope")
    with pytest.raises(StructuredOutputError, match=r"no valid Belief in 2 attempt\(s\) at call site 'exp/c1'"):
        make_model().complete_json_sync(
            user("play"), Belief, sample_key={"experiment": "exp", "condition": "c1"}, max_attempts=2
        )


def test_schema_goes_into_prompt_and_response_format(make_model, server) -> None:  # type: ignore[no-untyped-def]
    server.script('{"tom_order": 0, "predicted_partner_action": "A", "action": "B"}')
    make_model(json_mode="json_schema").complete_json_sync(user("play"), Belief, sample_key="t")
    req = server.requests[0]
    assert req["response_format"]["type"] == "json_schema"
    assert req["response_format"]["json_schema"]["name"] == "Belief"
    assert req["messages"][0]["role"] == "system" and "JSON Schema" in req["messages"][0]["content"]


def test_json_object_schema_mode_for_llama_cpp(make_model, server) -> None:  # type: ignore[no-untyped-def]
    server.script('{"tom_order": 0, "predicted_partner_action": "A", "action": "B"}')
    make_model(json_mode="json_object_schema").complete_json_sync(user("play"), Belief, sample_key="t")
    fmt = server.requests[0]["response_format"]
    assert fmt["type"] == "json_object" and fmt["schema"]["properties"]["action"]["enum"] == ["A", "B"]


def test_replayed_structured_call_is_exact(make_model, server) -> None:  # type: ignore[no-untyped-def]
    server.script("bad", '{"tom_order": 2, "predicted_partner_action": "B", "action": "A"}')
    first = make_model().complete_json_sync(user("play"), Belief, sample_key="t", temperature=0.7)
    again = make_model(mode="replay").complete_json_sync(user("play"), Belief, sample_key="t", temperature=0.7)
    assert again.value == first.value and len(again.attempts) == 2
    assert all(a.cache_hit for a in again.attempts)
