"""The effective ToM order of a player: which formal ToM-k player (``adaptive-tom-aaai2026.txt`` eq. 3-9) its actions
look like, read from the joint actions of its episodes.

Each order k gives the chance p_k(a) that a formal ToM-k player in that seat takes action a
(:func:`action_distribution`, ties drawn evenly). A real player errs, so the likelihood of an action under order k is
the ε-noise mixture P(a | k) = (1 - ε)·p_k(a) + ε/|legal|: with probability ε the player takes a legal action at
random. Episodes are taken as independent, so their log-likelihoods add; the posterior over orders is that sum plus
the log prior, normalised.

Only steps where the orders' distributions differ (*informative* steps) can tell orders apart: where all orders agree,
every order gives the action the same likelihood. In the 2-action matrix games ToM-0 and ToM-2 always agree (both
play against the partner's last or most frequent choice), so no log of them can tell the two apart; the MAP order
(:attr:`EpisodeOrders.map_order`, :attr:`EffectiveOrder.map_order`) is None when the best orders are tied.

Pure: this module reads games through :mod:`tomlib.envs` and the formal recursion of :mod:`tomlib.tom` only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from tomlib.envs import Game, IllegalAction
from tomlib.tom._formal import action_distribution

ORDERS: tuple[int, ...] = (0, 1, 2)
"""The orders compared: the paper's fixed ToM-0, ToM-1 and ToM-2 (§3.2, Table 1)."""

EPSILON = 0.1
"""ε of the noise model P(a | k) = (1 - ε)·p_k(a) + ε/|legal|. It is the noise the validation plays with
(``benchmarks/bench_effective_order.py``: formal agents taking a random legal action with probability 0.1, the
simulated model's ``tom_error`` of 0.1), and any ε > 0 keeps an action no order would take from ruling out every
order at once."""

TIE = 1e-9
"""Log-likelihoods (and probabilities) this close are equal: sums over the same steps in another order differ by
rounding only."""


def _check_player(player: int) -> int:
    if player not in (0, 1):
        raise ValueError(f"player is a seat, 0 or 1; got {player!r}")
    return int(player)


def _check_epsilon(epsilon: float) -> float:
    if isinstance(epsilon, bool) or not isinstance(epsilon, int | float) or not 0 < epsilon <= 1:
        raise ValueError(
            f"epsilon is the chance of a random legal action, in (0, 1] (0 would let one odd action rule out every "
            f"order); got {epsilon!r}"
        )
    return float(epsilon)


def order_choices(
    game: Game, state: object, player: int, orders: Sequence[int] = ORDERS
) -> dict[int, dict[str, float]]:
    """For each order, the chance a formal ToM-k player in ``player``'s seat takes each action at ``state``
    (:func:`tomlib.tom.action_distribution`, eq. 3 and 8-9, ties drawn evenly). The orders share one memo, so order 2
    reuses the levels order 0 and 1 computed.

    Args:
        game: the task, with exact joint values.
        state: the state the player acts in.
        player: the seat (0 or 1).
        orders: the orders compared (:data:`ORDERS`).
    """
    player = _check_player(player)
    memo: dict[tuple[int, int], dict[str, float]] = {}
    return {k: action_distribution(game, state, player, k, memo) for k in orders}


def replay_states(game: Game, seed: int | None, joints: Sequence[Sequence[str]]) -> list[Any]:
    """The state before each joint action of an episode: ``game.reset(seed)``, then one ``game.step`` per joint action.

    Args:
        game: the task the episode was played on.
        seed: the run's seed (what :func:`tomlib.agents.play_episode` reset the game with).
        joints: the joint actions in player order, as :attr:`tomlib.agents.EpisodeResult.actions` holds them.
    """
    state = game.reset(seed)
    states = []
    for t, joint in enumerate(joints):
        states.append(state)
        try:
            state = game.step(state, tuple(joint))
        except IllegalAction as exc:
            raise IllegalAction(
                f"step {t + 1} of the episode cannot be replayed on {game.spec()} ({exc}): the joint actions are not "
                "this game's, or the seed differs; pass the game and seed the episode was played with"
            ) from None
    return states


