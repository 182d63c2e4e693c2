"""Prompts and reply schemas of the iterative-programming team (coalition paper §3, §6.3, Appendices A and C).

Our wording, following the appendices' structure:

- The project manager (PM) with ToM order k answers one JSON object with a block per level (Appendix C):
  k = 0 gives ``ToM_level0`` (belief "no belief", action); k ≥ 1 gives ``ToM_level1`` … ``ToM_levelk``, each with
  a belief about the engineers' actions, an explanation, and an action, an instruction beginning
  "The Engineer should …". Level 2's belief is about how the engineers react to the level-1 instruction.
- An engineer with ToM order m writes code plus a one-line description of what it did (its *action*, which is what
  the PM's belief is scored against); with m ≥ 1 it first states what it expects its teammates (m = 1) or the PM's
  expectation of itself (m = 2) to be.
- The PM's self-evaluation follows Appendix A: per engineer a score in [-1, 1], an explanation in ten words or
  fewer, and a justification of 30-50 words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache

from pydantic import BaseModel, Field, create_model

from tomlib.datasets import CodeTask

BELIEF_CHARS = 400
ACTION_CHARS = 600


class Level0(BaseModel):
    """Appendix C's 0-ToM block: no belief, just the instruction."""

    belief: str = Field(max_length=BELIEF_CHARS, description='Always "no belief" at level 0.')
    action: str = Field(max_length=ACTION_CHARS, description='The instruction, beginning "The Engineer should".')


class Level(BaseModel):
    """Appendix C's block for level ≥ 1: belief y_k, explanation, action x_k."""

    belief: str = Field(max_length=BELIEF_CHARS, description="What you infer the engineers will do.")
    explanation: str = Field(max_length=BELIEF_CHARS, description="Why you infer that and choose this instruction.")
    action: str = Field(max_length=ACTION_CHARS, description='The instruction, beginning "The Engineer should".')


@cache
def pm_schema(k: int) -> type[BaseModel]:
    """The PM's reply for ToM order ``k``: ``ToM_level0`` for k = 0, else ``ToM_level1`` … ``ToM_levelk``."""
    if k == 0:
        return create_model("PMReplyToM0", ToM_level0=(Level0, ...))
    fields = {f"ToM_level{i}": (Level, ...) for i in range(1, k + 1)}
    return create_model(f"PMReplyToM{k}", **fields)  # type: ignore[call-overload]


class Alignment(BaseModel):
    """Appendix A's per-engineer self-evaluation."""

    score: float = Field(ge=-1.0, le=1.0, description="Belief alignment score from -1 to 1.")
    explanation: str = Field(max_length=160, description="Why, in ten words or fewer.")
    justification: str = Field(max_length=600, description="Justification in 30-50 words.")


@cache
def alignment_schema(engineers: tuple[str, ...]) -> type[BaseModel]:
    """``{"Engineer1": {score, explanation, justification}, …}`` for the engineers being evaluated."""
    return create_model("AlignmentScores", **{name: (Alignment, ...) for name in engineers})  # type: ignore[call-overload]


def task_statement(task: CodeTask) -> str:
    """The task as every agent sees it: HumanEval's signature and docstring; MBPP's text and its asserts."""
    if task.benchmark == "humaneval":
        return f"Complete this Python function (keep its name and signature):\n\n{task.prompt}"
    asserts = "\n".join(task.examples)
    return f"{task.prompt}\nYour code must pass these tests:\n{asserts}"


_PM_SYSTEM = (
    "You are the project manager of a team of {n} engineers ({names}) solving one programming task together over "
    "several rounds. You have level-{k} Theory of Mind: you can reason recursively about what the engineers will "
    "do. You never write code yourself; you instruct the engineers."
)

_LEVEL_GUIDE = {
    0: 'Level 0: you do not model the engineers. Set "belief" to "no belief" and give your instruction as "action".',
    1: "Level 1: infer what the engineers will do with this task (belief), explain briefly, then give the "
    "instruction that fits that belief (action).",
    2: "Level 2: assume the engineers have received your level-1 instruction. Infer how they will act on it "
    "(belief), explain briefly, then give the instruction you will actually send (action).",
}


