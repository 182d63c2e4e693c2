"""The coalition-matching reasoning team against the fake server: who answers together, and the team's vote."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from tomlib.datasets import ChoiceQuestion
from tomlib.reasoning import Answer, plurality, run_coalition_team

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

Q = ChoiceQuestion("t/0", "aqua_rat", "", "14 - 2.5 - 2.5 = ?", (("A", "9"), ("B", "8.5"), ("C", "10")), "A")


def responder(request: dict) -> str:  # type: ignore[type-arg]
    system, user = request["messages"][0]["content"], request["messages"][-1]["content"]
    if "evaluating your own beliefs" in system:
        names = re.findall(r'"(ToM\d)": "', user)
        return json.dumps(
            {n: {"score": -0.6 if n == "ToM0" else 0.8, "explanation": "e", "justification": "j"} for n in names}
        )
    me = re.search(r"You are (ToM\d),", system).group(1)  # type: ignore[union-attr]
    if me == "ToM0":
        return "11.5 km/hr is the speed in still water, so C.\nAnswer: C"
    return "Belief: my teammate will subtract the current twice.\n14 - 2.5 = 11.5, minus 2.5 is 9.\nAnswer: A"


def test_the_matched_pair_answers_together(make_model, server) -> None:  # type: ignore[no-untyped-def]
    server.responder = responder
    chat = make_model(json_mode="json_object")
    res = asyncio.run(run_coalition_team(chat, Q, rounds=2))
    assert [r.team for r in res.rounds] == [["ToM1", "ToM2"], ["ToM1", "ToM2"]]
    assert res.rounds[0].answers["ToM0"].letter == "C" and res.answer == "A" and res.correct
    assert res.rounds[0].scores["ToM1"] == {"ToM0": -0.6, "ToM2": 0.8}
    # per round: three answers and two self-evaluations (the ToM-0 agent has no beliefs)
    assert len(server.requests) == 2 * (3 + 2)
    # in round 2 an agent sees only its coalition's answers: ToM1 sees ToM2's, ToM0 (outside) sees none
    round2 = [r for r in server.requests if "latest answers" in r["messages"][-1]["content"]]
    assert all("ToM0:" not in r["messages"][-1]["content"] for r in round2) and len(round2) == 2


def test_plurality_breaks_ties_by_order() -> None:
    a = [Answer("x", "B", "", "", ""), Answer("y", "C", "", "", ""), Answer("z", None, "", "", "")]
    assert plurality(a) == "B" and plurality(a, order=["y", "x"]) == "C"
    assert plurality([Answer("x", None, "", "", "")]) is None
