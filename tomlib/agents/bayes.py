"""A Bayesian ToM agent: the worked example of issue 57's agent protocol, and the default agent of notebook 15.

It does what A-ToM does (``adaptive-tom-aaai2026.txt`` §3.3) with a posterior instead of expert losses: it keeps a
belief over the partner's ToM order k ∈ {0, 1, 2}, in which a ToM-k partner's action has the law of a formal ToM-k
player with its ties drawn evenly (:func:`tomlib.tom.action_distribution`, eq. 3-9) and, with chance ``epsilon``, any
legal action. Each step it best-responds to the partner's predicted action law under the posterior (the expected
joint value, eq. 9 with a mixed belief), then updates the posterior by Bayes' rule on the partner's real action.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

from tomlib.agents._base import Agent, Decision, Emit, Site, no_emit
from tomlib.envs import Game
from tomlib.tom import action_distribution, joint


class BayesToMAgent(Agent):
    """Best-responds to a posterior over the partner's ToM order.

    Args:
        epsilon: the chance, in the agent's model of its partner, that the partner takes any legal action instead of
            its order's (so no order is ever ruled out by one surprising move); in (0, 1].
        orders: the partner orders it weighs (a subset of 0, 1, 2).
        prior: the prior over ``orders`` (default: uniform); renormalised.
        carry: keep the posterior from one episode to the next (default: start afresh, as A-ToM's default does).
    """

    immediate = True
    name = "Bayes-ToM"

    def __init__(
        self,
        epsilon: float = 0.1,
        orders: Sequence[int] = (0, 1, 2),
        prior: Sequence[float] | None = None,
        carry: bool = False,
    ):
        if not 0 < float(epsilon) <= 1:
            raise ValueError(f"epsilon is a probability in (0, 1]; got {epsilon!r}")
        self.orders = tuple(int(k) for k in orders)
        if not self.orders or any(k not in (0, 1, 2) for k in self.orders):
            raise ValueError(f"orders must be a non-empty subset of 0, 1, 2; got {orders!r}")
        weights = [1.0] * len(self.orders) if prior is None else [float(p) for p in prior]
        if len(weights) != len(self.orders) or any(p < 0 for p in weights) or sum(weights) <= 0:
            raise ValueError(f"prior needs one non-negative weight per order {self.orders}; got {prior!r}")
        self.epsilon = float(epsilon)
        self.prior = tuple(p / sum(weights) for p in weights)
        self.carry = carry
        self.posterior = self.prior

    def start_episode(
        self, game: Game, player: int, rng: random.Random, emit: Emit = no_emit, site: Site | None = None
    ) -> None:
        super().start_episode(game, player, rng, emit, site)
        if not self.carry:
            self.posterior = self.prior
        self._laws: tuple[Any, list[dict[str, float]]] | None = None

    def _partner_laws(self, state: Any) -> list[dict[str, float]]:
        """The partner's action law under each order, in ``state`` (kept for :meth:`observe`)."""
        if self._laws is None or self._laws[0] is not state:
            partner = 1 - self.player
            self._laws = (state, [action_distribution(self.game, state, partner, k) for k in self.orders])
        return self._laws[1]

    async def act(self, state: Any) -> Decision:
        laws = self._partner_laws(state)
        belief: dict[str, float] = {}
        for weight, law in zip(self.posterior, laws, strict=True):
            for action, p in law.items():
                belief[action] = belief.get(action, 0.0) + weight * p
        game, me = self.game, self.player
        likely = max(belief, key=belief.__getitem__)  # among equal values, the game's preference given this one
        keyed = []
        for mine in game.legal_actions(state, me):
            value = sum(p * game.joint_value(state, joint(me, mine, theirs)) for theirs, p in belief.items() if p > 0)
            keyed.append((round(value, 9), game.preference(state, joint(me, mine, likely), me)))
        top = max(keyed)
        options = [a for a, k in zip(game.legal_actions(state, me), keyed, strict=True) if k == top]
        action = options[0] if len(options) == 1 else self.rng.choice(options)
        detail = {"posterior": {f"ToM-{k}": round(p, 6) for k, p in zip(self.orders, self.posterior, strict=True)}}
        if self.logs_steps:
            self.emit("belief", detail)
        return Decision(action, detail)

    def observe(self, state: Any, joint_action: Sequence[str], next_state: Any) -> None:
        """Bayes' rule on the partner's action: P(k | a) ∝ P(k) · ((1 - ε) p_k(a) + ε / |legal|)."""
        theirs = joint_action[1 - self.player]
        legal = len(self.game.legal_actions(state, 1 - self.player))
        laws = self._partner_laws(state)
        eps = self.epsilon
        weights = [
            w * ((1 - eps) * law.get(theirs, 0.0) + eps / legal) for w, law in zip(self.posterior, laws, strict=True)
        ]
        total = math.fsum(weights)
        self.posterior = tuple(w / total for w in weights)
