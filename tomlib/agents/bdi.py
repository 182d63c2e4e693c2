"""LLM agents with Theory of Mind and internal beliefs (``tom-internal-beliefs-asp.txt`` §3.2-§3.3, Fig. 3-4).

Each turn an agent answers in up to four sections: *Beliefs about others* (ToM), *Internal beliefs* (IB, free text
meant for translation into logic), *Response* (broadcast to the team's shared memory) and *Action*. The
configurations Base / ToM / IB / ToM+IB switch the first two on and off.

The turn follows the authors' loop (their ``agents.py``): one budget of :data:`MAX_TRIES` tries per turn is shared
by everything that can go wrong. With IB on, the internal beliefs are translated into ASP (up to
:data:`TRANSLATION_ATTEMPTS` translator calls) and checked with clingo; a failed or empty translation and
inconsistent beliefs each cost a try, and the agent answers again with the reason. The action is executed only
once the beliefs are consistent; an illegal action costs a try too. When the tries run out the agent does
nothing that turn (its response is still shared). ``verification`` picks the check: ``"authors"``
(self-consistency of the translated program, as their code) or ``"grounded"`` (our extension: beliefs as facts of
a fixed vocabulary, checked against the true state).

Where we differ, and why: replies are JSON with one field per section (the authors parse free text with a
regular expression), because structured output is what tomlib's model layer checks and re-asks; an action their
code cannot parse (``WAIT``, ``SUPPLY_RESOURCE(ten)``) crashes their run and is an illegal action here; an empty
action, which their code lets pass as a skipped turn, is illegal here too. Prompts are ours; they carry the
authors' content (role, rules, strategy advice, partial observation, the four sections).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints, create_model

from tomlib.agents._base import Emit, no_emit
from tomlib.asp import VOCABULARY, TranslationError, parse_facts, parse_program, self_consistent, verify
from tomlib.envs.city import AGENTS, ROLE, Action, City, CityState, IllegalCityAction
from tomlib.llm import ChatModel, SampleKey, StructuredOutputError

CONFIGS: dict[str, tuple[bool, bool]] = {
    "Base": (False, False),
    "ToM": (True, False),
    "IB": (False, True),
    "ToM+IB": (True, True),
}
MAX_TRIES = 3  # the authors' shared budget per turn
TRANSLATION_ATTEMPTS = 3  # translator calls before a translation counts as failed (the authors' max_attempts)
VERIFICATIONS = ("authors", "grounded")
OBSERVATIONS = ("partial", "full")
Verification = Literal["authors", "grounded"]
Observation = Literal["partial", "full"]
Fact = Annotated[str, StringConstraints(max_length=80)]
Statement = Annotated[str, StringConstraints(max_length=200)]

ROLE_NOTES = {
    "FOOD_AGENT": "Food shortages wear a district's health down fast, so keep every district fed and do not leave "
    "one without food for long.",
    "MEDICAL_AGENT": "Keep medical supplies in every district: watch each district's medicine level and restock in "
    "d1 before you run dry.",
    "SECURITY_AGENT": "Keep every district secure: spread security supplies where they are lowest and do not neglect "
    "any district.",
}


@lru_cache(maxsize=8)
def reply_schema(tom: bool, ib: bool) -> type[BaseModel]:
    """The sections an agent must produce under a configuration."""
    fields: dict[str, Any] = {}
    if tom:
        fields["beliefs_about_others"] = (
            Annotated[str, StringConstraints(max_length=1000)],
            Field(description="What each teammate is likely to do next and why, and how you will complement them."),
        )
    if ib:
        fields["internal_beliefs"] = (
            Annotated[str, StringConstraints(max_length=1000)],
            Field(description="Your picture of the state and your plan, as short plain statements for logic."),
        )
    fields["response"] = (
        Annotated[str, StringConstraints(max_length=600)],
        Field(description="Your message to the team: where you are, the levels you see, your plan, requests."),
    )
    fields["action"] = (str, Field(description="Exactly one of MOVE(district_number), SUPPLY_RESOURCE(amount), NONE."))
    return create_model(f"Reply{'ToM' if tom else ''}{'IB' if ib else ''}", **fields)


class Translation(BaseModel):
    """Internal beliefs as ground facts of the fixed vocabulary (``grounded`` verification)."""

    facts: list[Fact] = Field(max_length=8, description="One ASP fact per belief, using only the given predicates.")


class Program(BaseModel):
    """Internal beliefs as an ASP program over any predicates (``authors`` verification)."""

    statements: list[Statement] = Field(
        max_length=30, description="ASP facts, rules and constraints, each ending with a period."
    )


@dataclass
class Counters:
    """What went wrong during one run (§4.3's analysis; the authors' code counts the first three)."""

    invalid_actions: int = 0
    invalid_translations: int = 0
    inconsistencies: int = 0
    verifications: int = 0
    revisions: int = 0
    failed_turns: int = 0  # turns whose tries ran out, so the agent did nothing


@dataclass
class TeamMemory:
    """Shared memory (everyone's responses) and each agent's private memory (its own sections, actions and their
    results), both kept whole, as in the authors' code."""

    shared: list[str] = field(default_factory=list)
    private: dict[str, list[str]] = field(default_factory=lambda: {a: [] for a in AGENTS})


def _system_prompt(city: City, agent: str, tom: bool, ib: bool) -> str:
    p = city.params
    loss = (
        "after a district uses its share, each resource left at 20 or less costs it 5 health, below 10 it costs 10"
        if p.dynamics == "authors"
        else "each resource below 20 when the round ends costs a district 5 health, below 10 it costs 10"
    )
    fields = []
    if tom:
        fields.append(
            "beliefs_about_others: what each teammate is likely to do next and why (its role, what it said and did), "
            "and how you will complement it."
        )
    if ib:
        fields.append(
            "internal_beliefs: your own picture of the state and your reasoning: where you are, what you carry, the "
            "levels and health you know of, what you plan and why. Write short, plain statements that can be "
            "translated into logic facts and rules; they are checked for consistency."
        )
    fields += [
        "response: your message to the whole team: where you are, the levels you see, what you will do next, and "
        "any request.",
        "action: exactly one command: MOVE(district_number), SUPPLY_RESOURCE(amount) or NONE.",
    ]
    return "\n".join(
        [
            f"You are {agent}, one of three agents keeping a city's districts healthy. You deliver only "
            f"{ROLE[agent]}; the other two agents deliver the other resources. {ROLE_NOTES[agent]}",
            f"The city has districts {', '.join(p.districts)}. {p.supply_node} is the supply node: it refills you to "
            f"{min(p.refill_to, p.capacity)} units, and nothing can be supplied there. Every other district uses "
            f"{p.consumption} units of each resource per round; {loss}. Health starts at {p.start_health}; the score "
            f"is the mean health of the districts after {p.rounds} rounds, in which each agent acts once per round.",
            "You see only the district you are in. You learn about the others by going there and from your "
            "teammates' responses, so report what you see.",
            "Play well: visit the districts early to learn their levels; serve the lowest districts first; supply "
            f"large amounts rather than small ones; plan your trips back to {p.supply_node}; move along roads only; "
            "say what you will do and build on your teammates' plans.",
            "Reply in JSON with these fields:",
            *(f"- {f}" for f in fields),
            "Only the response is shared; the other fields stay private.",
        ]
    )


def decision_messages(
    city: City,
    state: CityState,
    agent: str,
    memory: TeamMemory,
    tom: bool,
    ib: bool,
    feedback: list[str] | None = None,
    observation: Observation = "partial",
) -> list[dict[str, str]]:
    """Prompt for one try of one turn: role, rules and advice; every team response and every private note so far;
    what the agent observes now; and why this turn's earlier tries failed."""
    lines = [
        "Team responses so far (oldest first):",
        *(memory.shared or ["(none yet)"]),
        "Your private notes so far:",
        *(memory.private[agent] or ["(none yet)"]),
        "Now:",
        city.describe(state, agent, observation),
    ]
    if feedback:
        lines += ["Your earlier tries this turn failed:", *(f"- {f}" for f in feedback), "Answer again, all fields."]
    return [
        {"role": "system", "content": _system_prompt(city, agent, tom, ib)},
        {"role": "user", "content": "\n".join(lines)},
    ]


def translation_messages(agent: str, beliefs: str, verification: Verification = "authors") -> list[dict[str, str]]:
    """Prompt for translating internal beliefs into ASP: any program (``authors``) or facts of the vocabulary
    (``grounded``)."""
    if verification == "authors":
        system = (
            "Translate an agent's statements into an Answer Set Programming program for the clingo solver. Write "
            "facts such as at(food_agent, d2). or carries(food_agent, 100)., rules such as "
            "needs(D, food) :- low(D, food). and constraints such as :- at(food_agent, d1), at(food_agent, d2). "
            "that say which statements cannot hold together. Lower-case names; one statement per item, each ending "
            "with a period; no directives, negation, comparisons or nested terms."
        )
    else:
        vocab = "\n".join(f"- {text}" for text in VOCABULARY.values())
        names = ", ".join(a.lower() for a in AGENTS)
        system = (
            "Translate statements into Answer Set Programming facts. Use only these predicates (lower-case "
            f"constants; agents: {names}; resources: food, medicine, security; districts: d1..d4):\n{vocab}\n"
            "One fact per statement; skip statements that fit no predicate."
        )
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": f"Statements by {agent.lower()}:\n{beliefs}"},
    ]


