"""The benchmarks, read from ``data/datasets/`` (copied from ``../shared/datasets/``; provenance and licenses in
``data/datasets/SOURCES.md``): HumanEval (164 tasks, MIT), MBPP (974 tasks, CC BY 4.0), AQuA-RAT (254 test and 254 dev
questions, Apache-2.0) and five MMLU subjects (test and dev, MIT).

MBPP's README splits task ids 11-510 as *test*, 1-10 as few-shot *prompt*, 511-600 *validation* and 601-974
*train*. tomlib evaluates on the test split (500 tasks), the one the field reports; ``"sanitized"`` is the
hand-checked subset of 427 tasks (257 of them in the test range).
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from functools import cache
from typing import Literal

from tomlib.errors import UsageError
from tomlib.paths import data_dir

MbppSplit = Literal["test", "prompt", "validation", "train", "all", "sanitized"]
MBPP_RANGES = {"prompt": (1, 10), "test": (11, 510), "validation": (511, 600), "train": (601, 974), "all": (1, 974)}


@dataclass(frozen=True)
class CodeTask:
    """One programming task: what the model is asked, a reference solution, and the tests that judge code."""

    task_id: str
    benchmark: str
    prompt: str
    reference: str
    tests: str
    entry_point: str = ""
    examples: tuple[str, ...] = ()

    def program(self, solution: str) -> str:
        """The code run before the tests. HumanEval: a bare function body gets the prompt (imports and signature)
        in front, as the canonical solutions do; a whole function gets the prompt's import lines."""
        if self.benchmark != "humaneval":
            return solution
        if not solution.lstrip().startswith(("def ", "import ", "from ", "@", "class ")):
            return self.prompt + solution
        imports = [ln for ln in self.prompt.splitlines() if ln.startswith(("import ", "from "))]
        return "\n".join([*imports, solution]) if imports else solution


@cache
def humaneval() -> tuple[CodeTask, ...]:
    """All 164 HumanEval tasks; ``reference`` is the prompt plus the canonical solution."""
    path = data_dir() / "datasets" / "humaneval" / "HumanEval.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return tuple(
        CodeTask(
            task_id=r["task_id"],
            benchmark="humaneval",
            prompt=r["prompt"],
            reference=r["prompt"] + r["canonical_solution"],
            tests=r["test"] + f"\n\ncheck({r['entry_point']})\n",
            entry_point=r["entry_point"],
        )
        for r in rows
    )


def _mbpp_task(task_id: int, prompt: str, code: str, setup: list[str], asserts: list[str]) -> CodeTask:
    return CodeTask(
        task_id=f"MBPP/{task_id}",
        benchmark="mbpp",
        prompt=prompt,
        reference=code,
        tests="\n".join([*setup, *asserts]) + "\n",
        examples=tuple(asserts),
    )


@cache
def mbpp(split: MbppSplit = "test") -> tuple[CodeTask, ...]:
    """MBPP tasks of one split (see the module docstring); the tests are the task's asserts."""
    folder = data_dir() / "datasets" / "mbpp"
    if split == "sanitized":
        rows = json.loads((folder / "sanitized-mbpp.json").read_text(encoding="utf-8"))
        return tuple(
            _mbpp_task(r["task_id"], r["prompt"], r["code"], r.get("test_imports", []), r["test_list"]) for r in rows
        )
    if split not in MBPP_RANGES:
        raise UsageError(f"Unknown MBPP split {split!r}; use one of {', '.join([*MBPP_RANGES, 'sanitized'])}.")
    lo, hi = MBPP_RANGES[split]
    with open(folder / "mbpp.jsonl", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return tuple(
        _mbpp_task(r["task_id"], r["text"], r["code"], [r.get("test_setup_code", "")], r["test_list"])
        for r in rows
        if lo <= r["task_id"] <= hi
    )


@dataclass(frozen=True)
class ChoiceQuestion:
    """One multiple-choice question: options as (letter, text) pairs and the correct letter."""

    qid: str
    benchmark: str
    subject: str
    question: str
    options: tuple[tuple[str, str], ...]
    answer: str
    rationale: str = ""

    @property
    def letters(self) -> tuple[str, ...]:
        return tuple(letter for letter, _ in self.options)

    def statement(self) -> str:
        """The question with its options, one per line (``A) …``)."""
        return self.question + "\n" + "\n".join(f"{letter}) {text}" for letter, text in self.options)


MMLU_SUBJECTS = ("us_foreign_policy", "human_sexuality", "international_law", "abstract_algebra", "college_chemistry")
"""Table 9's four subjects as the ICLR draft's F.2 lists them, plus college_chemistry, which its text names instead
of human_sexuality in one place."""


@cache
def aqua_rat(split: Literal["test", "dev"] = "test") -> tuple[ChoiceQuestion, ...]:
    """AQuA-RAT (254 questions per split); options arrive as ``"A)125"``."""
    if split not in ("test", "dev"):
        raise UsageError(f"Unknown AQuA-RAT split {split!r}; use 'test' or 'dev'.")
    path = data_dir() / "datasets" / "aqua_rat" / f"{split}.json"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = []
    for i, r in enumerate(rows):
        options = tuple((o.split(")", 1)[0].strip(), o.split(")", 1)[1].strip()) for o in r["options"])
        out.append(
            ChoiceQuestion(
                f"aqua_rat/{split}/{i}",
                "aqua_rat",
                "",
                r["question"],
                options,
                r["correct"].strip(),
                r.get("rationale", ""),
            )
        )
    return tuple(out)


@cache
def mmlu(subject: str, split: Literal["test", "dev"] = "test") -> tuple[ChoiceQuestion, ...]:
    """One MMLU subject's questions (CSV: question, A, B, C, D, answer letter; no header)."""
    import csv

    if subject not in MMLU_SUBJECTS:
        raise UsageError(f"Unknown MMLU subject {subject!r}; the copied subjects are {', '.join(MMLU_SUBJECTS)}.")
    if split not in ("test", "dev"):
        raise UsageError(f"Unknown MMLU split {split!r}; use 'test' or 'dev'.")
    path = data_dir() / "datasets" / "mmlu" / split / f"{subject}_{split}.csv"
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    return tuple(
        ChoiceQuestion(
            f"mmlu/{subject}/{split}/{i}", "mmlu", subject, r[0], tuple(zip("ABCD", r[1:5], strict=True)), r[5].strip()
        )
        for i, r in enumerate(rows)
    )
