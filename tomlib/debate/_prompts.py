"""Prompts and reply schemas of the coalition paper's debate (§6.4, Appendix D); our wording, the appendix's structure.

A debater with ToM order k answers one JSON object per level, as the PM does in Appendix C: level 0 has no belief and
an argument; level 1 infers what the teammates will argue (belief), explains, and chooses an argument that fits
(action); level 2 infers how the teammates react to its level-1 argument. The judge gives one verdict per round.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Literal

from pydantic import BaseModel, Field, create_model

TOPIC = "Should the Death Penalty be abolished?"
SIDES = ("affirmative", "negative")


class ArgumentLevel0(BaseModel):
    belief: str = Field(max_length=300, description='Always "no belief" at level 0.')
    action: str = Field(max_length=900, description="Your argument for this round.")


class ArgumentLevel(BaseModel):
    belief: str = Field(max_length=400, description="What you infer your teammates will argue.")
    explanation: str = Field(max_length=400, description="Why, and why your argument fits.")
    action: str = Field(max_length=900, description="Your argument for this round.")


@cache
def debater_schema(k: int) -> type[BaseModel]:
    """``ToM_level0`` for k = 0, else ``ToM_level1`` … ``ToM_levelk``."""
    if k == 0:
        return create_model("DebaterToM0", ToM_level0=(ArgumentLevel0, ...))
    return create_model(f"DebaterToM{k}", **{f"ToM_level{i}": (ArgumentLevel, ...) for i in range(1, k + 1)})  # type: ignore[call-overload]


class Verdict(BaseModel):
    winner: Literal["affirmative", "negative", "draw"] = Field(description="Who argued better in this round.")
    reason: str = Field(max_length=400, description="One or two sentences.")


_LEVELS = {
    0: 'Level 0: do not model your teammates. Set "belief" to "no belief" and give your argument as "action".',
    1: "Level 1: infer what your teammates will argue this round (belief), explain briefly, then choose an argument "
    "that works with theirs (action).",
    2: "Level 2: assume your teammates have heard your level-1 argument. Infer how they will adjust (belief), explain "
    "briefly, then give the argument you will actually make (action).",
}


def debater_messages(
    name: str, side: str, k: int, teammates: Sequence[str], transcript: str, r: int, rounds: int
) -> list[dict[str, str]]:
    """A debater prepares its argument for round ``r``; it speaks only if its side picks it."""
    levels = [0] if k == 0 else list(range(1, k + 1))
    keys = ", ".join(f"ToM_level{level}" for level in levels)
    system = (
        f'You are {name}, a debater on the {side} side of the motion "{TOPIC}". Your teammates are '
        f"{', '.join(teammates)}. Your side wants to win the debate together. You have level-{k} Theory of Mind."
    )
    guide = "\n".join(_LEVELS[min(level, 2)] for level in levels)
    user = (
        f"Round {r} of {rounds}. The debate so far:\n{transcript or '(nothing yet: this is the opening round)'}\n\n"
        f"Prepare your argument for this round, in at most 120 words.\n{guide}\n"
        f"Answer with a JSON object with the key(s) {keys}."
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def judge_messages(transcript: str, r: int) -> list[dict[str, str]]:
    """The judge's verdict on round ``r`` alone (the transcript gives the context)."""
    user = (
        f'The debate so far on the motion "{TOPIC}":\n{transcript}\n\nJudge round {r} only: which side argued better '
        "in it, the affirmative or the negative? Say draw if neither did. Answer with a JSON object with the keys "
        "winner and reason."
    )
    return [
        {
            "role": "system",
            "content": "You are an impartial debate judge. You judge the quality of the arguments, "
            "not your own view of the motion.",
        },
        {"role": "user", "content": user},
    ]