def pm_messages(task: CodeTask, k: int, engineers: Sequence[str], history: str) -> list[dict[str, str]]:
    """The PM's request for round r: the task, what happened so far, and the per-level structure of Appendix C."""
    levels = [0] if k == 0 else list(range(1, k + 1))
    guide = "\n".join(_LEVEL_GUIDE[min(level, 2)] for level in levels)
    keys = ", ".join(f"ToM_level{level}" for level in levels)
    user = (
        f"Task:\n{task_statement(task)}\n\n"
        f"{history or 'This is the first round; the engineers have not acted yet.'}\n\n"
        f"Think at each level of your Theory of Mind:\n{guide}\n"
        f'Every "action" is one instruction to the engineers and begins with "The Engineer should". The '
        f"instruction of your highest level is the one sent. Answer with a JSON object with the key(s) {keys}."
    )
    system = _PM_SYSTEM.format(n=len(engineers), names=", ".join(engineers), k=k)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


_ENG_GUIDE = {
    0: "",
    1: "Before coding, think about your teammates: given the instruction, what will they most likely implement? "
    "Write that on a line starting with 'Belief:' and make your solution fit the team's work.",
    2: "Before coding, think about what the project manager expects you to do after this instruction, and what "
    "your teammates expect of you. Write that on a line starting with 'Belief:' and act on it.",
}


def engineer_messages(
    task: CodeTask,
    name: str,
    order: int,
    instruction: str,
    previous_code: str | None,
    teammates: Mapping[str, str],
) -> list[dict[str, str]]:
    """An engineer's request: task, the PM's instruction, its own last code and (ToM ≥ 1) teammates' last actions."""
    system = f"You are {name}, a Python engineer in a team led by a project manager. " + (
        f"You have level-{order} Theory of Mind." if order else "You follow the project manager's instruction."
    )
    parts = [f"Task:\n{task_statement(task)}", f"The project manager's instruction:\n{instruction}"]
    if previous_code:
        parts.append(
            f"Your code from the last round (improve it if the instruction asks for changes):\n{previous_code}"
        )
    if order and teammates:
        parts.append("Your teammates' last actions:\n" + "\n".join(f"- {n}: {d}" for n, d in teammates.items()))
    if order:
        parts.append(_ENG_GUIDE[min(order, 2)])
    parts.append(
        "Reply with one line starting with 'Action:' that says in one sentence what you implemented, then the "
        "complete solution in a single ```python code block."
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


def evaluation_messages(belief: str, actions: Mapping[str, str]) -> list[dict[str, str]]:
    """Appendix A: score how well the PM's belief model matched each engineer's action."""
    shown = "\n".join(f'"{n}": "{a}"' for n, a in actions.items())
    user = (
        "Score how well your belief about the engineers matched what each of them actually did.\n\n"
        f"The engineers' actions:\n{shown}\n\nYour belief model:\n{belief}\n\n"
        "For each engineer give a belief alignment score between -1 (the opposite of what you expected) and 1 "
        "(exactly what you expected), an explanation in ten words or fewer, and a justification of 30-50 words that "
        "refers to the engineer's action and your belief. Answer with a JSON object keyed by engineer name."
    )
    return [
        {"role": "system", "content": "You are the project manager evaluating your own beliefs about your team."},
        {"role": "user", "content": user},
    ]


def teammate_evaluation_messages(
    name: str,
    belief: str,
    actions: Mapping[str, str],
    *,
    believed: str = "Your belief about your teammates' arguments",
    did: str = "What they prepared",
) -> list[dict[str, str]]:
    """Appendix A among peers (debaters, reasoning agents): score the belief about each teammate against its action."""
    shown = "\n".join(f'"{n}": "{a}"' for n, a in actions.items())
    user = (
        f"{believed}:\n{belief}\n\n{did}:\n{shown}\n\n"
        "For each teammate give a belief alignment score between -1 (the opposite of what you expected) and 1 (exactly "
        "what you expected), an explanation in ten words or fewer, and a justification of 30-50 words. Answer with a "
        "JSON object keyed by teammate name."
    )
    return [
        {"role": "system", "content": f"You are {name}, evaluating your own beliefs about your teammates."},
        {"role": "user", "content": user},
    ]
