"""The main job needs no compiler (issue 54): confseq, which builds from C++ source, is asked for only by a run that
stops when decided, and its absence is one line naming the fix before any notebook runs."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tomlib.__main__ import main
from tomlib.claims import NeedsConfseq, require_confseq

pytestmark = pytest.mark.tier("fast")

ROOT = Path(__file__).parents[2]


def test_without_confseq_a_run_that_stops_when_decided_is_one_line_before_any_notebook(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "confseq", None)  # import confseq.boundaries fails as if it were not built
    monkeypatch.setitem(sys.modules, "confseq.boundaries", None)
    with pytest.raises(NeedsConfseq, match=r"\./reproduce\.sh --stop-when-decided once"):
        require_confseq()
    results = tmp_path / "results"
    assert main(["run", "08", "--profile", "sim", "--stop-when-decided", "--results", str(results)]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "confseq" in err and "Traceback" not in err, err
    assert not (results / "notebooks").exists()  # nothing ran


def test_reproduce_sh_builds_confseq_only_for_the_tests_and_a_run_that_stops_when_decided() -> None:
    script = (ROOT / "reproduce.sh").read_text()
    ensure_deps = re.search(r"\nensure_deps\(\) \{\n(.*?)\n\}\n", script, re.S)
    assert ensure_deps and "ensure_confseq" not in ensure_deps.group(1)
    calls = [line.strip() for line in script.splitlines() if re.search(r"\bensure_confseq\b(?!\(\))", line)]
    calls = [c for c in calls if not c.startswith("#")]
    assert calls == ["ensure_confseq", 'if [ "$arg" = --stop-when-decided ]; then ensure_confseq; fi'], calls