def _all_equal(dists: Sequence[Mapping[str, float]]) -> bool:
    first = dists[0]
    keys = set().union(*dists)
    return all(abs(d.get(a, 0.0) - first.get(a, 0.0)) <= TIE for d in dists[1:] for a in keys)


def _best(values: Sequence[float], orders: Sequence[int]) -> int | None:
    """The order of the largest value, or None when another order is within :data:`TIE` of it."""
    top = max(values)
    best = [k for k, v in zip(orders, values, strict=True) if v >= top - TIE]
    return best[0] if len(best) == 1 else None


def _normalised(logs: Sequence[float]) -> list[float]:
    top = max(logs)
    if top == -math.inf:
        raise ValueError("every order has likelihood 0 under this prior; give every order some prior weight")
    w = [math.exp(v - top) for v in logs]
    total = sum(w)
    return [x / total for x in w]


def _log_prior(prior: Sequence[float] | Mapping[int, float] | None, orders: Sequence[int]) -> list[float]:
    if prior is None:
        return [0.0] * len(orders)
    weights = [float(prior.get(k, 0.0)) for k in orders] if isinstance(prior, Mapping) else [float(p) for p in prior]
    if len(weights) != len(orders) or any(w < 0 or math.isnan(w) for w in weights) or sum(weights) <= 0:
        raise ValueError(
            f"prior gives each of the orders {list(orders)} a weight >= 0, not all 0 (a sequence in that order or a "
            f"dict by order); got {prior!r}"
        )
    return [math.log(w) if w > 0 else -math.inf for w in weights]


@dataclass(frozen=True)
class EpisodeOrders:
    """What one episode of one player says of its order.

    ``loglik[i]`` is Σ_t log P(a_t | ORDERS[i]) under the ε-noise model; ``matches[i]`` counts the steps whose action
    order ``ORDERS[i]``'s choice set holds (p_k(a) > 0); ``informative`` the steps where the orders' distributions
    are not all equal (the only ones that can tell orders apart)."""

    loglik: tuple[float, ...]
    steps: int
    informative: int
    matches: tuple[int, ...]
    step_loglik: tuple[tuple[float, ...], ...] = field(default=(), repr=False)
    """Per step, log P(a_t | k) for each order (what :meth:`lead` averages)."""
    orders: tuple[int, ...] = ORDERS
    epsilon: float = EPSILON

    def posterior(self, prior: Sequence[float] | Mapping[int, float] | None = None) -> dict[int, float]:
        """P(k | this episode's actions) for each order, from ``prior`` (None: uniform).

        Args:
            prior: a weight per order (a sequence in :attr:`orders`' order, or a dict by order); normalised here.
        """
        logs = [a + b for a, b in zip(self.loglik, _log_prior(prior, self.orders), strict=True)]
        return dict(zip(self.orders, _normalised(logs), strict=True))

    @property
    def map_order(self) -> int | None:
        """The most likely order under a uniform prior; None when no step is informative or the best orders tie."""
        return None if not self.informative else _best(self.loglik, self.orders)

    def lead(self, order: int) -> float:
        """The mean over steps of log P(a_t | k*) - max_j log P(a_t | j) for k* = ``order``, j over the orders that give
        the step's action another chance than k* does: how far, per step, the actions favour k* over its closest
        rival (> 0: k* explains them better). An order that gives the action the same chance is no rival at that step
        (nothing there tells it from k*: in the two-action matrix games ToM-0 and ToM-2 choose alike at every step), and
        a step where every order gives it the same chance adds 0. NaN for an episode without steps.

        Args:
            order: k*, one of :attr:`orders`.
        """
        if order not in self.orders:
            raise ValueError(f"order must be one of {list(self.orders)}; got {order!r}")
        if not self.step_loglik:
            return math.nan
        i = self.orders.index(order)
        gaps = []
        for row in self.step_loglik:
            rivals = [v for j, v in enumerate(row) if j != i and abs(v - row[i]) > TIE]
            gaps.append(row[i] - max(rivals) if rivals else 0.0)
        return sum(gaps) / len(gaps)


