"""Multiple-choice extraction on hand-written messy replies, and the Wilson interval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tomlib.choices import accuracy, extract_choice

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

DATA = json.loads((Path(__file__).parent / "data" / "messy_choice_replies.json").read_text())
DEFAULT = [("A", "12"), ("B", "15"), ("C", "18"), ("D", "21"), ("E", "None of these")]


@pytest.mark.parametrize("case", DATA["cases"], ids=lambda c: c["reply"][:40] or "(empty)")
def test_messy_reply(case: dict) -> None:  # type: ignore[type-arg]
    options = [tuple(o) for o in case.get("options", DEFAULT)]
    got = extract_choice(case["reply"], options)
    assert got.letter == case["expected"], got.how


def test_wilson_interval() -> None:
    a = accuracy(8, 10)
    assert a.value == 0.8 and 0.49 < a.low < 0.5 and 0.94 < a.high < 0.95  # Wilson 95%: [0.490, 0.943]
    assert accuracy(0, 5).low == 0.0 and accuracy(5, 5).high == 1.0
    assert accuracy(0, 0).value != accuracy(0, 0).value  # NaN
