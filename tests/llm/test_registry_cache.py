"""The model registry is parsed once while it is unchanged, and read again as soon as it changes (an edit in place,
an atomic replace, a removal): a table's rows each ask for their model's source, and parsing took 60 ms a row."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tomlib.llm import ConfigError, _config
from tomlib.llm._config import get_model_config, read_models, source_of

pytestmark = pytest.mark.tier("fast")

ENTRY = "  {name}:\n    kind: openai\n    model: {model}\n    base_url: http://127.0.0.1:9/v1\n"


def registry(path: Path, **models: str) -> Path:
    path.write_text("models:\n" + "".join(ENTRY.format(name=n, model=m) for n, m in models.items()))
    return path


def test_an_unchanged_registry_is_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = registry(tmp_path / "models.yaml", a="model-a")
    parsed: list[Path] = []
    real = _config._parse_models
    monkeypatch.setattr(_config, "_parse_models", lambda p: parsed.append(p) or real(p))
    for _ in range(50):
        assert get_model_config("a", path).model == "model-a"
    assert len(parsed) == 1
    read_models(path)[0].clear()  # a caller's dict is its own
    assert "a" in read_models(path)[0] and len(parsed) == 1


def test_a_changed_registry_is_read_again(tmp_path: Path) -> None:
    path = registry(tmp_path / "models.yaml", a="model-a")
    assert get_model_config("a", path).model == "model-a"
    registry(path, a="model-b")  # same size, written in place
    os.utime(path, ns=(1, 1))  # even where two writes fall in one tick of the clock, the stamp differs
    assert get_model_config("a", path).model == "model-b"
    replaced = registry(tmp_path / "new.yaml", a="model-c", b="model-d")
    replaced.replace(path)  # an atomic replace: another file
    assert get_model_config("b", path).model == "model-d"
    path.unlink()
    with pytest.raises(ConfigError, match="not found"):
        read_models(path)


def test_a_sim_entry_added_later_labels_its_rows_sim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    configs = tmp_path / "configs"
    configs.mkdir()
    monkeypatch.setenv("TOMLIB_CONFIGS", str(configs))
    path = registry(configs / "models.yaml", a="model-a")
    assert source_of("s") == "llm:s"  # unknown yet
    with open(path, "a") as fh:
        fh.write("  s:\n    kind: sim\n")
    assert source_of("s") == "sim:s"
