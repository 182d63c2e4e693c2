"""The coalition paper's "Ours (+matching)" reasoning team (§6.5, Appendix E): agents with ToM orders 0, 1 and 2
answer over a few rounds; the ToM-1 and ToM-2 agents score their belief about each teammate against the teammate's
answer (Appendix A; in Appendix E, the "belief value" an agent gives a peer's answer), and Algorithm 1 (ICLR
coalitions, minimum size 2) decides who answers together. An agent sees only its coalition's last answers; the team's
answer is the coalition's plurality vote, and the last round's answer counts.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import numpy as np

from tomlib.coalition import Algorithm1, make_instance
from tomlib.datasets import ChoiceQuestion
from tomlib.llm import ChatModel, SampleKey, StructuredOutputError
from tomlib.programming import alignment_schema, teammate_evaluation_messages
from tomlib.reasoning._common import Answer, answer_messages, log_start, plurality, read_answer
from tomlib.trace import RunLog

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
    log: RunLog | None = None,
    temperature: float = 0.7,
    max_tokens: int = 400,
    selection: str | None = None,
) -> TeamResult:
    """One question; ``rounds`` of answers, self-evaluations and matching. ``selection``: which stable outcome is
    played (:data:`tomlib.coalition.SELECTIONS`; None: the ICLR draft's default, named in the condition otherwise)."""
    names = [f"ToM{k}" for k in ORDERS]
    condition = f"ours_matching:{question.qid}" + (f":{selection}" if selection else "")
    base = make_instance(np.zeros((3, 3)), names=names, no_beliefs=["ToM0"], epsilon=epsilon, min_size=2)
    algo = Algorithm1(base, mechanism="iclr", selection=selection, log=log, condition=condition, episode=seed)
    result = TeamResult(question, seed)
    log_start(log, condition, seed, "ours_matching", question.qid, question.statement(), question.answer)
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
            others = {n: answers[n].text for n in names if n != name}
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
                    sample_key=key(r, name, "evaluate"),
                    temperature=0.2,
                    max_tokens=600,
                )
                scores[name] = {n: float(getattr(got.value, n).score) for n in others}
            except StructuredOutputError:
                scores[name] = dict.fromkeys(others, 0.0)
            for j, other in enumerate(names):
                if other != name:
                    matrix[i, j] = scores[name][other]
        rec = algo.step(matrix)
        team = [names[i] for i in rec.team] or list(names)
        team_answer = plurality([answers[n] for n in team])
        if log is not None:
            for a in answers.values():
                log.event(
                    "action",
                    {"action": a.letter, "text": a.text, "belief": a.belief, "how": a.how},
                    condition=condition,
                    episode=seed,
                    step=r,
                    agent=a.agent,
                )
            log.event(
                "score",
                {
                    "metric": "correct",
                    "value": float(team_answer == question.answer),
                    "team_answer": team_answer,
                    "truth": question.answer,
                    "team": team,
                },
                condition=condition,
                episode=seed,
                step=r,
            )
        result.rounds.append(TeamRound(r, answers, scores, team, rec.structure, team_answer))
        prev = answers
    return result
