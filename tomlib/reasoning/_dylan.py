"""A DyLAN-style team on multiple-choice questions (Liu et al., "Dynamic LLM-Agent Network"; the coalition paper's
Appendix F.1 uses it with and without 2-ToM). Our code, from the method's description and its public code's design:

- N role agents over 3 steps. Step 0: each answers alone. Step t > 0: each sees the previous step's replies of the
  active agents and gives an updated answer plus a rating of 1-5 for each of those replies.
- Early stop by consensus in steps 0 and 1: once more than 2/3 of the N agents hold the same answer, that is the
  answer.
- Step 2 (for N > 3): an LLM ranker picks the 2 best replies of step 1, and only those two agents answer again.
  (The public code activates two agents by their position in a shuffled list, so in effect at random; we activate
  the two the ranker chose, as the method describes.)
- The final answer: the consensus answer, else the plurality of the last step's active agents.
- Agent Importance Score: the last step's agents that gave the final answer share importance 1 equally; going back,
  a reply's importance is the sum over the replies that rated it of (their importance × their normalised rating of
  it), ratings r/5 normalised to sum 1 over each rater's inputs (uniform when missing). An agent's score is the sum
  over its steps, normalised to sum 1 over the roles; a team's table value is the mean over questions.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tomlib.datasets import ChoiceQuestion
from tomlib.llm import ChatModel, SampleKey
from tomlib.reasoning._common import TOM_GUIDE, Answer, read_answer, record_start
from tomlib.reasoning._dylan_graph import (
    STEPS,
    normalised,
    parse_ratings,
    propagate_importance,
    ranker_picks,
    role_importance,
    role_sums,
)
from tomlib.recording import record

MMLU_ROLES = ("Economist", "Doctor", "Lawyer", "Mathematician", "Psychologist", "Programmer", "Historian")
"""Appendix F's MMLU roles (also DyLAN's)."""


@dataclass
class Node:
    step: int
    agent: str
    answer: Answer
    inputs: list[str]  # agents whose previous-step replies this node saw, in the order shown
    weights: dict[str, float]  # normalised ratings of those inputs
    importance: float = 0.0

    def event(self) -> dict[str, Any]:
        """The node's ``action`` event: its answer, its text and its ratings of what it saw."""
        return {"action": self.answer.letter, "text": self.answer.text, "rated": self.weights, "how": self.answer.how}


@dataclass
class DylanResult:
    question: ChoiceQuestion
    roles: tuple[str, ...]
    nodes: list[Node] = field(default_factory=list)
    answer: str | None = None
    stopped_early: bool = False
    ranked: list[str] = field(default_factory=list)

    @property
    def correct(self) -> bool:
        return self.answer == self.question.answer

    def importance(self, scale: str = "per-step") -> dict[str, float]:
        """Each role's Agent Importance Score on this question (:data:`IMPORTANCE_SCALES`)."""
        return role_importance(self.nodes, self.roles, scale)

    def sums(self) -> dict[str, float]:
        """Each role's importance summed over the steps, before any scale."""
        return role_sums(self.nodes, self.roles)

    def score_event(self) -> dict[str, Any]:
        """The question's ``score`` event: the team's answer against the key, and each role's importance."""
        return {
            "metric": "correct",
            "value": float(self.correct),
            "team_answer": self.answer,
            "truth": self.question.answer,
            "stopped_early": self.stopped_early,
            "importance": self.importance(),
        }


def _messages(question: ChoiceQuestion, role: str, tom: int, shown: list[tuple[str, str]]) -> list[dict[str, str]]:
    system = f"You are a {role}. You answer a single-choice question together with other agents and give your reasons."
    if tom:
        system += f" You have level-{tom} Theory of Mind."
    parts = [question.statement()]
    if shown:
        body = "\n\n".join(f"Solution {i + 1}:\n{text[-600:]}" for i, (_, text) in enumerate(shown))
        parts.append(
            f"Other agents' solutions from the last step:\n{body}\n\nUsing them as extra information, give an updated "
            f"answer. Also rate each of the {len(shown)} solutions from 1 to 5, in the form [[1, 5, 2, ...]]."
        )
    if tom:
        parts.append(TOM_GUIDE[min(tom, 2)])
    parts.append(f"End with a line 'Answer: X' where X is one of {'/'.join(question.letters)}.")
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


