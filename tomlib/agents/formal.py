"""Formal ToM-k agents and the formal predictor/responder pair used by A-ToM (no LLM)."""

from __future__ import annotations

from typing import Any

from tomlib.agents._base import Agent, Decision, Predictor, Responder
from tomlib.tom import FirstOfTies, best_responses, tom_reasoning


def _levels(chain: tuple[Any, ...]) -> list[dict[str, Any]]:
    return [{"order": lv.order, "player": lv.player, "belief": lv.belief, "action": lv.action} for lv in chain]


class FormalToMAgent(Agent):
    """An exact ToM-k player (``adaptive-tom-aaai2026.txt`` eq. 3-9). Ties are broken by the agent's own
    random stream (``tie_break="random"``) or by taking the first tied option (``"first"``)."""

    def __init__(self, order: int, tie_break: str = "random"):
        if tie_break not in ("random", "first"):
            raise ValueError(f"tie_break must be 'random' or 'first'; got {tie_break!r}")
        self.order = int(order)
        self.tie_break = tie_break
        self.name = f"ToM-{self.order}"

    def start_episode(self, *args: Any, **kwargs: Any) -> None:
        super().start_episode(*args, **kwargs)
        if self.tie_break == "first":
            self.rng = FirstOfTies()

    async def act(self, state: Any) -> Decision:
        chain = tom_reasoning(self.game, state, self.player, self.order, self.rng)
        top = chain[-1]
        self.emit("prediction", {"order": self.order, "predicted_partner_action": top.belief, "levels": _levels(chain)})
        return Decision(top.action, {"predicted_partner_action": top.belief, "order": self.order})


class FormalPredictor(Predictor):
    """A hypothetical formal ToM-k partner, reasoning from the partner's seat."""

    async def predict(self, agent: Agent, state: Any, order: int) -> str:
        return tom_reasoning(agent.game, state, 1 - agent.player, order, agent.rng)[-1].action


class FormalResponder(Responder):
    """The exact best response to a predicted partner action (ties by the agent's stream)."""

    async def respond(self, agent: Agent, state: Any, predicted: str) -> Decision:
        options = best_responses(agent.game, state, agent.player, predicted)
        action = options[0] if len(options) == 1 else agent.rng.choice(options)
        return Decision(action, {"best_responses": list(options)})
