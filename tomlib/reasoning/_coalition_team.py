"""The coalition paper's "Ours (+matching)" reasoning team (§6.5, Appendix E): agents with ToM orders 0, 1 and 2
answer over a few rounds; the ToM-1 and ToM-2 agents score their belief about each teammate against the teammate's
answer (Appendix A; in Appendix E, the "belief value" an agent gives a peer's answer), and Algorithm 1 (ICLR
coalitions, minimum size 2) decides who answers together. An agent sees only its coalition's last answers; the team's
answer is the coalition's plurality vote, and the last round's answer counts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tomlib.coalition import Algorithm1, make_instance
from tomlib.datasets import ChoiceQuestion
from tomlib.llm import ChatModel, SampleKey, StructuredOutputError
from tomlib.programming import alignment_schema, teammate_evaluation_messages
from tomlib.reasoning._common import Answer, answer_messages, plurality, read_answer, record_start
from tomlib.recording import record_all

ORDERS = (0, 1, 2)
ROLE = "a careful problem solver"


@dataclass
class TeamRound:
    round: int
    answers: dict[str, Answer]
    scores: dict[str, dict[str, float]]
    team: list[str]
    structure: str
    team_answer: str | None

    def events(self, truth: str) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
        """The round's events after matching: every agent's answer, then the coalition's answer against the key."""
        for a in self.answers.values():
            yield "action", {"action": a.letter, "text": a.text, "belief": a.belief, "how": a.how}, {"agent": a.agent}
        score = {
            "metric": "correct",
            "value": float(self.team_answer == truth),
            "team_answer": self.team_answer,
            "truth": truth,
            "team": self.team,
        }
        yield "score", score, {}


@dataclass
class TeamResult:
    question: ChoiceQuestion
    seed: int
    rounds: list[TeamRound] = field(default_factory=list)

    @property
    def answer(self) -> str | None:
        return self.rounds[-1].team_answer if self.rounds else None

    @property
    def correct(self) -> bool:
        return self.answer == self.question.answer


async def run_coalition_team(
    chat: ChatModel,
    question: ChoiceQuestion,
    *,
    rounds: int = 3,
    seed: int = 0,
    epsilon: float = 0.25,
    experiment: str = "coalition.reasoning",
    temperature: float = 0.7,
    max_tokens: int = 400,
    selection: str | None = None,
) -> TeamResult:
    """One question; ``rounds`` of answers, self-evaluations and matching (ICLR §6.5, Appendix E). ``selection``:
    which stable outcome is played (:data:`tomlib.coalition.SELECTIONS`; None: the ICLR draft's default, named in the
    condition otherwise). Every round is recorded to the run log in force."""
    names = [f"ToM{k}" for k in ORDERS]
    condition = f"ours_matching:{question.qid}" + (f":{selection}" if selection else "")
    base = make_instance(np.zeros((3, 3)), names=names, no_beliefs=["ToM0"], epsilon=epsilon, min_size=2)
    algo = Algorithm1(base, mechanism="iclr", selection=selection, condition=condition, episode=seed)
    result = TeamResult(question, seed)
    record_start(condition, seed, "ours_matching", question.qid, question.statement(), question.answer)
    team = list(names)
    prev: dict[str, Answer] = {}

    def key(r: int, agent: str, purpose: str) -> SampleKey:
        return SampleKey(experiment=experiment, condition=condition, episode=seed, step=r, agent=agent, purpose=purpose)

    async def ask(r: int, agent: str, k: int, team: list[str], prev: dict[str, Answer]) -> Answer:
        peers = {n: prev[n].text[-400:] for n in team if n != agent and n in prev} if agent in team else {}
        reply = await chat.complete(
            answer_messages(question, agent, ROLE, k, peers),
            sample_key=key(r, agent, "answer"),
            temperature=temperature,
            max_tokens=max_tokens,
        )
        return read_answer(agent, reply.content, question)

    for r in range(1, rounds + 1):
        got_all = await asyncio.gather(*(ask(r, n, k, team, prev) for n, k in zip(names, ORDERS, strict=True)))
        answers = dict(zip(names, got_all, strict=True))
        scores: dict[str, dict[str, float]] = {}
        matrix = np.zeros((3, 3))
        for i, name in enumerate(names):
            if ORDERS[i] == 0:
                continue
            scores[name] = await _self_evaluation(chat, name, answers, key(r, name, "evaluate"))
            for j, other in enumerate(names):
                if other != name:
                    matrix[i, j] = scores[name][other]
        rec = algo.step(matrix)
        team = [names[i] for i in rec.team] or list(names)
        done = TeamRound(r, answers, scores, team, rec.structure, plurality([answers[n] for n in team]))
        record_all(done.events(question.answer), condition=condition, episode=seed, step=r)
        result.rounds.append(done)
        prev = answers
    return result


async def _self_evaluation(
    chat: ChatModel, name: str, answers: dict[str, Answer], sample_key: SampleKey
) -> dict[str, float]:
    """Agent ``name``'s scores of how well its belief about each teammate matched the teammate's answer (Appendix A;
    Appendix E's "belief value"); no valid reply: 0 for each, untrusted."""
    others = {n: a.text for n, a in answers.items() if n != name}
    try:
        got = await chat.complete_json(
            teammate_evaluation_messages(
                name,
                answers[name].belief or "(no belief stated)",
                {n: t[-300:] for n, t in others.items()},
                believed="What you believed your teammates would answer",
                did="What they answered",
            ),
            alignment_schema(tuple(others)),
            sample_key=sample_key,
            temperature=0.2,
            max_tokens=600,
        )
    except StructuredOutputError:
        return dict.fromkeys(others, 0.0)
    return {n: float(getattr(got.value, n).score) for n in others}
