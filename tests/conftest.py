"""Shared fixtures: every test gets its own response store, results directory and transcripts folder; the tiers
(``tests/_tiers.py``); and the offline series, executed once per run of the suite for every test that reads it."""

from __future__ import annotations

import fcntl
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests._tiers import _fast_stays_fast, pytest_collection_modifyitems, pytest_runtest_setup
from tomlib.llm import ChatModel, ModelConfig, ResponseStore
from tomlib.paths import project_root
from tomlib.testing import FakeOpenAIServer
from tomlib.workers import ENV_WORKERS, per_notebook

# As in the runner's own processes (tomlib.runner._papermill.skip_iri_grammars): jsonschema, under nbformat, would
# compile its IRI grammars at import, seconds a test process, for a format check no test and no notebook makes.
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

if (_suite_workers := int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)) > 1 and ENV_WORKERS not in os.environ:
    # pytest-xdist runs one test process a core: they share the cores as the runner's notebooks of one run do, so a
    # formal table plays in its test's process, not in worker processes of its own that would contend for the same
    # cores. Tests of the worker processes set their count themselves.
    os.environ.update(per_notebook(_suite_workers))

__all__ = ["_fast_stays_fast", "pytest_collection_modifyitems", "pytest_runtest_setup"]  # hooks pytest finds here

PLANTED = "planted-secret-4f9e1b7c2d8a"
"""A key-shaped value in the executed series' environment (its kernels inherit it): no output may show it."""


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


def made_once(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], dict[str, Any]]) -> dict[str, Any]:
    """``make(folder)``'s record, made once per run of the suite: by the first worker to ask, while the others wait
    (pytest-xdist runs one process a core); the others read the record it wrote. ``make`` must return JSON."""
    base = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # shared by the workers of this run
    folder, record = base / name, base / f"{name}.json"
    with open(base / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not record.exists():
            folder.mkdir(exist_ok=True)
            record.write_text(json.dumps(make(folder)))
    return {**json.loads(record.read_text()), "folder": folder}


@pytest.fixture(scope="session")
def offline_series(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The offline series at its default sizes, as ``./reproduce.sh`` runs it (the committed transcripts replayed,
    pages exported with the widget scripts when ``./reproduce.sh`` fetched them), then REPORT: executed once per run
    of the suite and read by every test that needs an executed series.

    Returns ``{"results": folder, "outcomes": [{"name", "status"}...], "summary": text}``. Readers must not change
    the folder."""

    def run(root: Path) -> dict[str, Any]:
        from tomlib.report import build_report
        from tomlib.runner import run_notebooks, summarize

        webdeps = Path(os.environ.get("TOMLIB_WEBDEPS", project_root() / ".tomlib" / "webdeps"))
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("TOMLIB_RESULTS", str(root / "results"))
            mp.setenv("TOMLIB_STORE", str(root / "store" / "responses.sqlite"))
            mp.delenv("TOMLIB_TRANSCRIPTS", raising=False)  # the committed transcripts, as a user replays them
            mp.delenv("TOMLIB_LLM_MODE", raising=False)
            mp.setenv("SOME_SERVICE_API_KEY", PLANTED)
            if (webdeps / "html-manager" / "dist" / "embed-amd.js").exists():
                mp.setenv("TOMLIB_WEBDEPS", str(webdeps))
            out = run_notebooks("default", progress=False, jobs=2)
            if all(o.status == "ok" for o in out):
                build_report()
        return {"outcomes": [{"name": o.name, "status": o.status} for o in out], "summary": summarize(out)}

    made = made_once(tmp_path_factory, "offline-series", run)
    return {**made, "results": made["folder"] / "results"}
