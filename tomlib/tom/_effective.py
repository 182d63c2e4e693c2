"""Which ToM order an agent really plays (issue 57): the exact ToM-0/1/2 players say what each order would choose at
every step, and an ε-noise model of each order turns an agent's actions into a likelihood per order.

Under order k an action a has the chance P(a | k) = (1 - ε) p_k(a) + ε / |A|, where p_k is the law of a formal ToM-k
player's action with its ties drawn evenly (:func:`action_distribution`, eq. 3-9) and |A| the legal actions: the
player takes its order's choice, or any legal action with chance ε. Steps are independent given the order, so an
episode's log-likelihood is the sum over its steps; episodes are independent, so a posterior pools them. Steps where
the three orders' laws are equal (an *uninformative* step) add the same to every order and cannot tell them apart.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from statsmodels.stats.proportion import proportion_confint

from tomlib.envs import Game
from tomlib.tom._formal import action_distribution

ORDERS = (0, 1, 2)
EPSILON = 0.1
"""The default noise: the chance, under each order's model, of any legal action instead of the order's. One
surprising move then costs an order about log(ε / |A|) instead of ruling it out; 0.1 is the noise the estimator is
validated at (``benchmarks/bench_effective_order.py``: formal ToM-k agents with ε = 0.1)."""


def order_choices(game: Game, state: Any, player: int) -> dict[int, dict[str, float]]:
    """What a ToM-0, ToM-1 and ToM-2 player in ``player``'s seat would choose in ``state``: each order's law
    (:func:`action_distribution`; its recursion's best responses are kept per state by the game).

    Args:
        game: the task.
        state: the state, with the history the recursion reads.
        player: the seat (0 or 1).
    """
    return {k: action_distribution(game, state, player, k) for k in ORDERS}


def replay_states(game: Game, seed: int, joints: Sequence[Sequence[str]]) -> list[Any]:
    """The state before each joint action of an episode played from ``game.reset(seed)``.

    Args:
        game: the task the episode was played in.
        seed: the seed its initial state was made from.
        joints: the joint actions in seat order, step by step.
    """
    state = game.reset(seed)
    states = []
    for joint in joints:
        states.append(state)
        state = game.step(state, tuple(joint))
    return states


def _informative(laws: dict[int, dict[str, float]]) -> bool:
    """Whether the orders' laws differ at all (to rounding): only such a step can tell orders apart."""
    first = laws[ORDERS[0]]
    return any(
        set(law) != set(first) or any(abs(law[a] - first[a]) > 1e-12 for a in law) for law in list(laws.values())[1:]
    )


@dataclass(frozen=True)
class EpisodeOrders:
    """One seat of one episode under the ε-noise model of each order.

    Attributes:
        loglik: the log-likelihood of the seat's actions under ToM-0, ToM-1 and ToM-2.
        steps: the steps the seat acted in.
        informative: the steps where the orders' laws differ (the only ones that weigh one order against another).
        matches: per order, the steps whose action the order might have taken (p_k(a) > 0).
    """

    loglik: tuple[float, ...]
    steps: int
    informative: int
    matches: tuple[int, ...] = (0, 0, 0)

    def posterior(self, prior: Sequence[float] | None = None) -> tuple[float, ...]:
        """P(order | this seat's actions) from ``prior`` (uniform by default)."""
        return _posterior(self.loglik, prior)

    @property
    def map_order(self) -> int | None:
        """The order most likely to have played, or None when no step could tell the orders apart."""
        if not self.informative:
            return None
        return max(ORDERS, key=lambda k: self.loglik[k])

    def lead(self, order: int) -> float:
        """How much better ``order`` explains the actions than the best other order, in nats per step:
        (log L_order - max_j≠order log L_j) / steps. Positive: the agent plays as ``order``."""
        if not self.steps:
            return 0.0
        best_other = max(self.loglik[k] for k in ORDERS if k != order)
        return (self.loglik[order] - best_other) / self.steps


def _posterior(loglik: Sequence[float], prior: Sequence[float] | None) -> tuple[float, ...]:
    logp = [
        ll + math.log(p) if p > 0 else -math.inf for ll, p in zip(loglik, prior or [1.0] * len(loglik), strict=True)
    ]
    top = max(logp)
    scaled = [math.exp(v - top) for v in logp]
    total = math.fsum(scaled)
    return tuple(w / total for w in scaled)


def step_laws(game: Game, seed: int, joints: Sequence[Sequence[str]], player: int) -> list[dict[int, dict[str, float]]]:
    """Each order's law at every step of ``player``'s seat in an episode (:func:`order_choices` along its states)."""
    return [order_choices(game, state, player) for state in replay_states(game, seed, joints)]


def episode_orders(
    game: Game, seed: int, joints: Sequence[Sequence[str]], player: int, epsilon: float = EPSILON
) -> EpisodeOrders:
    """Each order's log-likelihood of ``player``'s actions in an episode, under the ε-noise model.

    Args:
        game: the task the episode was played in (with the readings it was played under, e.g. ``prefer``).
        seed: the seed its initial state was made from.
        joints: the joint actions in seat order, step by step.
        player: the seat whose actions are weighed (0 or 1).
        epsilon: the chance, under each order, of any legal action instead of the order's (:data:`EPSILON`).
    """
    states = replay_states(game, seed, joints)
    laws = [order_choices(game, state, player) for state in states]
    legal = [len(game.legal_actions(state, player)) for state in states]
    return weigh(laws, [j[player] for j in joints], legal, epsilon)


def weigh(
    laws: Sequence[dict[int, dict[str, float]]], actions: Sequence[str], legal: Sequence[int], epsilon: float = EPSILON
) -> EpisodeOrders:
    """:func:`episode_orders` from each step's order laws, action and number of legal actions (computed once, weighed
    under several ε).

    Args:
        laws: per step, :func:`order_choices`.
        actions: per step, the action taken.
        legal: per step, how many legal actions there were.
        epsilon: as for :func:`episode_orders`.
    """
    if not 0 < epsilon <= 1:
        raise ValueError(f"epsilon is a probability in (0, 1]; got {epsilon!r}")
    loglik = [0.0] * len(ORDERS)
    matches = [0] * len(ORDERS)
    informative = 0
    for law, action, n in zip(laws, actions, legal, strict=True):
        informative += _informative(law)
        for k in ORDERS:
            p = law[k].get(action, 0.0)
            matches[k] += p > 0
            loglik[k] += math.log((1 - epsilon) * p + epsilon / n)
    return EpisodeOrders(tuple(loglik), len(actions), informative, tuple(matches))


def step_matches(
    game: Game, seed: int, joints: Sequence[Sequence[str]], player: int
) -> list[tuple[tuple[int, ...], bool]]:
    """Per step of ``player``'s seat: the orders whose choices hold the action it took, and whether the orders
    choose differently there at all (what the trace explorer shows).

    Args:
        game: the task the episode was played in.
        seed: the seed its initial state was made from.
        joints: the joint actions in seat order, step by step.
        player: the seat (0 or 1).
    """
    out = []
    for laws, joint in zip(step_laws(game, seed, joints, player), joints, strict=True):
        matched = tuple(k for k in ORDERS if laws[k].get(joint[player], 0.0) > 0)
        out.append((matched, _informative(laws)))
    return out


@dataclass(frozen=True)
class EffectiveOrder:
    """The order a group of independent episodes (seats) was played at, pooled.

    Attributes:
        posterior: P(ToM-0), P(ToM-1), P(ToM-2) given every episode's actions (uniform prior).
        order: the order the posterior puts most on; None when no step could tell the orders apart.
        episodes: how many episodes (seats) were pooled.
        agree: how many of them have ``order`` as their own most likely order.
        agree_ci: the 95% Wilson interval of the share ``agree / episodes``.
        steps: the steps pooled.
        informative: the steps where the orders choose differently.
    """

    posterior: tuple[float, ...]
    order: int | None
    episodes: int
    agree: int
    agree_ci: tuple[float, float]
    steps: int
    informative: int

    @property
    def distinguishable(self) -> bool:
        """Whether any step could tell the orders apart."""
        return self.informative > 0

    def to_row(self) -> dict[str, Any]:
        """The summary as a table row: ``order`` (``ToM-k``, or a sentence when nothing can be told apart), the
        posterior per order, the episodes agreeing with its interval, and the share of informative steps."""
        lo, hi = self.agree_ci
        return {
            "plays as": f"ToM-{self.order}" if self.order is not None else "cannot be told apart here",
            **{f"P(ToM-{k})": round(p, 3) for k, p in zip(ORDERS, self.posterior, strict=True)},
            "episodes": self.episodes,
            "agree": f"{self.agree}/{self.episodes} [{lo:.2f}, {hi:.2f}]" if self.episodes else "",
            "steps": self.steps,
            "informative": round(self.informative / self.steps, 3) if self.steps else 0.0,
        }


def effective_order(episodes: Sequence[EpisodeOrders], prior: Sequence[float] | None = None) -> EffectiveOrder:
    """The order a group of independent episodes was played at: their log-likelihoods summed into one posterior,
    the order it favours, and how many episodes on their own favour the same one (95% Wilson interval).

    Args:
        episodes: one :class:`EpisodeOrders` per episode (and seat) pooled.
        prior: the prior over ToM-0, 1, 2 (uniform by default).
    """
    total = [math.fsum(e.loglik[k] for e in episodes) for k in ORDERS]
    informative = sum(e.informative for e in episodes)
    steps = sum(e.steps for e in episodes)
    post = _posterior(total, prior) if episodes else tuple(1 / len(ORDERS) for _ in ORDERS)
    order = max(ORDERS, key=lambda k: post[k]) if informative else None
    agree = sum(1 for e in episodes if order is not None and e.map_order == order)
    n = len(episodes)
    ci = tuple(float(x) for x in proportion_confint(agree, n, alpha=0.05, method="wilson")) if n else (0.0, 1.0)
    return EffectiveOrder(post, order, n, agree, ci, steps, informative)  # type: ignore[arg-type]
