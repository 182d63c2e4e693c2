"""The datasets' keys, found from a prompt: which code task or multiple-choice question a request is about."""

from __future__ import annotations

from functools import cache

from tomlib.datasets import MMLU_SUBJECTS, ChoiceQuestion, CodeTask, aqua_rat, humaneval, mbpp, mmlu


@cache
def _code_tasks() -> tuple[CodeTask, ...]:
    return (*humaneval(), *mbpp("test"), *mbpp("validation"), *mbpp("prompt"), *mbpp("train"))


@cache
def _questions() -> tuple[ChoiceQuestion, ...]:
    out = [*aqua_rat("test"), *aqua_rat("dev")]
    for subject in MMLU_SUBJECTS:
        out += [*mmlu(subject, "test"), *mmlu(subject, "dev")]
    return tuple(out)


def code_task_in(text: str) -> CodeTask | None:
    """The HumanEval or MBPP task whose statement the prompt quotes (the longest match: MBPP texts can nest)."""
    hits = [t for t in _code_tasks() if t.prompt and t.prompt in text]
    return max(hits, key=lambda t: len(t.prompt)) if hits else None


def question_in(text: str) -> ChoiceQuestion | None:
    """The AQuA-RAT or MMLU question whose statement (question and options) the prompt quotes."""
    hits = [q for q in _questions() if q.statement() in text]
    return max(hits, key=lambda q: len(q.statement())) if hits else None


def failing_program(task: CodeTask) -> str:
    """A plausible wrong answer: the reference, with every top-level function then redefined to return None (it
    parses and runs, and fails any test that expects a value)."""
    names = [
        line[4:].split("(", 1)[0].strip()
        for line in task.reference.splitlines()
        if line.startswith("def ") and "(" in line
    ]
    stubs = "\n\n".join(f"def {n}(*args, **kwargs):\n    return None" for n in dict.fromkeys(names))
    return f"{task.reference.rstrip()}\n\n\n{stubs}\n"
