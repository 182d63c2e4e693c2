"""The response-store key covers what can change a reply, and nothing that cannot."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tomlib.llm import ModelConfig, SampleKey, Sampling, build_request, request_key

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

MSGS = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "A or B?"}]
SK = SampleKey(experiment="adaptive_tom.table1", condition="m1:tom1_vs_tom2", episode=3, step=7, agent="p1")


def openai_cfg(**kw: object) -> ModelConfig:
    base = {"name": "m", "kind": "openai", "model": "gpt-4o-mini", "base_url": "https://api.openai.com/v1"}
    return ModelConfig(**{**base, **kw})  # type: ignore[arg-type]


DEFAULT_SAMPLING = Sampling()


def key(cfg: ModelConfig | None = None, msgs=MSGS, sampling=DEFAULT_SAMPLING, fmt=None, sk=SK) -> str:  # type: ignore[no-untyped-def]
    return request_key(build_request((cfg or openai_cfg()).identity(), msgs, sampling, fmt, sk))


def test_changing_model_identity_changes_key() -> None:
    assert key(openai_cfg(model="gpt-4o")) != key()
    assert key(openai_cfg(base_url="https://openrouter.ai/api/v1")) != key()
    assert key(openai_cfg(endpoint_id="my-vllm")) != key()


def test_changing_messages_changes_key() -> None:
    assert key(msgs=[*MSGS[:1], {"role": "user", "content": "B or A?"}]) != key()
    assert key(msgs=MSGS[1:]) != key()
    assert key(msgs=[MSGS[0], {"role": "assistant", "content": "A or B?"}]) != key()


def test_changing_sampling_or_format_changes_key() -> None:
    assert key(sampling=Sampling(temperature=0.9)) != key()
    assert key(sampling=Sampling(max_tokens=64)) != key()
    assert key(sampling=Sampling(seed=1)) != key()
    assert key(fmt={"type": "json_object"}) != key()


def test_changing_sample_key_changes_key() -> None:
    for change in [{"episode": 4}, {"step": 8}, {"agent": "p2"}, {"condition": "x"}, {"purpose": "decide"}]:
        assert key(sk=SK.model_copy(update=change)) != key(), change


def test_retries_timeouts_concurrency_and_names_do_not_change_key() -> None:
    same = openai_cfg(timeout_s=3, max_retries=0, concurrency=1, backoff_base_s=9, name="other-name", description="x")
    assert key(same) == key()
    assert key(openai_cfg(base_url="https://api.openai.com/v1/")) == key()  # trailing slash is not identity


def test_local_identity_has_no_port_or_url() -> None:
    a = ModelConfig(name="local", kind="local", n_ctx=2048)
    b = ModelConfig(name="renamed", kind="local", n_ctx=4096, n_threads=1, concurrency=1)
    assert a.identity() == b.identity()
    assert "127.0.0.1" not in str(a.identity())
    assert ModelConfig(name="x", kind="local", model_file="/m/other.gguf").identity() != a.identity()


@given(t1=st.floats(0, 2), t2=st.floats(0, 2), e1=st.integers(0, 50), e2=st.integers(0, 50), s=st.text(max_size=20))
def test_key_is_injective_on_temperature_and_episode(t1: float, t2: float, e1: int, e2: int, s: str) -> None:
    k1 = key(
        sampling=Sampling(temperature=t1),
        sk=SK.model_copy(update={"episode": e1}),
        msgs=[{"role": "user", "content": s}],
    )
    k2 = key(
        sampling=Sampling(temperature=t2),
        sk=SK.model_copy(update={"episode": e2}),
        msgs=[{"role": "user", "content": s}],
    )
    assert (k1 == k2) == (t1 == t2 and e1 == e2)


def test_bad_messages_are_rejected_with_a_clear_error() -> None:
    with pytest.raises(ValueError, match="role"):
        key(msgs=[{"role": "robot", "content": "hi"}])
    with pytest.raises(ValueError, match="at least one message"):
        key(msgs=[])
