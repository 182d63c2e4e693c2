"""The command line: cache maintenance and model listing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import user
from tomlib.__main__ import main
from tomlib.llm import ResponseStore

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def test_cache_stats_export_import_prune(
    make_model, server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    m = make_model()
    for i in range(3):
        m.complete_sync(user(f"q{i}"), sample_key={"experiment": "demo", "step": i})
    m.complete_sync(user("other"), sample_key="elsewhere")
    assert main(["cache", "stats"]) == 0
    stats = capsys.readouterr().out
    assert "(4 responses)" in stats and "demo" in stats and "elsewhere" in stats

    out = tmp_path / "demo.jsonl.gz"
    assert main(["cache", "export", "--experiment", "demo", "--out", str(out)]) == 0
    assert "exported 3 responses" in capsys.readouterr().out

    other = tmp_path / "other.sqlite"
    assert main(["cache", "import", str(out), "--store", str(other)]) == 0
    assert "imported 3 new responses" in capsys.readouterr().out
    assert len(ResponseStore(other)) == 3

    assert main(["cache", "prune"]) == 2  # refuses to delete everything
    assert "refusing" in capsys.readouterr().err
    assert main(["cache", "prune", "--experiment", "demo"]) == 0
    assert "pruned 3" in capsys.readouterr().out


def test_export_keeps_only_what_a_run_used(
    make_model, server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    from tomlib.trace import RunLog

    m = make_model()
    for i in range(3):  # an older recording: three calls, of which a changed notebook now makes one
        m.complete_sync(user(f"q{i}"), sample_key={"experiment": "demo", "step": i})
    with RunLog("demo", results=str(tmp_path / "run")) as log:
        log.observe(m)
        m.complete_sync(user("q1"), sample_key={"experiment": "demo", "step": 1})  # a replay of the old one
        m.complete_sync(user("new"), sample_key={"experiment": "demo", "step": 9})  # and a new call
    out = tmp_path / "demo.jsonl.gz"
    args = ["cache", "export", "--experiment", "demo", "--out", str(out), "--used-in", str(tmp_path / "run")]
    assert main(args) == 0
    assert "exported 2 responses" in capsys.readouterr().out
    assert main(["cache", "export", "--experiment", "demo", "--out", str(out)]) == 0
    assert "exported 4 responses" in capsys.readouterr().out


def test_models_lists_names_and_key_variables(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "local" in out and "no key" in out and "$OPENAI_API_KEY" in out
