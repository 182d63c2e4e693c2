"""``benchmarks/results.py``: RESULTS.md is generated, each section with its date, commit and loop time, and a run of
some benchmarks keeps the sections of the others."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.tier("fast")
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_results", ROOT / "benchmarks" / "results.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_results", mod)  # its dataclass looks its module up
    spec.loader.exec_module(mod)
    ok, bad = tmp_path / "ok.py", tmp_path / "bad.py"
    ok.write_text("print('speedup 2.00x over the baseline, same run')\n")
    bad.write_text("print('half way'); raise SystemExit(3)\n")
    monkeypatch.setattr(mod, "OUT", tmp_path / "RESULTS.md")
    monkeypatch.setattr(mod, "LOOP_ADDITIONS", 1000)
    benches = (mod.Bench("ok", str(ok), (), "a ratio"), mod.Bench("bad", str(bad), (), "one that fails"))
    monkeypatch.setattr(mod, "BENCHES", benches)
    return mod


def run(mod: ModuleType, monkeypatch: pytest.MonkeyPatch, *argv: str) -> str:
    monkeypatch.setattr(sys, "argv", ["results.py", *argv])
    mod.main()
    return mod.OUT.read_text()


def test_a_section_holds_the_output_with_its_date_commit_and_loop_time(
    results: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = run(results, monkeypatch, "ok")
    assert text.startswith("# Benchmark results") and "results.py" in text
    section = results.sections(text)["ok"]
    assert "speedup 2.00x over the baseline, same run" in section
    row = section.split("|---|---|---|---|\n")[1].splitlines()[0]
    when, commit, loops, wall = (c.strip() for c in row.strip("|").split("|"))
    assert when[:4].isdigit() and commit and loops.count(" s") == 2 and wall.endswith(" s")
    assert "bad" not in results.sections(text)


def test_a_later_run_keeps_the_others_and_marks_a_failure(results: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    first = results.sections(run(results, monkeypatch, "ok"))["ok"]
    text = run(results, monkeypatch, "bad")
    assert results.sections(text)["ok"] == first  # not run again: its date, commit and figures stay
    assert "It failed (exit 3)" in results.sections(text)["bad"] and "half way" in text


def test_an_unknown_name_is_refused_with_the_names(results: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SystemExit, match="no benchmark named okk; the names are ok, bad"):
        run(results, monkeypatch, "okk")
