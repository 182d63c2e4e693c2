"""A ChatEval-style team on multiple-choice questions (Chan et al., "ChatEval"; the coalition paper's Appendix F.2
uses it with and without ToM). Our code, from the method's description and its public code's defaults:

- role agents (default: ChatEval's two, a member of the general public and a critic) discuss in turn
  ("one-by-one"): each speaker sees the question and every earlier message, including this turn's;
- 2 discussion turns by default; every message ends with the speaker's current answer;
- the team's answer is the plurality of the agents' last answers (ChatEval's majority vote; ties go to the first
  speaker's answer).

Where ours may differ: ChatEval judged pairs of answers with scores; here the agents answer the question itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tomlib.datasets import ChoiceQuestion
from tomlib.llm import ChatModel, SampleKey
from tomlib.reasoning._common import TOM_GUIDE, Answer, plurality, read_answer, record_start
from tomlib.recording import record

ROLES: dict[str, str] = {
    "General Public": "an interested non-expert who wants every step explained and checks that it makes sense",
    "Critic": "a critic who questions the others' reasoning and offers an alternative when two answers seem "
    "equally good",
    "Scientist": "a scientist who reasons from first principles and checks calculations",
}
DEFAULT_ROLES = ("General Public", "Critic")


@dataclass
class ChatEvalResult:
    question: ChoiceQuestion
    messages: list[Answer] = field(default_factory=list)
    answer: str | None = None

    @property
    def correct(self) -> bool:
        return self.answer == self.question.answer


def _messages(
    question: ChoiceQuestion, role: str, tom: int, history: list[Answer], turn: int, turns: int
) -> list[dict[str, str]]:
    system = (
        f"You are the {role}, {ROLES.get(role, 'a member of the team')}. You and other referees discuss a "
        "multiple-choice question together."
    )
    if tom:
        system += f" You have level-{tom} Theory of Mind."
    said = "\n\n".join(f"[{m.agent}] {m.text[-600:]}" for m in history) or "(nobody has spoken yet)"
    parts = [question.statement(), f"The discussion so far:\n{said}"]
    if tom:
        parts.append(TOM_GUIDE[min(tom, 2)])
    parts.append(
        f"Turn {turn} of {turns}. Keep it short and clear. You need not agree with the others. End with a line "
        f"'Answer: X' where X is one of {'/'.join(question.letters)}."
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


async def run_chateval(
    chat: ChatModel,
    question: ChoiceQuestion,
    *,
    roles: tuple[str, ...] = DEFAULT_ROLES,
    turns: int = 2,
    tom: int = 0,
    seed: int = 0,
    experiment: str = "coalition.reasoning",
    temperature: float = 0.0,
    max_tokens: int = 400,
) -> ChatEvalResult:
    """One question, ``turns`` rounds of one-by-one discussion, then the plurality of the last answers; recorded to
    the run log in force."""
    condition = f"{'chateval' if tom == 0 else f'chateval_tom{tom}'}:{question.qid}"
    res = ChatEvalResult(question)
    record_start(condition, seed, condition.split(":")[0], question.qid, question.statement(), question.answer)
    for turn in range(1, turns + 1):
        for role in roles:
            reply = await chat.complete(
                _messages(question, role, tom, res.messages, turn, turns),
                sample_key=SampleKey(
                    experiment=experiment, condition=condition, episode=seed, step=turn, agent=role, purpose="discuss"
                ),
                temperature=temperature,
                max_tokens=max_tokens,
            )
            ans = read_answer(role, reply.content, question)
            res.messages.append(ans)
            said = {"action": ans.letter, "text": ans.text, "how": ans.how}
            record("action", said, condition=condition, episode=seed, step=turn, agent=role)
    last = {m.agent: m for m in res.messages}
    res.answer = plurality([last[r] for r in roles if r in last], order=list(roles))
    score = {"metric": "correct", "value": float(res.correct), "team_answer": res.answer, "truth": question.answer}
    record("score", score, condition=condition, episode=seed, step=turns)
    return res