def episode_orders(
    game: Game,
    seed: int | None,
    joints: Sequence[Sequence[str]],
    player: int,
    epsilon: float = EPSILON,
    orders: Sequence[int] = ORDERS,
) -> EpisodeOrders:
    """The log-likelihood of each order for ``player``'s actions in one episode (ε-noise model, module docstring).

    Args:
        game: the task the episode was played on (it needs exact joint values: ``game.has_exact_values``).
        seed: the run's seed (:func:`replay_states`).
        joints: the episode's joint actions in player order.
        player: the seat whose order is read (0 or 1).
        epsilon: the chance of a random legal action (:data:`EPSILON`).
        orders: the orders compared (:data:`ORDERS`).
    """
    player = _check_player(player)
    states = replay_states(game, seed, joints)
    laws = [order_choices(game, state, player, orders) for state in states]
    legal = [len(game.legal_actions(state, player)) for state in states]
    return weigh(laws, [j[player] for j in joints], legal, epsilon, orders)


def weigh(
    laws: Sequence[Mapping[int, Mapping[str, float]]],
    actions: Sequence[str],
    legal: Sequence[int],
    epsilon: float = EPSILON,
    orders: Sequence[int] = ORDERS,
) -> EpisodeOrders:
    """:func:`episode_orders` from what its replay gives, per step: each order's law (:func:`order_choices`), the
    action taken and how many legal actions there were. The laws are what costs; weighing them again under another
    ε is cheap.

    Args:
        laws: per step, each order's law of the player's action.
        actions: per step, the action the player took.
        legal: per step, the number of the player's legal actions.
        epsilon: the chance of a random legal action (:data:`EPSILON`).
        orders: the orders compared (:data:`ORDERS`).
    """
    epsilon = _check_epsilon(epsilon)
    orders = tuple(orders)
    total = [0.0] * len(orders)
    matches = [0] * len(orders)
    informative = 0
    per_step = []
    for dists, action, n in zip(laws, actions, legal, strict=True):
        spread = epsilon / n
        row = []
        for i, k in enumerate(orders):
            p = dists[k].get(action, 0.0)
            matches[i] += p > 0
            row.append(math.log((1 - epsilon) * p + spread))
            total[i] += row[-1]
        informative += not _all_equal([dists[k] for k in orders])
        per_step.append(tuple(row))
    return EpisodeOrders(tuple(total), len(per_step), informative, tuple(matches), tuple(per_step), orders, epsilon)


class StepMatch(NamedTuple):
    """One step of one player: the orders whose choice set holds its action, and whether the orders disagree there."""

    orders: tuple[int, ...]
    disagree: bool


def step_matches(
    game: Game, seed: int | None, joints: Sequence[Sequence[str]], player: int, orders: Sequence[int] = ORDERS
) -> list[StepMatch]:
    """Per step of an episode, which orders' choices hold ``player``'s action (p_k(a) > 0) and whether the orders'
    distributions differ there (where they do not, a match says nothing of the order).

    Args:
        game: the task the episode was played on.
        seed: the run's seed (:func:`replay_states`).
        joints: the episode's joint actions in player order.
        player: the seat (0 or 1).
        orders: the orders compared (:data:`ORDERS`).
    """
    player = _check_player(player)
    out = []
    for state, joint in zip(replay_states(game, seed, joints), joints, strict=True):
        dists = order_choices(game, state, player, orders)
        held = tuple(k for k in orders if dists[k].get(joint[player], 0.0) > 0)
        out.append(StepMatch(held, not _all_equal([dists[k] for k in orders])))
    return out


