"""LLM agents with Theory of Mind and internal beliefs (``tom-internal-beliefs-asp.txt`` §3.2-§3.3, Fig. 3-4).

Each turn an agent answers in up to four sections: *Beliefs about others* (ToM), *Internal beliefs* (IB, short
statements meant for logical translation), *Response* (broadcast to the team's shared memory) and *Action*.
The configurations Base / ToM / IB / ToM+IB switch the first two on and off. With IB on, the internal beliefs
are translated into ASP facts (an LLM call), checked by clingo (:mod:`tomlib.asp`), and when they are
inconsistent the agent gets the minimal core explained in plain words and may revise, up to three attempts.
An illegal action gets the simulation's feedback and may be corrected. Every call goes through
:mod:`tomlib.llm` with a sample key; every step is logged (sections, action, feedback, verification).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Annotated, Any

from pydantic import BaseModel, Field, StringConstraints, create_model

from tomlib.agents._base import Emit, no_emit
from tomlib.asp import VOCABULARY, TranslationError, parse_facts, verify
from tomlib.envs.city import AGENTS, ROLE, Action, City, CityState, IllegalCityAction
from tomlib.llm import ChatModel, SampleKey, StructuredOutputError

CONFIGS: dict[str, tuple[bool, bool]] = {
    "Base": (False, False),
    "ToM": (True, False),
    "IB": (False, True),
    "ToM+IB": (True, True),
}
MAX_VERIFY_ATTEMPTS = 3
Statement = Annotated[str, StringConstraints(max_length=120)]
Fact = Annotated[str, StringConstraints(max_length=80)]


@lru_cache(maxsize=8)
def reply_schema(tom: bool, ib: bool) -> type[BaseModel]:
    """The sections an agent must produce under a configuration."""
    fields: dict[str, Any] = {}
    if tom:
        fields["beliefs_about_others"] = (
            str,
            Field(description="What you expect each other agent to do next, and why."),
        )
    if ib:
        fields["internal_beliefs"] = (
            list[str],
            Field(description="Short factual statements about the state and your plan, one fact each."),
        )
    fields["response"] = (str, Field(description="Your message to the team: where you are, what you plan, requests."))
    fields["action"] = (str, Field(description="Exactly one of MOVE(district), SUPPLY_RESOURCE(amount), NONE."))
    return create_model(f"Reply{'ToM' if tom else ''}{'IB' if ib else ''}", **fields)


class Translation(BaseModel):
    """Internal beliefs as ASP facts."""

    facts: list[Fact] = Field(max_length=8, description="One ASP fact per belief, using only the given predicates.")


@dataclass
class Counters:
    """What went wrong during one run (§4.3's analysis; our counters)."""

    invalid_actions: int = 0
    invalid_translations: int = 0
    inconsistencies: int = 0
    verifications: int = 0
    revisions: int = 0


@dataclass
class TeamMemory:
    """Shared memory (everyone's Responses) and each agent's private memory (its own sections)."""

    shared: list[str] = field(default_factory=list)
    private: dict[str, list[str]] = field(default_factory=lambda: {a: [] for a in AGENTS})
    window: int = 6


def _system_prompt(city: City, agent: str, tom: bool, ib: bool) -> str:
    p = city.params
    sections = []
    if tom:
        sections.append(
            "beliefs_about_others: predict what each other agent will do next and why, from its role and what it said"
        )
    if ib:
        sections.append(
            "internal_beliefs: a list of short factual statements about where you are, what you carry, "
            "district levels, which districts are connected, and the action you plan"
        )
    sections += [
        "response: a short message to your teammates",
        "action: MOVE(district), SUPPLY_RESOURCE(amount) or NONE",
    ]
    return (
        f"You are {agent} in a team of three agents keeping a city healthy. You deliver only {ROLE[agent]}; the "
        "others deliver the other two resources. Every non-supply district consumes "
        f"{p.consumption} units of each resource per round and loses health when a level falls below 20. "
        f"You refill in {p.supply_node}. Agents act one after another and share their responses. "
        "Coordinate so that no district runs short. Reply in JSON with these fields: " + "; ".join(sections) + "."
    )


def decision_messages(
    city: City, state: CityState, agent: str, memory: TeamMemory, tom: bool, ib: bool, feedback: str | None = None
) -> list[dict[str, str]]:
    """Prompt for one turn (our wording): role and rules, recent team messages, own notes, the state."""
    shared = memory.shared[-memory.window :] or ["(nothing yet)"]
    private = memory.private[agent][-3:] or ["(nothing yet)"]
    user = "\n".join(
        [
            "Team messages so far:",
            *shared,
            "Your own earlier notes:",
            *private,
            "Current situation:",
            city.describe(state, agent),
        ]
    )
    messages = [{"role": "system", "content": _system_prompt(city, agent, tom, ib)}, {"role": "user", "content": user}]
    if feedback:
        messages.append({"role": "user", "content": f"{feedback}\nAnswer again with all fields."})
    return messages


def translation_messages(agent: str, beliefs: list[str]) -> list[dict[str, str]]:
    """Prompt for translating internal beliefs into ASP facts over the documented vocabulary."""
    vocab = "\n".join(f"- {text}" for text in VOCABULARY.values())
    names = ", ".join(a.lower() for a in AGENTS)
    return [
        {
            "role": "system",
            "content": "Translate statements into Answer Set Programming facts. Use only these predicates "
            f"(lower-case constants; agents: {names}; resources: food, medicine, security; districts: d1..d4):\n"
            f"{vocab}\nOne fact per statement; skip statements that fit no predicate.",
        },
        {"role": "user", "content": f"Statements by {agent.lower()}:\n" + "\n".join(f"- {b}" for b in beliefs)},
    ]


class BDIAgent:
    """One role's LLM agent under a configuration (Base, ToM, IB, ToM+IB)."""

    def __init__(
        self, agent: str, chat: ChatModel, config: str = "ToM+IB", *, temperature: float = 0.7, max_tokens: int = 400
    ) -> None:
        if agent not in AGENTS:
            raise ValueError(f"agent must be one of {AGENTS}; got {agent!r}")
        if config not in CONFIGS:
            raise ValueError(f"configuration must be one of {list(CONFIGS)}; got {config!r}")
        self.agent, self.chat, self.config = agent, chat, config
        self.tom, self.ib = CONFIGS[config]
        self.temperature, self.max_tokens = temperature, max_tokens

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
        """Decide (verify and revise beliefs if IB is on; correct an illegal action), update the memories."""
        schema = reply_schema(self.tom, self.ib)
        feedback: str | None = None
        reply: Any = None
        for attempt in range(1, MAX_VERIFY_ATTEMPTS + 1):
            purpose = "decide" if attempt == 1 else f"revise{attempt - 1}"
            reply = await self._ask(
                decision_messages(city, state, self.agent, memory, self.tom, self.ib, feedback),
                schema,
                self._key(site, state, purpose),
            )
            if reply is None:
                break
            if attempt > 1:
                counters.revisions += 1
            emit("belief", {"config": self.config, "attempt": attempt, **reply.model_dump()})
            if not self.ib:
                break
            feedback = await self._verify(city, state, reply.internal_beliefs, counters, site, attempt, emit)
            if feedback is None:
                break
        action = await self._act(city, state, memory, reply, counters, site, emit)
        response = getattr(reply, "response", "") if reply is not None else ""
        memory.shared.append(f"round {state.round + 1}, {self.agent}: {response}")
        notes = {k: v for k, v in (reply.model_dump() if reply is not None else {}).items() if k != "response"}
        memory.private[self.agent].append(f"round {state.round + 1}: {notes} -> {action}")
        return action

    async def _verify(
        self,
        city: City,
        state: CityState,
        beliefs: list[str],
        counters: Counters,
        site: dict[str, Any],
        attempt: int,
        emit: Emit,
    ) -> str | None:
        """Translate and check the beliefs; return feedback for a revision, or None when they are fine."""
        if not beliefs:
            return None
        translation = await self._ask(
            translation_messages(self.agent, beliefs), Translation, self._key(site, state, f"translate{attempt}")
        )
        try:
            if translation is None:
                raise TranslationError("the translator gave no usable JSON")
            facts = parse_facts(translation.facts)  # type: ignore[attr-defined]
        except TranslationError as exc:
            counters.invalid_translations += 1
            emit("verification", {"attempt": attempt, "beliefs": beliefs, "translation_error": str(exc)})
            return None  # nothing checkable: the beliefs stand unverified (counted)
        counters.verifications += 1
        verdict = verify(city, state, self.agent, facts)
        emit(
            "verification",
            {
                "attempt": attempt,
                "beliefs": beliefs,
                "facts": list(facts),
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
        if attempt == MAX_VERIFY_ATTEMPTS:
            return None
        return f"Your internal beliefs are inconsistent. {verdict.explanation} Revise your beliefs (and plan)."

    async def _act(
        self,
        city: City,
        state: CityState,
        memory: TeamMemory,
        reply: Any,
        counters: Counters,
        site: dict[str, Any],
        emit: Emit,
    ) -> Action:
        text = getattr(reply, "action", "") if reply is not None else ""
        for correction in range(city.params.corrections + 1):
            try:
                action = city.parse_action(text)
                city.check(state, self.agent, action)
                emit("action", {"action": str(action), "corrections": correction})
                return action
            except IllegalCityAction as exc:
                counters.invalid_actions += 1
                emit("action", {"illegal": text, "feedback": str(exc), "corrections": correction})
                if correction == city.params.corrections:
                    break
                feedback = f"Your action '{text}' is illegal: {exc} Choose a legal action."
                fixed = await self._ask(
                    decision_messages(city, state, self.agent, memory, self.tom, self.ib, feedback),
                    reply_schema(self.tom, self.ib),
                    self._key(site, state, f"correct{correction + 1}"),
                )
                text = getattr(fixed, "action", "") if fixed is not None else ""
        emit("action", {"action": "NONE", "reason": "no legal action after corrections"})
        return Action("NONE")
