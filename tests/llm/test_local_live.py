"""Live calls through the bundled local model (SmolLM2-135M GGUF via llama_cpp.server): the zero-key path.

`./reproduce.sh test` installs the `local` extra and sets TOMLIB_REQUIRE_LOCAL=1, so on CI these tests
cannot be skipped: a missing model is a failure there, not a skip.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.llm._local import need_local
from tomlib.llm import ChatModel, ResponseStore, SampleKey
from tomlib.quickstart import KLevelReply, k_level_messages

pytestmark = pytest.mark.live_local


@pytest.fixture(autouse=True)
def _local_installed() -> None:
    need_local()


KEY = SampleKey(
    experiment="live_test", condition="tom1", episode=0, step=0, agent="player1", purpose="belief_and_action"
)


def test_live_structured_call_then_exact_replay_after_a_server_restart(tmp_path: Path) -> None:
    store = ResponseStore(tmp_path / "s.sqlite")
    first = ChatModel.from_name("local", mode="auto", store=store)
    try:
        live = first.complete_json_sync(k_level_messages(1, "A", "A"), KLevelReply, sample_key=KEY, max_tokens=150)
        assert not live.attempts[0].cache_hit and first.usage.live_calls >= 1
        assert live.completion.prompt_tokens > 0 and live.completion.completion_tokens > 0
        assert live.value.action in ("A", "B")
        assert first._server is not None
        port1 = first._server.port
    finally:
        first.close()

    second = ChatModel.from_name("local", mode="auto", store=store)
    try:
        # a different call starts a fresh server on a new free port ...
        second.complete_sync(
            k_level_messages(0, "B", "A"), sample_key=KEY.model_copy(update={"step": 1}), max_tokens=20
        )
        assert second._server is not None and second.usage.live_calls == 1
        port2 = second._server.port
        # ... and the first call still replays exactly: the port is not part of the key
        again = second.complete_json_sync(k_level_messages(1, "A", "A"), KLevelReply, sample_key=KEY, max_tokens=150)
        assert all(a.cache_hit for a in again.attempts) and second.usage.live_calls == 1
        assert again.value == live.value
    finally:
        second.close()
    assert port1 and port2
    replay = ChatModel.from_name("local", mode="replay", store=store)
    assert (
        replay.complete_json_sync(k_level_messages(1, "A", "A"), KLevelReply, sample_key=KEY, max_tokens=150).value
        == live.value
    )
    assert replay._server is None  # replay never starts the server
