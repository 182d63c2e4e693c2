"""Formal ToM-k agents and the formal predictor/responder pair used by A-ToM (no LLM)."""

from __future__ import annotations

import random
from typing import Any

from tomlib.agents._base import Agent, Decision, Predictor, Responder
from tomlib.tom import TieBreak, action_distribution, best_responses, tie_stream, tom_reasoning


def _levels(chain: tuple[Any, ...]) -> list[dict[str, Any]]:
    return [{"order": lv.order, "player": lv.player, "belief": lv.belief, "action": lv.action} for lv in chain]


class FormalToMAgent(Agent):
    """An exact ToM-k player (``adaptive-tom-aaai2026.txt`` eq. 3-9). The paper says nothing of ties: the tie model
    is :func:`tomlib.tom.tie_stream`'s (``independent`` draws, or a ``shared`` default with independent draws at
    probability ``tie_epsilon``)."""

    immediate = True

    def __init__(self, order: int, tie_break: TieBreak = "independent", tie_epsilon: float = 0.0):
        tie_stream(random.Random(), tie_break, tie_epsilon)  # checks both now, not at the first episode
        self.order = int(order)
        self.tie_break, self.tie_epsilon = tie_break, tie_epsilon
        self.name = f"ToM-{self.order}"

    def start_episode(self, *args: Any, **kwargs: Any) -> None:
        super().start_episode(*args, **kwargs)
        self.rng = tie_stream(self.rng, self.tie_break, self.tie_epsilon)

    async def act(self, state: Any) -> Decision:
        chain = tom_reasoning(self.game, state, self.player, self.order, self.rng)
        top = chain[-1]
        if self.logs_steps:
            self.emit(
                "prediction", {"order": self.order, "predicted_partner_action": top.belief, "levels": _levels(chain)}
            )
        return Decision(top.action, {"predicted_partner_action": top.belief, "order": self.order})


class FormalPredictor(Predictor):
    """A hypothetical formal ToM-k partner, reasoning from the partner's seat."""

    async def predict(self, agent: Agent, state: Any, order: int) -> str:
        return tom_reasoning(agent.game, state, 1 - agent.player, order, agent.rng)[-1].action

    def distribution(self, agent: Agent, state: Any, order: int) -> dict[str, float]:
        """The chance the hypothetical partner takes each action, its ties drawn evenly
        (:func:`tomlib.tom.action_distribution`)."""
        return action_distribution(agent.game, state, 1 - agent.player, order)


class FormalResponder(Responder):
    """The exact best response to a predicted partner action (ties by the agent's stream)."""

    async def respond(self, agent: Agent, state: Any, predicted: str) -> Decision:
        options = best_responses(agent.game, state, agent.player, predicted)
        action = options[0] if len(options) == 1 else agent.rng.choice(options)
        return Decision(action, {"best_responses": list(options)})
