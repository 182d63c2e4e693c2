"""The ChatEval-style team against the fake server: one-by-one turns see everything said before; plurality."""

from __future__ import annotations

import asyncio
import re

import pytest

from tomlib.datasets import ChoiceQuestion
from tomlib.reasoning import run_chateval

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

Q = ChoiceQuestion("t/2", "aqua_rat", "", "3 x 3 = ?", (("A", "6"), ("B", "9"), ("C", "12")), "B")


def responder(request: dict) -> str:  # type: ignore[type-arg]
    system, user = request["messages"][0]["content"], request["messages"][-1]["content"]
    me = re.search(r"You are the ([\w ]+),", system).group(1)  # type: ignore[union-attr]
    if me == "Critic":
        return "Multiplication, not addition.\nAnswer: B"
    # the public member starts with A, then follows the critic once it has read them
    return "I agree with the Critic.\nAnswer: B" if "[Critic]" in user else "3 + 3.\nAnswer: A"


def test_turns_see_the_discussion_and_the_last_answers_vote(make_model, server) -> None:  # type: ignore[no-untyped-def]
    server.responder = responder
    res = asyncio.run(run_chateval(make_model(), Q, turns=2))
    assert [(m.agent, m.letter) for m in res.messages] == [
        ("General Public", "A"),
        ("Critic", "B"),
        ("General Public", "B"),
        ("Critic", "B"),
    ]
    assert res.answer == "B" and res.correct and len(server.requests) == 4
    assert "[General Public] 3 + 3." in server.requests[1]["messages"][-1]["content"]


def test_a_tie_goes_to_the_first_speaker(make_model, server) -> None:  # type: ignore[no-untyped-def]
    server.responder = lambda r: "Answer: A" if "General Public" in r["messages"][0]["content"] else "Answer: C"
    res = asyncio.run(run_chateval(make_model(), Q, turns=1, tom=2))
    assert res.answer == "A" and "level-2 Theory of Mind" in server.requests[0]["messages"][0]["content"]
