"""What every reasoning team shares: an agent's answer to a multiple-choice question (free text, then the letter it
commits to, :mod:`tomlib.choices`), ToM-k guidance in the prompt, and plurality voting."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tomlib.choices import extract_choice
from tomlib.datasets import ChoiceQuestion
from tomlib.recording import record

TOM_GUIDE = {
    0: "",
    1: "Before answering, think about your teammates: what will they most likely answer, and why? Write it on a line "
    "starting with 'Belief:'.",
    2: "Before answering, think about what your teammates expect *you* to answer and how they will react to it. Write "
    "it on a line starting with 'Belief:'.",
}


@dataclass(frozen=True)
class Answer:
    agent: str
    letter: str | None
    text: str
    belief: str
    how: str  # how the letter was found (tomlib.choices)


def answer_messages(
    question: ChoiceQuestion, agent: str, role: str, tom: int, peers: Mapping[str, str] | None = None
) -> list[dict[str, str]]:
    """One agent's turn: the question, (optionally) the peers' last answers, its ToM guidance, the answer format."""
    system = f"You are {agent}, {role}, working with a team on a multiple-choice question."
    if tom:
        system += f" You have level-{tom} Theory of Mind."
    parts = [question.statement()]
    if peers:
        parts.append("Your teammates' latest answers:\n" + "\n".join(f"- {n}: {t}" for n, t in peers.items()))
    if tom:
        parts.append(TOM_GUIDE[min(tom, 2)])
    letters = "/".join(question.letters)
    parts.append(f"Reason briefly (at most 120 words), then end with a line 'Answer: X' where X is one of {letters}.")
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


def read_answer(agent: str, text: str, question: ChoiceQuestion) -> Answer:
    choice = extract_choice(text, question.options)
    belief = next(
        (ln.split(":", 1)[1].strip() for ln in text.splitlines() if ln.strip().lower().startswith("belief:")), ""
    )
    return Answer(agent, choice.letter, text, belief, choice.how)


def plurality(answers: Sequence[Answer], order: Sequence[str] | None = None) -> str | None:
    """The most common letter; ties go to the letter given first in ``order`` (default: the answers' order)."""
    letters = [a.letter for a in answers if a.letter]
    if not letters:
        return None
    counts = Counter(letters)
    best = max(counts.values())
    rank = {a.agent: i for i, a in enumerate(answers)} if order is None else {n: i for i, n in enumerate(order)}
    tied = [a for a in sorted(answers, key=lambda a: rank.get(a.agent, 0)) if a.letter and counts[a.letter] == best]
    return tied[0].letter


def record_start(condition: str, seed: int, method: str, qid: str, statement: str, truth: str) -> None:
    """The episode's first state, for the explorer: which team, which question, its key."""
    state = {"game": "reasoning", "method": method, "question": qid, "statement": statement, "truth": truth}
    record("env_state", state, condition=condition, episode=seed, step=0)
