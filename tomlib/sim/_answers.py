"""What the simulated model answers: a rule per kind of prompt of the series, each drawing from the declared
competence (:class:`SimSpec`) with a generator seeded by the spec and the request, so a request always gets the same
reply. A prompt no rule knows gets :class:`NoRule`, never an invented answer."""

from __future__ import annotations

import hashlib
import json
import random
import re
from typing import Any

from tomlib.sim._play import city_reply, city_translation, city_view, game_action
from tomlib.sim._spec import CITY_CONFIGS, SimSpec
from tomlib.sim._truth import code_task_in, failing_program, question_in

WORDS = [
    "the",
    "plan",
    "fits",
    "the",
    "task",
    "and",
    "the",
    "team",
    "works",
    "through",
    "it",
    "step",
    "by",
    "step",
    "with",
    "care",
    "and",
    "checks",
    "every",
    "case",
]


class NoRule(ValueError):
    """The simulated model has no rule for this prompt (the server answers 400 and names it)."""


def content_key(request: dict[str, Any]) -> str:
    """What identifies a request's content: its messages and requested format."""
    body = json.dumps([request.get("messages", []), request.get("response_format")], sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()


def rng_for(spec: SimSpec, request: dict[str, Any], occurrence: int | str = 0) -> random.Random:
    """A generator that depends only on the spec's seed, the request's content and which call it answers:
    ``occurrence`` is the call's name (:data:`~tomlib.sim._spec.CALL_HEADER`) or, without one, how many times the
    content was asked before (a model sampling at temperature > 0 answers a repeated prompt afresh; an engineer whose
    code and instruction did not change sends the same prompt again next round)."""
    return random.Random(f"{spec.seed}\0{content_key(request)}\0{occurrence}")


def _text(words: int, rng: random.Random, limit: int | None = None) -> str:
    out = " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."
    return out[: limit - 1] + "." if limit and len(out) > limit else out


def _clip(x: float) -> float:
    return round(max(-1.0, min(1.0, x)), 3)


# -- JSON replies, by the requested schema -------------------------------------------------------------------------


def _resolve(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if not ref:
        return node
    out: Any = root
    for part in ref.lstrip("#/").split("/"):
        out = out[part]
    return dict(out)


def fill(node: dict[str, Any], root: dict[str, Any], rng: random.Random) -> Any:
    """A valid instance of a JSON schema (objects, strings within maxLength, numbers within bounds, enums)."""
    node = _resolve(node, root)
    if "enum" in node:
        return rng.choice(node["enum"])
    if "const" in node:
        return node["const"]
    if "anyOf" in node:
        return fill(node["anyOf"][0], root, rng)
    kind = node.get("type", "object")
    if kind == "object":
        return {k: fill(v, root, rng) for k, v in node.get("properties", {}).items()}
    if kind == "string":
        return _text(8, rng, node.get("maxLength"))
    if kind in ("number", "integer"):
        lo, hi = node.get("minimum", 0), node.get("maximum", 1)
        return rng.randint(int(lo), int(hi)) if kind == "integer" else round(rng.uniform(lo, hi), 3)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        return [fill(node.get("items", {}), root, rng) for _ in range(max(1, node.get("minItems", 1)))]
    return None


def _actions(user: str) -> dict[str, str]:
    """``"Name": "what it did"`` lines of an evaluation prompt."""
    return dict(re.findall(r'^"([^"]+)": "(.*)"$', user, flags=re.M))


def structured(spec: SimSpec, name: str, schema: dict[str, Any], user: str, rng: random.Random) -> dict[str, Any]:
    """The reply to a JSON request: the schema filled, then the declared behaviour where the series reads it."""
    reply = fill(schema, schema, rng)
    if name == "ActionReply":
        legal = _resolve(schema["properties"]["action"], schema).get("enum", [reply["action"]])
        reply["action"] = game_action(spec, user, list(legal), rng)
    elif name.startswith("Reply") and "action" in reply:
        view = city_view(user)
        if view is None:
            raise NoRule("a city prompt without the agent's district, load and roads")
        reply = city_reply(view, reply)
        idle = spec.city_idle.get(CITY_CONFIGS.get(name, ""), 0.0)
        if idle and rng.random() < idle:  # the declared competence of this configuration
            reply["action"] = "NONE"
    elif name in ("Program", "Translation"):
        reply = city_translation(user, grounded=name == "Translation")
    elif name.startswith(("PMReplyToM", "DebaterToM")):
        for key, level in reply.items():
            if name.startswith("PMReply"):
                level["action"] = pm_instruction(int(name.removeprefix("PMReplyToM")), COALITION_CITED in user)
            level["belief"] = "no belief" if key == "ToM_level0" else "They will implement the specified function."
    elif name == "AlignmentScores":
        pm = user.startswith("Score how well your belief about the engineers")
        for who, did in _actions(user).items():
            if who not in reply:
                continue
            if pm:
                mean = spec.score_followed if did.startswith("Followed") else spec.score_ignored
            else:
                mean = spec.peer_score
            reply[who]["score"] = _clip(rng.gauss(mean, spec.score_noise))
    elif name == "Verdict":
        u = rng.random()
        reply["winner"] = (
            "draw"
            if u < spec.judge_draw
            else "affirmative"
            if u < spec.judge_draw + (1 - spec.judge_draw) * spec.judge_affirmative
            else "negative"
        )
    return reply


# -- free-text replies ---------------------------------------------------------------------------------------------


def _round_of(user: str) -> int:
    return 2 if "Your code from the last round" in user else 1


COALITION_CITED = "You worked with the coalition"
"""What a PM's prompt says from round 2 on when it leads a coalition (``tomlib.programming``'s history)."""

_SENDER = re.compile(r"\(sent by a (ToM-\d) manager( leading its coalition)?\)")


def pm_instruction(order: int, coalition: bool) -> str:
    """The simulated PM's instruction: one request, signed with who sent it, so that an engineer's declared chance
    to follow can depend on its PM's order and on matching (``SimSpec.follow_by_pm``)."""
    who = f"a ToM-{order} manager" + (" leading its coalition" if coalition else "")
    return f"The Engineer should implement the function exactly as specified and test it (sent by {who})."


def sender_of(user: str) -> str:
    """'ToM-k' or 'ToM-k+matching' for an instruction a simulated PM wrote, '' for any other."""
    m = _SENDER.search(user)
    return f"{m[1]}{'+matching' if m[2] else ''}" if m else ""


def engineer(spec: SimSpec, name: str, user: str, rng: random.Random) -> str:
    """Code plus an 'Action:' line saying whether it followed the instruction (what the PM's score tracks)."""
    task = code_task_in(user)
    if task is None:
        raise NoRule("an engineer prompt without a known HumanEval or MBPP task")
    followed = rng.random() < spec.follow_chance(sender_of(user), name, _round_of(user) > 1)
    correct = rng.random() < spec.p_code
    code = task.reference if correct else failing_program(task)
    action = (
        "Followed the instruction and implemented the function as specified."
        if followed
        else "Ignored the instruction and rewrote the function my own way."
    )
    belief = "Belief: my teammates will implement the same function.\n" if "Belief:" in user else ""
    return f"{belief}Action: {action}\n```python\n{code.rstrip()}\n```"


def coder(spec: SimSpec, user: str, rng: random.Random) -> str:
    task = code_task_in(user)
    if task is None:
        raise NoRule("a code prompt without a known HumanEval or MBPP task")
    code = task.reference if rng.random() < spec.p_code else failing_program(task)
    shown = len(re.findall(r"^Solution \d+:", user, flags=re.M))
    rating = f"\n[[{', '.join(str(rng.randint(1, 5)) for _ in range(shown))}]]" if shown else ""
    return f"```python\n{code.rstrip()}\n```{rating}"


def tester(user: str) -> str:
    task = code_task_in(user)
    if task is None:
        raise NoRule("a Tester prompt without a known task")
    asserts = [ln.strip() for ln in task.tests.splitlines() if ln.strip().startswith("assert ")]
    return "\n".join(a.replace("candidate(", f"{task.entry_point}(") for a in asserts[:5])


def choice(spec: SimSpec, user: str, rng: random.Random) -> str:
    """Right with probability ``p_choice``, else another letter; a belief line and ratings where asked."""
    q = question_in(user)
    if q is None:
        raise NoRule("a multiple-choice prompt without a known AQuA-RAT or MMLU question")
    letter = q.answer if rng.random() < spec.p_choice else rng.choice([x for x in q.letters if x != q.answer])
    parts = []
    if "'Belief:'" in user:
        parts.append(f"Belief: my teammates will most likely answer {q.answer}.")
    parts.append(_text(20, rng))
    shown = len(re.findall(r"^Solution \d+:", user, flags=re.M))
    if shown and "[[1, 5, 2" in user:
        parts.append(f"[[{', '.join(str(rng.randint(1, 5)) for _ in range(shown))}]]")
    parts.append(f"Answer: {letter}")
    return "\n".join(parts)


def reply(spec: SimSpec, request: dict[str, Any], occurrence: int | str = 0) -> str:
    """The content of the reply to one chat request (``occurrence``: the call's name, or how many times the same
    content came before)."""
    rng = rng_for(spec, request, occurrence)
    messages = request.get("messages", [])
    system = next((m["content"] for m in messages if m["role"] == "system"), "")
    user = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
    fmt = request.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        body = fmt["json_schema"]
        return json.dumps(structured(spec, body.get("name", ""), body.get("schema", {}), user, rng))
    if m := re.match(r"You are (\w+), a Python engineer", system):
        return engineer(spec, m[1], user, rng)
    if "You are the Tester." in user:
        return tester(user)
    if "You are the Reflector." in user:
        n = len(re.findall(r"^Solution \d+:", user, flags=re.M))
        return "\n".join(f"Solution {i + 1}: {_text(8, rng)}" for i in range(n))
    if "Choose the best 2 solutions" in user:
        n = max(2, len(re.findall(r"^Solution \d+:", user, flags=re.M)))
        return str(sorted(rng.sample(range(1, n + 1), 2)))
    if "```python block" in user:
        return coder(spec, user, rng)
    if "'Answer: X'" in user:
        return choice(spec, user, rng)
    raise NoRule(f"no rule for the prompt starting {(system or user)[:80]!r}")
