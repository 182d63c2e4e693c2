"""The committed quickstart transcript still answers every call the quickstart makes (no prompt drift)."""

from __future__ import annotations

import asyncio

import pytest

from tomlib.llm import ChatModel
from tomlib.paths import data_dir
from tomlib.quickstart import ask_k_level, k_level_messages

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


@pytest.mark.parametrize("tom_order", [0, 1, 2])
def test_transcript_replays_each_tom_order_offline(tom_order: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOMLIB_TRANSCRIPTS", str(data_dir() / "transcripts"))
    chat = ChatModel.from_name("local", mode="replay")
    reply = asyncio.run(ask_k_level(chat, tom_order=tom_order))
    assert reply.completion.cache_hit and reply.value.action in ("A", "B")


def test_tom_order_outside_the_papers_range_is_refused() -> None:
    with pytest.raises(ValueError, match="0, 1 or 2"):
        k_level_messages(3, "A", "A")
