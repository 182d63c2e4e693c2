"""Shared fixtures: every test gets its own response store, results directory and transcripts folder."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tomlib.llm import ChatModel, ModelConfig, ResponseStore
from tomlib.testing import FakeOpenAIServer


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the store, results and transcripts at temp dirs so tests never touch the checkout's state."""
    monkeypatch.setenv("TOMLIB_STORE", str(tmp_path / "store" / "responses.sqlite"))
    monkeypatch.setenv("TOMLIB_RESULTS", str(tmp_path / "results"))
    (tmp_path / "transcripts").mkdir()
    monkeypatch.setenv("TOMLIB_TRANSCRIPTS", str(tmp_path / "transcripts"))
    monkeypatch.delenv("TOMLIB_LLM_MODE", raising=False)
    if (played := sys.modules.get("tomlib.experiments.adaptive_tom._played")) is not None:
        played.forget()  # no test replays the formal conditions another test played
    if (memo := sys.modules.get("tomlib.claims._memo")) is not None:
        memo.forget()  # nor reads the claims another test judged
    return tmp_path


@pytest.fixture
def stand_in_renderer(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in for the widget renderer ``./reproduce.sh`` fetches (``TOMLIB_WEBDEPS``): ``tomlib view`` copies it
    beside the page, which no test here opens in a browser."""
    dist = isolated / "webdeps" / "html-manager" / "dist"
    dist.mkdir(parents=True)
    (dist / "embed.js").write_text("// the renderer\n")
    monkeypatch.setenv("TOMLIB_WEBDEPS", str(isolated / "webdeps"))
    return isolated / "webdeps"


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


def fake_config(srv: FakeOpenAIServer, **overrides: Any) -> ModelConfig:
    """A config for the fake server with fast backoff so retry tests stay quick."""
    fields: dict[str, Any] = {
        "name": "fake",
        "kind": "openai",
        "model": "fake-model-1",
        "base_url": srv.base_url,
        "endpoint_id": "fake-endpoint",
        "backoff_base_s": 0.01,
        "backoff_max_s": 0.05,
        "max_retries": 3,
        "timeout_s": 5.0,
    }
    fields.update(overrides)
    return ModelConfig(**fields)


@pytest.fixture
def make_model(server: FakeOpenAIServer, tmp_path: Path) -> Iterator[Any]:
    made: list[ChatModel] = []

    def factory(*, mode: str = "auto", store: ResponseStore | None = None, **overrides: Any) -> ChatModel:
        m = ChatModel(fake_config(server, **overrides), mode=mode, store=store)  # type: ignore[arg-type]
        made.append(m)
        return m

    yield factory
    for m in made:
        m.close()


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]
