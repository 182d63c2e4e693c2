"""A DyLAN-style network for code generation (the coalition paper's Table 7 on HumanEval; DyLAN's own code task).

Agents: Appendix F's four coders (PythonAssistant, AlgorithmDeveloper, ComputerScientist, Programmer) and its four
judges, which here do:

- **Tester** (LLM, once per task): writes up to 10 one-line asserts from the task's signature and docstring.
- **Passer** (no LLM): runs each code in :mod:`tomlib.sandbox` and reports whether it runs (syntax, import errors).
- the Tester's asserts run in the same sandbox check; each code gets "k of N of the Tester's tests passed".
- **Reflector** (LLM, once per step): short feedback on every code of the step, given those outcomes.
- **Ranker** (LLM, step 2): keeps the 2 best codes of step 1; only their authors write again.

Steps as in :mod:`tomlib.reasoning._dylan`: step 0 every coder writes alone; at steps 1-2 each active coder sees the
previous step's codes with the judges' feedback, rates each 1-5 (``[[...]]``) and writes an updated code. The final
code is the last step's code that passes the most of the Tester's tests (ties: the order the coders wrote in); the
last-step codes with that count share importance 1, propagated back through the ratings (Agent Importance Score).
The hidden HumanEval tests run only after the network finished (they never feed back), to give Pass@1.

Early stop by consensus, as DyLAN's code network does: at steps 1 and 2, once more than 2/3 of the step's active coders
have written, the network stops when more than 2/3 of them hold one code that runs, codes being the same when their
BLEU (``sacrebleu``, lowercased, the task's own signature and docstring left out) is at least 90. A network that stops
at step 1 leaves step 2 empty, so its roles' importance sums to 2 instead of 3 (:data:`IMPORTANCE_SCALES`).

Where ours may differ from DyLAN: there, judges' feedback also flows into the importance graph, and the credit goes to
the last step's codes that run, not to those that pass the most of the Tester's tests.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tomlib.datasets import CodeTask
from tomlib.llm import ChatModel, SampleKey
from tomlib.programming import parse_engineer, task_statement
from tomlib.reasoning._common import record_start
from tomlib.reasoning._dylan_graph import (
    STEPS,
    normalised,
    parse_ratings,
    propagate_importance,
    ranker_picks,
    role_importance,
    role_sums,
)
from tomlib.recording import record, record_all
from tomlib.sandbox import CheckCache, CheckResult, Limits

CODE_ROLES = ("PythonAssistant", "AlgorithmDeveloper", "ComputerScientist", "Programmer")
"""Appendix F's HumanEval coders (also DyLAN's)."""
MAX_TESTS = 10
SAME_CODE_BLEU = 90.0
"""Two codes are the same answer when their BLEU is at least this (DyLAN's code network: 0.9 of 100)."""
CHECK_LIMITS = Limits(timeout_s=10.0, cpu_s=10, memory_mb=1024)
CODE_TOM_GUIDE = {
    1: "Before writing, think about your teammates: what will they most likely write, and why? Write it on a line "
    "starting with 'Belief:'.",
    2: "Before writing, think about what your teammates expect *you* to write and how they will react to it. Write "
    "it on a line starting with 'Belief:'.",
}
_COUNT = re.compile(r"TOMLIB_TESTS_PASSED (\d+)/(\d+)")


@dataclass
class CodeNode:
    """One coder's reply at one step of DyLAN's code network.

    Attributes:
        step: the network's step (0 first).
        agent: the coder's role.
        text: the whole reply.
        code: the code read from it.
        inputs: the coders whose previous code it was shown, in the order shown.
        weights: its normalised ratings of those inputs.
        runs: the Passer's verdict (the code runs the Tester's asserts).
        tests_passed: how many of the Tester's asserts hold.
        feedback: the Reflector's words on this code.
        problem: why it does not run (the Passer's report).
        importance: its Agent Importance Score, after backward propagation.
        passed_hidden: the final code's verdict on the hidden tests (None for the others).
    """

    step: int
    agent: str
    text: str
    code: str
    inputs: list[str]
    weights: dict[str, float]
    runs: bool = False  # the Passer's verdict
    tests_passed: int = 0  # of the Tester's asserts
    feedback: str = ""  # the Reflector's words on this code
    problem: str = ""  # why it does not run (the Passer's report)
    importance: float = 0.0
    passed_hidden: bool | None = None  # only for the final code

    def events(self, n_tests: int) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
        """The node's events once checked: the Passer's ``verification``, then the coder's ``action``."""
        label = f"runs; {self.tests_passed} of {n_tests} of the Tester's asserts hold" if self.runs else "does not run"
        status = "runs" if self.runs else "does not run"
        verification = {"passed": self.runs, "status": status, "reason": self.problem, "label": label}
        yield "verification", verification, {"agent": self.agent}
        action = {
            "action": f"{self.tests_passed}/{n_tests} tests" + ("" if self.runs else ", does not run"),
            "text": self.text,
            "code": self.code,
            "rated": self.weights,
            "feedback": self.feedback,
        }
        yield "action", action, {"agent": self.agent}


@dataclass
class DylanCodeResult:
    """One task through DyLAN's code network (Table 7).

    Attributes:
        task: the HumanEval task.
        roles: the coders' roles.
        tests: the Tester's asserts.
        nodes: every coder's reply, step by step.
        final: the final code's node.
        ranked: the roles the Ranker kept (empty when it never ran).
        stopped_at: the step at which the coders agreed (None: all steps ran).
    """

    task: CodeTask
    roles: tuple[str, ...]
    tests: list[str] = field(default_factory=list)
    nodes: list[CodeNode] = field(default_factory=list)
    final: CodeNode | None = None
    ranked: list[str] = field(default_factory=list)
    stopped_at: int | None = None  # the step at which the coders agreed, ending the network (None: all steps ran)

    @property
    def passed(self) -> bool:
        return bool(self.final and self.final.passed_hidden)

    def score_event(self) -> dict[str, Any]:
        """The task's ``score`` event: the final code's pass@1 on the hidden tests, and each role's importance."""
        final = self.final.agent if self.final else None
        importance = self.importance()
        return {
            "metric": "pass_at_1",
            "value": float(self.passed),
            "final": final,
            "importance": importance,
            "stopped_at": self.stopped_at,
        }

    def importance(self, scale: str = "per-step") -> dict[str, float]:
        """Each role's Agent Importance Score on this question (:data:`IMPORTANCE_SCALES`)."""
        return role_importance(self.nodes, self.roles, scale)

    def sums(self) -> dict[str, float]:
        """Each role's importance summed over the steps, before any scale."""
        return role_sums(self.nodes, self.roles)


def parse_asserts(text: str, limit: int = MAX_TESTS) -> list[str]:
    """The one-line ``assert`` statements of a reply that compile (compiled only, never run here), at most ``limit``."""
    out: list[str] = []
    for line in text.splitlines():
        line = line.strip().strip("`").strip()
        if not line.startswith("assert ") or line in out:
            continue
        try:
            compile(line, "<tester>", "exec")
        except SyntaxError:
            continue
        out.append(line)
        if len(out) == limit:
            break
    return out


def counting_tests(asserts: list[str]) -> str:
    """The Tester's asserts as a script that runs them all and prints how many held (an exception counts as a fail)."""
    lines = ["_tomlib_ok = 0"]
    for a in asserts:
        lines += ["try:", f"    {a}", "    _tomlib_ok += 1", "except Exception:", "    pass"]
    lines.append(f"print('TOMLIB_TESTS_PASSED %d/{len(asserts)}' % _tomlib_ok)")
    return "\n".join(lines) + "\n"


def read_count(res: CheckResult) -> int:
    """How many of the Tester's asserts held: the last count the script printed (0 when it never got there)."""
    found = _COUNT.findall(res.stdout) if res.passed else []
    return int(found[-1][0]) if found else 0


def same_code(a: str, b: str, task: CodeTask) -> bool:
    """DyLAN's test of two code answers: a BLEU of at least :data:`SAME_CODE_BLEU` (lowercased), the task's own
    prompt (signature and docstring) taken out of both first."""
    from sacrebleu import sentence_bleu

    def body(code: str) -> str:
        return code.replace(task.prompt.strip(), "") if task.prompt.strip() else code

    return sentence_bleu(body(a), [body(b)], lowercase=True).score >= SAME_CODE_BLEU


def consensus(nodes: list[CodeNode], active: int, task: CodeTask) -> bool:
    """More than 2/3 of the ``active`` coders hold one code that runs (DyLAN's early stop)."""
    running = [n.code for n in nodes if n.runs]
    most = max((sum(same_code(c, d, task) for d in running) for c in running), default=0)
    return most > (2 * active) // 3


def _tester_messages(task: CodeTask) -> list[dict[str, str]]:
    user = (
        f"{task_statement(task)}\n\nYou are the Tester. Write at most {MAX_TESTS} test cases for `{task.entry_point}`, "
        "each a single line of the form `assert <call> == <expected>`, one per line, and nothing else."
    )
    return [{"role": "user", "content": user}]


def _coder_messages(task: CodeTask, role: str, tom: int, shown: list[CodeNode]) -> list[dict[str, str]]:
    system = f"You are {role}, one of several programmers solving a task together."
    if tom:
        system += f" You have level-{tom} Theory of Mind."
    parts = [task_statement(task)]
    if shown:
        body = "\n\n".join(
            f"Solution {i + 1}:\n```python\n{n.code[-1200:] or '(no code)'}\n```\n"
            f"Judges: {'runs' if n.runs else 'does not run'}; {n.tests_passed} of the Tester's tests passed. "
            f"Reflector: {n.feedback or '(no comment)'}"
            for i, n in enumerate(shown)
        )
        parts.append(
            f"Solutions from the last step, with the judges' feedback:\n{body}\n\nUse them to write an improved "
            f"solution. Also rate each of the {len(shown)} solutions from 1 to 5, in the form [[1, 5, 2, ...]]."
        )
    if tom:
        parts.append(CODE_TOM_GUIDE[min(tom, 2)])
    parts.append("Give the complete function in one ```python block.")
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


def _reflector_messages(task: CodeTask, nodes: list[CodeNode], n_tests: int) -> list[dict[str, str]]:
    body = "\n\n".join(
        f"Solution {i + 1}:\n```python\n{n.code[-1200:] or '(no code)'}\n```\n"
        f"{'Runs' if n.runs else 'Does not run'}; {n.tests_passed} of {n_tests} tests passed."
        for i, n in enumerate(nodes)
    )
    user = (
        f"{task_statement(task)}\n\n{body}\n\nYou are the Reflector. For each solution, write one line "
        "'Solution N: <the most important problem or improvement, in at most 25 words>'."
    )
    return [{"role": "user", "content": user}]


def _ranker_messages(task: CodeTask, nodes: list[CodeNode]) -> list[dict[str, str]]:
    body = "\n\n".join(f"Solution {i + 1}:\n```python\n{n.code[-1200:]}\n```" for i, n in enumerate(nodes))
    user = (
        f"{task_statement(task)}\n\n{body}\n\nYou are the Ranker. Choose the best 2 solutions. Answer only with their "
        "numbers, in the form [1, 2]."
    )
    return [{"role": "user", "content": user}]


def _feedback(text: str, n: int) -> list[str]:
    """The Reflector's line for each of ``n`` solutions ("" where it wrote none)."""
    out = [""] * n
    for m in re.finditer(r"Solution\s*(\d+)\s*[:.)-]\s*(.+)", text):
        i = int(m.group(1)) - 1
        if 0 <= i < n and not out[i]:
            out[i] = m.group(2).strip()[:200]
    return out


async def run_dylan_code(
    chat: ChatModel,
    task: CodeTask,
    *,
    roles: tuple[str, ...] = CODE_ROLES,
    tom: int = 0,
    seed: int = 0,
    experiment: str = "coalition.reasoning",
    cache: CheckCache | None = None,
    temperature: float = 0.7,
    max_tokens: int = 600,
) -> DylanCodeResult:
    """One task through DyLAN's coder network (Liu et al., 2023, code generation): a Tester writes asserts; at each
    step every active coder writes code having seen the previous step's (shuffled) and rates it; the Passer runs the
    code against the asserts; a consensus from step 1 stops early; otherwise the Reflector comments and, from step 2,
    a Ranker keeps the best coders. The final code (most asserts held) is judged on the hidden tests. ``tom=2`` gives
    every coder 2-ToM guidance (Table 7's "+2-ToM"). Every step is recorded to the run log in force."""
    method = "dylan" if tom == 0 else f"dylan_tom{tom}"
    condition = f"{method}:{task.task_id}"
    rng = random.Random(f"{condition}:{seed}")
    checker = cache or CheckCache()
    res = DylanCodeResult(task, roles)
    record_start(condition, seed, method, task.task_id, task_statement(task), "")
    at: dict[str, Any] = {"condition": condition, "episode": seed}

    def key(step: int, agent: str, purpose: str) -> SampleKey:
        return SampleKey(
            experiment=experiment, condition=condition, episode=seed, step=step, agent=agent, purpose=purpose
        )

    reply = await chat.complete(_tester_messages(task), sample_key=key(0, "Tester", "tests"), temperature=0.0)
    res.tests = parse_asserts(reply.content)
    record("action", {"action": f"{len(res.tests)} tests", "tests": res.tests}, step=0, agent="Tester", **at)
    script = counting_tests(res.tests)

    active, prev = list(roles), []
    for step in range(STEPS):
        if step >= 2 and len(roles) > 3:
            reply = await chat.complete(
                _ranker_messages(task, prev), sample_key=key(step, "Ranker", "rank"), temperature=0.0, max_tokens=40
            )
            active = [prev[i].agent for i in ranker_picks(reply.content, len(prev), rng)]
            res.ranked = list(active)
            record("action", {"action": ", ".join(active), "text": reply.content}, step=step, agent="Ranker", **at)
        order = list(active)
        rng.shuffle(order)
        nodes: list[CodeNode] = []
        for agent in order:
            shown = list(prev)
            rng.shuffle(shown)
            reply = await chat.complete(
                _coder_messages(task, agent, tom, shown),
                sample_key=key(step, agent, "code"),
                temperature=temperature,
                max_tokens=max_tokens,
            )
            nodes.append(_code_node(step, agent, reply.content, shown))
            if step >= 1 and len(nodes) > (2 * len(order)) // 3:  # DyLAN's early stop, from step 1
                await _passer(checker, task, script, nodes)
                if consensus(nodes, len(order), task):
                    res.stopped_at = step
                    break
        await _passer(checker, task, script, nodes)
        if step < STEPS - 1 and res.stopped_at is None:
            await _reflector(chat, task, nodes, len(res.tests), key(step, "Reflector", "reflect"))
        for n in nodes:
            record_all(n.events(len(res.tests)), step=step, **at)
        res.nodes += nodes
        prev = nodes
        if res.stopped_at is not None:  # the coders agreed: no later step runs
            break
    await _final(checker, task, res, prev)
    record("score", res.score_event(), step=STEPS - 1, **at)
    return res


def _code_node(step: int, agent: str, content: str, shown: list[CodeNode]) -> CodeNode:
    """A coder's reply as a node: its code and its normalised ratings of the code it was shown."""
    parsed = parse_engineer(content)
    weights = normalised(parse_ratings(content, len(shown)), len(shown)) if shown else []
    names = [n.agent for n in shown]
    return CodeNode(step, agent, content, parsed.code, names, dict(zip(names, weights, strict=True)))


async def _passer(checker: CheckCache, task: CodeTask, script: str, nodes: list[CodeNode]) -> None:
    """The Passer: run the code of each node not yet judged against the Tester's asserts, in the sandbox."""
    batch = [n for n in nodes if not n.runs and not n.problem]
    got = await asyncio.to_thread(
        checker.check_many, [(task.program(n.code), script) for n in batch], limits=CHECK_LIMITS
    )
    for n, c in zip(batch, got, strict=True):
        n.runs = bool(n.code.strip()) and c.passed
        n.tests_passed = read_count(c) if n.code.strip() else 0
        n.problem = "" if n.runs else ("no code in the reply" if not n.code.strip() else c.reason)


async def _reflector(
    chat: ChatModel, task: CodeTask, nodes: list[CodeNode], n_tests: int, sample_key: SampleKey
) -> None:
    """The Reflector: one comment on each node's code, which the next step's coders see."""
    reply = await chat.complete(
        _reflector_messages(task, nodes, n_tests), sample_key=sample_key, temperature=0.0, max_tokens=300
    )
    for n, fb in zip(nodes, _feedback(reply.content, len(nodes)), strict=True):
        n.feedback = fb


async def _final(checker: CheckCache, task: CodeTask, res: DylanCodeResult, last: list[CodeNode]) -> None:
    """The final code (the last step's node that held the most asserts, the first of a tie), its importance
    propagated back through the network, and its verdict on the hidden tests."""
    best = max(n.tests_passed for n in last)
    final = [n for n in last if n.tests_passed == best]
    res.final = final[0]
    propagate_importance(res.nodes, final)
    hidden = await asyncio.to_thread(
        checker.check_many, [(task.program(res.final.code), task.tests)], limits=CHECK_LIMITS
    )
    res.final.passed_hidden = bool(res.final.code.strip()) and hidden[0].passed
