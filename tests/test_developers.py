"""DEVELOPERS.md stays a short, true page: at most 150 lines, nothing dated, and every test, module and section it
names exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tomlib.paths import project_root

pytestmark = pytest.mark.tier("fast")

ROOT = project_root()
DATED = re.compile(
    r"\b(19|20)\d\d\b|\b(today|yesterday|recently|no longer|used to|as of)\b|\bissue \d+|#\d+\b", re.IGNORECASE
)


def named_tests(text: str) -> list[tuple[str, str]]:
    """The ``tests/<file>.py::<test>`` references of a text."""
    return re.findall(r"(tests/[\w/]+\.py)::(\w+)", text)


def defines(path: Path, name: str) -> bool:
    """Whether the file defines a test function of that name (at module level or in a class)."""
    tree = ast.parse(path.read_text())
    return any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name for n in ast.walk(tree))


def test_the_developers_notes_are_short_undated_and_name_real_tests() -> None:
    text = (ROOT / "DEVELOPERS.md").read_text()
    assert len(text.splitlines()) <= 150
    assert not [m.group(0) for m in DATED.finditer(text)], "a date or history in DEVELOPERS.md: git keeps history"
    table = text.split("## Invariants and the tests that hold them", 1)[1].split("\n## ", 1)[0]
    named = named_tests(table)
    assert len(named) >= 20 and len(named) == table.count("\n| ") - 2  # one test a row, under the header and its rule
    missing = [f"{f}::{t}" for f, t in named if not (ROOT / f).is_file() or not defines(ROOT / f, t)]
    assert not missing, missing
    paths = re.findall(r"`((?:tomlib|tests|scripts|docs|data)/[\w/.-]+\.(?:py|md|json))`", text)
    assert paths and not [p for p in paths if not (ROOT / p).exists()]
    # tomlib.llm._store's ReplayMiss fix names this section
    assert "\n## Recording the offline transcripts\n" in text


def test_the_check_catches_a_test_that_does_not_exist(tmp_path: Path) -> None:
    module = tmp_path / "test_x.py"
    module.write_text("def test_here():\n    pass\n\nclass TestY:\n    def test_in_class(self):\n        pass\n")
    assert defines(module, "test_here") and defines(module, "test_in_class") and not defines(module, "test_gone")
    assert named_tests("| a | `tests/x/test_y.py::test_z` |") == [("tests/x/test_y.py", "test_z")]
    assert DATED.search("measured in 2024") and DATED.search("since issue 56") and not DATED.search("on 2 cores")
