"""The adaptive ToM agent, A-ToM (``adaptive-tom-aaai2026.txt`` §3.3, Algorithms 1 and 2).

Hypothetical partners of ToM orders 0, 1 and 2 are experts that each predict the partner's action. FTL
(Algorithm 1) follows the expert with the smallest cumulative loss; Hedge (Algorithm 2) samples an expert
from weights w_k ← w_k · exp(−η · loss_k). The ego then best-responds to the chosen prediction and, once
the partner's real action is seen, charges a loss of 1 to every expert that predicted wrong.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any, Literal

from tomlib.agents._base import Agent, Decision, Emit, Predictor, Responder, Site, no_emit
from tomlib.agents.formal import FormalPredictor, FormalResponder
from tomlib.envs import Game
from tomlib.tom import TieBreak, tie_stream

Algorithm = Literal["ftl", "hedge"]
EXPERT_PREDICTIONS: tuple[str, ...] = ("draw", "flat", "expected")
"""How a formal expert predicts and is charged (the paper's Algorithms give one predicted action and a 0/1 loss, and
leave ties open): ``draw``, one action with the recursion's ties drawn from the agent's stream, charged 1 on a miss;
``flat``, one action drawn evenly from every action the expert might take under any resolution of its ties, charged 1
on a miss; ``expected``, charged the chance that the expert would not have predicted the partner's action (§3.3's
"prediction accuracy"), its prediction drawn from that same law."""


class AdaptiveToMAgent(Agent):
    """A-ToM over ToM orders ``orders`` with FTL or Hedge (η = ``eta``). The paper does not say whether the
    experts' losses carry from one episode to the next: by default they start afresh every episode
    (``carry_losses=False``); with ``True`` the same agent keeps them across the episodes it plays. Nor does it say
    how an expert predicts among equally good actions (``expert_prediction``, :data:`EXPERT_PREDICTIONS`)."""

    def __init__(
        self,
        algorithm: Algorithm = "hedge",
        *,
        orders: Sequence[int] = (0, 1, 2),
        eta: float = 1.0,
        predictor: Predictor | None = None,
        responder: Responder | None = None,
        tie_break: TieBreak = "independent",
        tie_epsilon: float = 0.0,
        carry_losses: bool = False,
        expert_prediction: str = "draw",
    ):
        algorithm = algorithm.lower()  # type: ignore[assignment]
        if expert_prediction not in EXPERT_PREDICTIONS:
            raise ValueError(
                f"expert_prediction must be one of {', '.join(EXPERT_PREDICTIONS)}; got {expert_prediction!r}"
            )
        if algorithm not in ("ftl", "hedge"):
            raise ValueError(f"A-ToM algorithm must be 'ftl' (Algorithm 1) or 'hedge' (Algorithm 2); got {algorithm!r}")
        self.algorithm: Algorithm = algorithm
        self.orders = tuple(orders)
        self.eta = float(eta)
        tie_stream(random.Random(), tie_break, tie_epsilon)
        self.tie_break, self.tie_epsilon = tie_break, tie_epsilon
        self.carry_losses = carry_losses
        self.losses: list[float] = []
        self.predictor = predictor or FormalPredictor()
        self.responder = responder or FormalResponder()
        if expert_prediction != "draw" and not isinstance(self.predictor, FormalPredictor):
            raise ValueError(
                f"expert_prediction={expert_prediction!r} needs the experts' tie law, which only formal experts have; "
                "LLM experts predict by drawing (expert_prediction='draw')"
            )
        self.expert_prediction = expert_prediction
        self.immediate = isinstance(self.predictor, FormalPredictor) and isinstance(self.responder, FormalResponder)
        self._laws: list[dict[str, float]] | None = None
        self.name = f"A-ToM ({'FTL' if algorithm == 'ftl' else 'Hedge'})"

    def start_episode(
        self, game: Game, player: int, rng: random.Random, emit: Emit = no_emit, site: Site | None = None
    ) -> None:
        super().start_episode(game, player, tie_stream(rng, self.tie_break, self.tie_epsilon), emit, site)
        if not (self.carry_losses and self.losses):  # the paper does not say; per episode unless asked
            self.losses = [0.0 for _ in self.orders]  # Algorithm 1, line 2
            self.weights = [1.0 for _ in self.orders]  # Algorithm 2, line 2
        self._pending: list[str] | None = None
        self.trajectory: list[list[float]] = []  # P^(k) at each step of this episode, before acting

    def probabilities(self) -> list[float]:
        """Normalized expert weights P^(k) (Algorithm 2, line 7); FTL puts all mass on its leader."""
        if self.algorithm == "ftl":
            leader = self._leader()
            return [1.0 if i == leader else 0.0 for i in range(len(self.orders))]
        total = sum(self.weights)
        return [w / total for w in self.weights]

    def _leader(self) -> int:
        best = min(self.losses)
        return self.losses.index(best)  # argmin: the lowest order among tied leaders

    async def _predict(self, state: Any) -> list[str]:
        """Each expert's predicted partner action (:data:`EXPERT_PREDICTIONS`); the tie laws kept for the losses."""
        if self.expert_prediction == "draw":
            self._laws = None
            return [await self.predictor.predict(self, state, k) for k in self.orders]
        predictor: FormalPredictor = self.predictor  # type: ignore[assignment]
        laws = [predictor.distribution(self, state, k) for k in self.orders]
        self._laws = laws
        if self.expert_prediction == "flat":
            return [self.rng.choice(list(law)) for law in laws]
        return [self.rng.choices(list(law), weights=list(law.values()))[0] for law in laws]

    async def act(self, state: Any) -> Decision:
        predictions = await self._predict(state)
        probs = self.probabilities()
        self.trajectory.append(probs)
        if self.algorithm == "ftl":
            chosen = self._leader()
        else:
            chosen = self.rng.choices(range(len(self.orders)), weights=probs)[0]
        self._pending = predictions
        predicted = predictions[chosen]
        if self.logs_steps:
            self.emit(
                "expert_weights",
                {
                    "algorithm": self.algorithm,
                    "orders": list(self.orders),
                    "probabilities": probs,
                    "weights": list(self.weights),
                    "losses": list(self.losses),
                    "predictions": predictions,
                    "chosen_order": self.orders[chosen],
                    **({"expert_prediction": self.expert_prediction} if self.expert_prediction != "draw" else {}),
                },
            )
            self.emit("prediction", {"predicted_partner_action": predicted, "chosen_order": self.orders[chosen]})
        decision = await self.responder.respond(self, state, predicted)
        decision.detail.update({"predicted_partner_action": predicted, "chosen_order": self.orders[chosen]})
        return decision

    def observe(self, state: Any, joint: Sequence[str], next_state: Any) -> None:
        """Charge a loss to every expert whose prediction missed (Algorithm 1 l. 13-17, Algorithm 2 l. 14-21)."""
        if self._pending is None:
            return
        actual = joint[1 - self.player]
        for i, predicted in enumerate(self._pending):
            if self.expert_prediction == "expected" and self._laws is not None:
                loss = 1.0 - self._laws[i].get(actual, 0.0)
            else:
                loss = 0.0 if predicted == actual else 1.0
            self.losses[i] += loss
            self.weights[i] *= math.exp(-self.eta * loss)
        top = max(self.weights)
        self.weights = [w / top for w in self.weights]  # same probabilities; no underflow on long episodes
        self._pending = None
        if self.logs_steps:
            self.emit(
                "alignment",
                {"partner_action": actual, "losses": list(self.losses), "probabilities": self.probabilities()},
            )