@dataclass(frozen=True)
class EffectiveOrder:
    """The effective order of a player over several episodes (:func:`effective_order`)."""

    posterior: dict[int, float]
    """P(k | every episode), the episodes taken as independent."""
    map_order: int | None
    """The most probable order; None when no step is informative or the best orders tie."""
    agree: int
    """Episodes (of :attr:`decided`) whose own most likely order is :attr:`map_order`."""
    decided: int
    """Episodes with an order of their own (an informative step and no tie at the top)."""
    episodes: int
    agree_ci: tuple[float, float] | None
    """95% Wilson interval of agree / decided; None below 2 such episodes."""
    steps: int
    informative: int
    orders: tuple[int, ...] = ORDERS

    @property
    def distinguishable(self) -> bool:
        """Whether some step could tell orders apart."""
        return self.informative > 0

    @property
    def informative_share(self) -> float:
        """The share of steps where the orders' choices differ (NaN without steps)."""
        return self.informative / self.steps if self.steps else math.nan

    @property
    def statement(self) -> str:
        """The finding in one sentence."""
        if not self.distinguishable:
            return f"the orders cannot be told apart here (no step of {self.steps} where their choices differ)"
        if self.map_order is None:
            top = max(self.posterior.values())
            tied = [f"ToM-{k}" for k, p in self.posterior.items() if p >= top - TIE]
            return f"{' and '.join(tied)} cannot be told apart here (equal likelihood at every step)"
        said = f"plays as ToM-{self.map_order} (posterior {self.posterior[self.map_order]:.3f})"
        if self.decided < 2:
            return f"{said}; {self.decided} episode with an order of its own, too few for an interval"
        lo, hi = self.agree_ci or (math.nan, math.nan)
        return f"{said}; {self.agree} of {self.decided} episodes agree (95% CI {lo:.2f}-{hi:.2f})"

    def to_row(self) -> dict[str, Any]:
        """A flat row for tables."""
        lo, hi = self.agree_ci or (math.nan, math.nan)
        return {
            "order": "" if self.map_order is None else f"ToM-{self.map_order}",
            **{f"posterior_tom{k}": p for k, p in self.posterior.items()},
            "episodes": self.episodes,
            "decided": self.decided,
            "agree": self.agree,
            "agree_lo": lo,
            "agree_hi": hi,
            "steps": self.steps,
            "informative_share": self.informative_share,
            "distinguishable": self.distinguishable,
            "statement": self.statement,
        }


def effective_order(
    episodes: Sequence[EpisodeOrders], prior: Sequence[float] | Mapping[int, float] | None = None
) -> EffectiveOrder:
    """The pooled posterior over orders (independent episodes: their log-likelihoods add), its most probable order,
    and how many episodes' own most likely order agrees with it (a 95% Wilson interval, statsmodels).

    Args:
        episodes: one :class:`EpisodeOrders` per episode of the player, all over the same orders.
        prior: a weight per order (None: uniform).
    """
    if not episodes:
        raise ValueError("effective_order needs at least one episode (episode_orders of each)")
    orders = episodes[0].orders
    if any(e.orders != orders for e in episodes):
        raise ValueError("every episode must compare the same orders; compute them with one orders= value")
    total = [sum(e.loglik[i] for e in episodes) for i in range(len(orders))]
    logs = [a + b for a, b in zip(total, _log_prior(prior, orders), strict=True)]
    posterior = dict(zip(orders, _normalised(logs), strict=True))
    informative = sum(e.informative for e in episodes)
    best = None if not informative else _best(logs, orders)
    own = [e.map_order for e in episodes if e.map_order is not None]
    agree = sum(k == best for k in own) if best is not None else 0
    ci = None
    if len(own) >= 2 and best is not None:
        from statsmodels.stats.proportion import proportion_confint

        lo, hi = proportion_confint(agree, len(own), alpha=0.05, method="wilson")
        ci = (float(lo), float(hi))
    return EffectiveOrder(
        posterior=posterior,
        map_order=best,
        agree=agree,
        decided=len(own),
        episodes=len(episodes),
        agree_ci=ci,
        steps=sum(e.steps for e in episodes),
        informative=informative,
        orders=orders,
    )
