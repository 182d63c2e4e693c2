"""The dataset loaders: counts from data/datasets/SOURCES.md, option parsing, split checks, HumanEval programs."""

from __future__ import annotations

import pytest

from tomlib.datasets import MMLU_SUBJECTS, aqua_rat, humaneval, mbpp, mmlu
from tomlib.errors import UsageError

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def test_counts_match_the_sources_file() -> None:
    assert len(humaneval()) == 164
    assert len(mbpp("test")) == 500 and len(mbpp("all")) == 974 and len(mbpp("sanitized")) == 427
    assert len(aqua_rat("test")) == 254 and len(aqua_rat("dev")) == 254
    sizes = {s: len(mmlu(s)) for s in MMLU_SUBJECTS}
    assert sizes == {
        "us_foreign_policy": 100,
        "human_sexuality": 131,
        "international_law": 121,
        "abstract_algebra": 100,
        "college_chemistry": 100,
    }
    assert all(len(mmlu(s, "dev")) == 5 for s in MMLU_SUBJECTS)


def test_options_and_answers_are_parsed() -> None:
    q = aqua_rat()[0]
    assert q.letters == ("A", "B", "C", "D", "E") and q.options[0] == ("A", "5(√3 + 1)") and q.answer == "A"
    assert all(q.answer in q.letters for q in aqua_rat())
    m = mmlu("abstract_algebra")[0]
    assert m.options == (("A", "0"), ("B", "4"), ("C", "2"), ("D", "6")) and m.answer == "B"
    assert all(q.answer in "ABCD" for s in MMLU_SUBJECTS for q in mmlu(s))
    assert "B) 4" in m.statement()


def test_unknown_names_say_what_exists() -> None:
    with pytest.raises(UsageError, match="college_chemistry"):
        mmlu("college_physics")
    with pytest.raises(UsageError, match="test"):
        aqua_rat("train")  # type: ignore[arg-type]


def test_a_whole_humaneval_function_gets_the_prompt_imports() -> None:
    task = humaneval()[0]  # its prompt imports List from typing
    program = task.program("def has_close_elements(numbers: List[float], threshold: float) -> bool:\n    return 0\n")
    assert program.startswith("from typing import List\ndef has_close_elements")
    assert task.program("    return False\n").startswith(task.prompt)