def _ranker_messages(question: ChoiceQuestion, shown: list[tuple[str, str]]) -> list[dict[str, str]]:
    body = "\n\n".join(f"Solution {i + 1}:\n{text[-600:]}" for i, (_, text) in enumerate(shown))
    user = (
        f"{question.statement()}\n\n{body}\n\nChoose the best 2 solutions. Answer only with their numbers, in the form "
        "[1, 2]."
    )
    return [{"role": "user", "content": user}]


def _consensus(answers: list[Answer], n: int) -> str | None:
    counts = Counter(a.letter for a in answers if a.letter)
    if not counts:
        return None
    letter, count = counts.most_common(1)[0]
    return letter if count > (2 * n) // 3 else None


async def run_dylan(
    chat: ChatModel,
    question: ChoiceQuestion,
    *,
    roles: tuple[str, ...] = MMLU_ROLES,
    tom: int = 0,
    seed: int = 0,
    experiment: str = "coalition.reasoning",
    temperature: float = 0.7,
    max_tokens: int = 500,
) -> DylanResult:
    """One question through DyLAN's network (Liu et al., 2023): up to :data:`STEPS` steps in which each active agent
    answers having seen the previous step's replies (shuffled) and rates them; from step 2 on, a ranker keeps the
    best agents; a two-thirds consensus before step 2 stops early. ``tom=2`` gives every agent 2-ToM guidance
    (Tables 7-8's "+2-ToM"). Every answer and the score are recorded to the run log in force."""
    method = "dylan" if tom == 0 else f"dylan_tom{tom}"
    condition = f"{method}:{question.qid}"
    rng = random.Random(f"{condition}:{seed}")
    res = DylanResult(question, roles)
    record_start(condition, seed, method, question.qid, question.statement(), question.answer)
    n = len(roles)
    active = list(roles)
    prev: list[Node] = []

    def key(step: int, agent: str, purpose: str) -> SampleKey:
        return SampleKey(
            experiment=experiment, condition=condition, episode=seed, step=step, agent=agent, purpose=purpose
        )

    for step in range(STEPS):
        if step >= 2 and n > 3:
            shown = [(p.agent, p.answer.text) for p in prev]
            reply = await chat.complete(
                _ranker_messages(question, shown),
                sample_key=key(step, "ranker", "rank"),
                temperature=0.0,
                max_tokens=40,
            )
            active = [shown[i][0] for i in ranker_picks(reply.content, len(shown), rng)]
            res.ranked = list(active)
            ranked = {"action": ", ".join(active), "text": reply.content}
            record("action", ranked, condition=condition, episode=seed, step=step, agent="ranker")
        order = list(active)
        rng.shuffle(order)
        nodes: list[Node] = []
        for agent in order:
            shown = [(p.agent, p.answer.text) for p in prev]
            rng.shuffle(shown)
            reply = await chat.complete(
                _messages(question, agent, tom, shown),
                sample_key=key(step, agent, "answer"),
                temperature=temperature,
                max_tokens=max_tokens,
            )
            nodes.append(node := _node(step, agent, reply.content, question, shown))
            record("action", node.event(), condition=condition, episode=seed, step=step, agent=agent)
            if step < 2 and len(nodes) > (2 * n) // 3 and (answer := _consensus([x.answer for x in nodes], n)):
                res.answer, res.stopped_early = answer, True
                break
        res.nodes += nodes
        prev = nodes
        if res.stopped_early:
            break
    if not res.stopped_early:
        res.answer = _last_step_plurality([x.answer for x in prev])
    _backward(res)
    record("score", res.score_event(), condition=condition, episode=seed, step=max(x.step for x in res.nodes))
    return res


def _node(step: int, agent: str, content: str, question: ChoiceQuestion, shown: list[tuple[str, str]]) -> Node:
    """A reply as a node of the network: its answer and its normalised ratings of the replies it was shown."""
    ans = read_answer(agent, content, question)
    weights = normalised(parse_ratings(content, len(shown)), len(shown)) if shown else []
    return Node(step, agent, ans, [a for a, _ in shown], dict(zip([a for a, _ in shown], weights, strict=True)))


def _last_step_plurality(last: list[Answer]) -> str | None:
    """The final answer without consensus: the last step's most common letter, ties to the one given first."""
    counts = Counter(a.letter for a in last if a.letter)
    return max(counts, key=lambda c: (counts[c], -[a.letter for a in last].index(c))) if counts else None


def _backward(res: DylanResult) -> None:
    """Agent Importance Score of the multiple-choice network: the last step's nodes that gave the final answer."""
    if not res.nodes or not res.answer:
        return
    last_step = max(x.step for x in res.nodes)
    propagate_importance(res.nodes, [x for x in res.nodes if x.step == last_step and x.answer.letter == res.answer])