def outcome(action: Action, agent: str, state: CityState) -> str:
    """What an executed action did, for the agent's private notes."""
    if action.kind == "MOVE":
        return f"moved to {action.arg}"
    if action.kind == "SUPPLY_RESOURCE":
        return f"supplied {action.arg} {ROLE[agent]} to {state.position[agent]}"
    return "did nothing"


class BDIAgent:
    """One role's LLM agent under a configuration (Base, ToM, IB, ToM+IB)."""

    def __init__(
        self,
        agent: str,
        chat: ChatModel,
        config: str = "ToM+IB",
        *,
        temperature: float = 0.7,
        max_tokens: int = 700,
        verification: Verification = "authors",
        observation: Observation = "partial",
    ) -> None:
        if agent not in AGENTS:
            raise ValueError(f"agent must be one of {AGENTS}; got {agent!r}")
        if config not in CONFIGS:
            raise ValueError(f"configuration must be one of {list(CONFIGS)}; got {config!r}")
        if verification not in VERIFICATIONS:
            raise ValueError(f"verification must be one of {VERIFICATIONS}; got {verification!r}")
        if observation not in OBSERVATIONS:
            raise ValueError(f"observation must be one of {OBSERVATIONS}; got {observation!r}")
        self.agent, self.chat, self.config = agent, chat, config
        self.tom, self.ib = CONFIGS[config]
        self.temperature, self.max_tokens = temperature, max_tokens
        self.verification, self.observation = verification, observation

    def _key(self, site: dict[str, Any], state: CityState, purpose: str) -> SampleKey:
        return SampleKey(
            experiment=site["experiment"],
            condition=site["condition"],
            episode=site["trial"],
            step=state.round * len(AGENTS) + state.turn,
            agent=self.agent,
            purpose=purpose,
        )

    async def _ask(self, messages: list[dict[str, str]], schema: type[BaseModel], key: SampleKey) -> BaseModel | None:
        try:
            reply = await self.chat.complete_json(
                messages, schema, sample_key=key, temperature=self.temperature, max_tokens=self.max_tokens
            )
        except StructuredOutputError:
            return None
        return reply.value

    async def turn(
        self,
        city: City,
        state: CityState,
        memory: TeamMemory,
        counters: Counters,
        site: dict[str, Any],
        emit: Emit = no_emit,
    ) -> Action:
        """One turn of the authors' loop (module docstring); returns the executed action (NONE when the tries ran
        out) and updates the memories."""
        schema = reply_schema(self.tom, self.ib)
        feedback: list[str] = []
        reply: Any = None
        action: Action | None = None
        for attempt in range(1, MAX_TRIES + 1):
            purpose = "decide" if attempt == 1 else f"retry{attempt - 1}"
            messages = decision_messages(city, state, self.agent, memory, self.tom, self.ib, feedback, self.observation)
            got = await self._ask(messages, schema, self._key(site, state, purpose))
            if attempt > 1:
                counters.revisions += 1
            if got is None:
                feedback.append("Your reply was not JSON with every field.")
                continue
            reply = got
            emit("belief", {"config": self.config, "attempt": attempt, **reply.model_dump()})
            if self.ib:
                problem = await self._verify(city, state, reply.internal_beliefs, counters, site, attempt, emit)
                if problem is not None:
                    feedback.append(problem)
                    continue
            try:
                action = city.parse_action(reply.action)
                city.check(state, self.agent, action)
            except IllegalCityAction as exc:
                action = None
                counters.invalid_actions += 1
                emit("action", {"illegal": reply.action, "feedback": str(exc), "attempt": attempt})
                feedback.append(f"Your action '{reply.action}' is illegal: {exc}")
                continue
            emit("action", {"action": str(action), "attempt": attempt})
            break
        if action is None:
            counters.failed_turns += 1
            why = "consistent beliefs and a legal action" if self.ib else "a legal action"
            emit("action", {"action": "NONE", "reason": f"no {why} in {MAX_TRIES} tries; the turn is lost"})
        response = getattr(reply, "response", "") if reply is not None else ""
        memory.shared.append(f"round {state.round + 1}, {self.agent}: {response}")
        if action is not None:  # the authors keep private notes only of a turn that succeeded
            notes = [f"round {state.round + 1}:"]
            if self.tom:
                notes.append(f"beliefs about others: {reply.beliefs_about_others}")
            if self.ib:
                notes.append(f"internal beliefs: {reply.internal_beliefs}")
            notes.append(f"action: {action} -> {outcome(action, self.agent, state)}")
            memory.private[self.agent].append(" | ".join(notes))
        return action or Action("NONE")

    async def _verify(
        self,
        city: City,
        state: CityState,
        beliefs: str,
        counters: Counters,
        site: dict[str, Any],
        attempt: int,
        emit: Emit,
    ) -> str | None:
        """Translate and check the beliefs; None when they are consistent, else what to tell the agent."""
        mode = self.verification
        if not beliefs.strip():
            counters.invalid_translations += 1
            emit("verification", {"attempt": attempt, "mode": mode, "beliefs": beliefs, "translation_error": "empty"})
            return "Your internal beliefs were empty, so they could not be checked. Write them out."
        schema: type[BaseModel] = Program if mode == "authors" else Translation
        statements: list[str] | None = None
        errors: list[str] = []
        for k in range(1, TRANSLATION_ATTEMPTS + 1):
            key = self._key(site, state, f"translate{attempt}.{k}")
            got: Any = await self._ask(translation_messages(self.agent, beliefs, mode), schema, key)
            try:
                if got is None:
                    raise TranslationError("the translator gave no usable JSON")
                statements = parse_program(got.statements) if mode == "authors" else parse_facts(got.facts)
                break
            except TranslationError as exc:
                errors.append(str(exc))
        if statements is None:
            counters.invalid_translations += 1
            emit(
                "verification",
                {"attempt": attempt, "mode": mode, "beliefs": beliefs, "translation_error": "; ".join(errors)},
            )
            return (
                "Your internal beliefs could not be translated into logic. Rephrase them as short, plain statements "
                "about where you are, what you carry, the levels you know and what you plan."
            )
        counters.verifications += 1
        verdict = self_consistent(statements) if mode == "authors" else verify(city, state, self.agent, statements)
        emit(
            "verification",
            {
                "attempt": attempt,
                "mode": mode,
                "beliefs": beliefs,
                "facts": list(statements),
                "consistent": verdict.consistent,
                "core": list(verdict.core),
                "violations": list(verdict.violations),
                "explanation": verdict.explanation,
                "timed_out": verdict.timed_out,
            },
        )
        if verdict.consistent:
            return None
        counters.inconsistencies += 1
        return f"Your internal beliefs are inconsistent. {verdict.explanation} Revise them and your plan."
