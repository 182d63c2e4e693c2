"""LLM ToM-k agents (``adaptive-tom-aaai2026.txt`` §3.4): state encoder → ToM module → decision module →
action controller.

- State encoder: :meth:`Game.describe` from the seat that is reasoning.
- ToM module: a ToM-k agent predicts its partner by asking for the decision of a hypothetical ToM-(k-1)
  agent in the partner's seat, which in turn predicts its own partner the same way (eq. 8), down to a ToM-0
  agent that decides from the state alone.
- Decision module: the state plus the predicted partner action → own action (eq. 9).
- Action controller: replies are JSON validated against the legal actions; an invalid reply is re-asked
  (bounded); if it never becomes valid, a legal action is drawn from the agent's stream and the fallback is
  logged, so one bad reply cannot end an experiment.

Every call goes through :mod:`tomlib.llm` with a sample key naming experiment, condition, episode, step,
the agent's seat and the reasoning level, so a rerun replays exactly.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from tomlib.agents._base import SEATS, Agent, Decision, Predictor, Responder
from tomlib.envs import Game
from tomlib.llm import ChatModel, SampleKey, StructuredOutputError

HISTORY_STEPS = 10
"""How many of the last joint actions a prompt shows (0: none). A third party's reading of the authors' Overcooked
code puts an action history in every step's prompt; its length is not known, and 10 steps keep a 100-step episode's
prompts short. Games whose memory is the setting (the matrix game) show none whatever this is."""


@lru_cache(maxsize=256)
def reply_schema(legal: tuple[str, ...]) -> type[BaseModel]:
    """``{"thought": str, "action": <one of the legal actions>}``."""
    return create_model(
        "ActionReply",
        thought=(str, Field(max_length=160, description="One short sentence of reasoning.")),
        action=(Literal[legal], Field(description="Exactly one of the legal actions.")),  # type: ignore[valid-type]
    )


def decision_messages(
    game: Game, state: Any, seat: int, order: int, prediction: str | None, history: str = ""
) -> list[dict[str, str]]:
    """Prompt for one decision of a ToM-``order`` player in ``seat`` (our wording); ``history`` is the game's
    account of the last joint actions (:meth:`Game.describe_history`), or "" for none."""
    system = (
        "You are playing a cooperative two-player game. You and your partner share every point, act at the "
        "same time and cannot talk, so you have to coordinate by reasoning about each other. Answer in JSON."
    )
    if order == 0 or prediction is None:
        guidance = (
            "Treat your partner as part of the environment: do not try to predict what it will do. "
            "Choose the action that is best for the team given the state."
        )
    else:
        guidance = (
            f"You expect your partner to play {prediction!r} this step. Choose the action that works best "
            "together with that prediction."
        )
    past = f"{history}\n\n" if history else ""
    user = f"{game.describe(state, seat)}\n\n{past}{guidance}\nGive a short thought, then your action."
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


class LLMToM:
    """The ToM and decision modules shared by LLM ToM-k agents, A-ToM's predictors and its responder."""

    def __init__(
        self,
        chat: ChatModel,
        *,
        temperature: float = 0.1,
        max_tokens: int = 96,
        max_attempts: int = 3,
        history_steps: int = HISTORY_STEPS,
    ) -> None:
        self.chat = chat
        self.history_steps = int(history_steps)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_attempts = max_attempts

    async def decide(
        self, agent: Agent, state: Any, seat: int, order: int, prediction: str | None, purpose: str
    ) -> str:
        """One decision of a (possibly hypothetical) player in ``seat``; logged as a ``belief`` event."""
        game = agent.game
        legal = game.legal_actions(state, seat)
        key = SampleKey(
            experiment=agent.site.experiment,
            condition=agent.site.condition,
            episode=agent.site.episode,
            step=agent.t,
            agent=SEATS[agent.player],
            purpose=purpose,
        )
        thought, fallback = "", None
        try:
            past = agent.history[-self.history_steps :] if self.history_steps > 0 else []
            first = len(agent.history) - len(past) + 1
            reply = await self.chat.complete_json(
                decision_messages(game, state, seat, order, prediction, game.describe_history(past, seat, first)),
                reply_schema(tuple(legal)),
                sample_key=key,
                temperature=self.temperature,
                max_tokens=self.max_tokens,
                max_attempts=self.max_attempts,
            )
            action, thought = reply.value.action, reply.value.thought  # type: ignore[attr-defined]
        except StructuredOutputError as exc:
            action = agent.rng.choice(legal)
            fallback = str(exc)
        agent.emit(
            "belief",
            {
                "purpose": purpose,
                "seat": SEATS[seat],
                "order": order,
                "prediction": prediction,
                "action": action,
                "thought": thought,
                "controller_fallback": fallback,
            },
        )
        return action

    async def chain(self, agent: Agent, state: Any, seat: int, order: int, memo: dict[tuple[int, int], str]) -> str:
        """The action of a ToM-``order`` player in ``seat``, predicting its partner recursively (eq. 8-9)."""
        if (seat, order) in memo:
            return memo[(seat, order)]
        prediction = None if order == 0 else await self.chain(agent, state, 1 - seat, order - 1, memo)
        action = await self.decide(agent, state, seat, order, prediction, f"order{order}@{SEATS[seat]}")
        memo[(seat, order)] = action
        return action


class LLMToMAgent(Agent):
    """A fixed-order LLM ToM-k agent."""

    def __init__(self, order: int, llm: LLMToM):
        self.order = int(order)
        self.llm = llm
        self.name = f"ToM-{self.order}"

    async def act(self, state: Any) -> Decision:
        memo: dict[tuple[int, int], str] = {}
        action = await self.llm.chain(self, state, self.player, self.order, memo)
        predicted = memo.get((1 - self.player, self.order - 1)) if self.order > 0 else None
        self.emit("prediction", {"order": self.order, "predicted_partner_action": predicted})
        return Decision(action, {"predicted_partner_action": predicted, "order": self.order})


class LLMPredictor(Predictor):
    """A-ToM's hypothetical partners as LLM ToM-k chains; levels shared within a step are asked once."""

    def __init__(self, llm: LLMToM):
        self.llm = llm
        self._memo: dict[tuple[int, int], str] = {}
        self._memo_at: tuple[int, int, int] | None = None

    async def predict(self, agent: Agent, state: Any, order: int) -> str:
        at = (id(agent), agent.site.episode, agent.t)
        if at != self._memo_at:
            self._memo, self._memo_at = {}, at
        return await self.llm.chain(agent, state, 1 - agent.player, order, self._memo)


class LLMResponder(Responder):
    """A-ToM's decision module: the ego's action given the chosen prediction."""

    def __init__(self, llm: LLMToM):
        self.llm = llm

    async def respond(self, agent: Agent, state: Any, predicted: str) -> Decision:
        action = await self.llm.decide(agent, state, agent.player, 1, predicted, f"respond@{SEATS[agent.player]}")
        return Decision(action, {})
