"""Which ToM order the agents of a run really play (issue 57): the estimator of :mod:`tomlib.tom` (an ε-noise
likelihood of each order's choices, eq. 3-9) on the steps a run log holds, as units and as a table.

Every seat of every episode whose steps the log keeps is read back (the game from the first state's ``game`` spec,
its initial state from the run's seed), and each order's log-likelihood of the seat's actions is written as a units
row, so the claims engine and REPORT compute from the same numbers. ``lead`` is the claim's metric: per step, how much
better the order the agent was told to play (``ToM-k``) explains its action than the best other order.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from tomlib.agents.ppo import SOURCE_SUFFIX
from tomlib.experiments._units import write_units_with_truth
from tomlib.experiments.adaptive_tom._setup import PAPER_ID, _game
from tomlib.paths import results_dir
from tomlib.report import SEAT_METRICS, orders_table
from tomlib.tom import EPSILON, ORDERS, EpisodeOrders, order_choices, replay_states, weigh
from tomlib.trace import joint_actions, load_runs, log_in, logged_game

ORDER_METRICS = SEAT_METRICS
"""Per seat and episode: each order's log-likelihood of the actions, the steps, and the steps where orders differ."""
STAND_IN_NAMES = {"PPO self-play": "PBT"}
"""An agent's name in a run log -> the Table 3 seat it plays (:data:`tomlib.agents.ppo` stands in for PBT)."""
LEAD = "lead"
"""Per episode of an agent told to play ToM-k: the mean over steps of log P(a | k) - max_j log P(a | j), j over the
orders that give the action another chance (:meth:`tomlib.tom.EpisodeOrders.lead`); in self-play, the mean of the two
seats' (seat ``both``): one episode is one unit."""


@dataclass(frozen=True)
class PlayedSeat:
    """One seat of one episode, as the log holds it, and each order's likelihood of its actions (``orders``)."""

    condition: str
    episode: int
    seat: int
    agent: str
    partner: str
    game: str
    orders: EpisodeOrders | None = None


def played_seats(run_id: str, results: str | None = None, *, epsilon: float = EPSILON) -> list[PlayedSeat]:
    """Every seat of every episode whose steps the run's log keeps, with each order's likelihood of its actions.

    Args:
        run_id: the run (``tomlib runs list``).
        results: the results folder (default ``results/``).
        epsilon: the chance, in each order's model, of any legal action instead of the order's (:data:`EPSILON`).
    """
    log = log_in(results_dir(results) / "runs" / run_id)
    if log is None:
        raise FileNotFoundError(f"no run log of {run_id!r} under {results_dir(results) / 'runs'}; see tomlib runs list")
    return [
        dataclasses.replace(s.seat, orders=weigh(s.laws, s.actions, s.legal, epsilon))
        for s in _replayed(run_id, str(log), log.stat().st_mtime_ns)
    ]


@dataclass(frozen=True)
class _Replayed:
    """A seat's steps replayed: each order's law, the action taken and the number of legal actions, per step."""

    seat: PlayedSeat
    laws: list[dict[int, dict[str, float]]]
    actions: list[str]
    legal: list[int]


@functools.lru_cache(maxsize=4)
def _replayed(run_id: str, log: str, mtime: int) -> tuple[_Replayed, ...]:
    """The run's seats replayed once (the orders' laws are what costs), whatever ε they are then weighed under; kept
    for the log as it was at ``mtime``."""
    results = str(Path(log).parent.parent.parent)
    events = load_runs(results, run_ids=[run_id], kinds=["run_start", "env_state", "action"])
    firsts = events[(events["kind"] == "env_state") & (events["step"] == 0)]
    out = []
    for condition, episode, first in zip(firsts["condition"], firsts["episode"], firsts["payload"], strict=True):
        if "game" not in first:
            continue
        try:
            joints = joint_actions(events, condition, episode)
        except ValueError:
            continue  # the log keeps this episode's first state and outcome only
        spec, seed = logged_game(events, condition, episode)
        names = first.get("agents", ["", ""])
        game = _game(str(spec), "")
        states = replay_states(game, seed, joints)
        for seat in (0, 1):
            laws = [order_choices(game, state, seat) for state in states]
            legal = [len(game.legal_actions(state, seat)) for state in states]
            actions = [j[seat] for j in joints]
            who = PlayedSeat(str(condition), int(episode), seat, names[seat], names[1 - seat], str(spec))
            out.append(_Replayed(who, laws, actions, legal))
    return tuple(out)


def prompted_order(agent: str) -> int | None:
    """The order an agent named ``ToM-k`` was built (or prompted) to play; None for any other agent."""
    m = re.fullmatch(r"ToM-(\d)", agent)
    return int(m[1]) if m and int(m[1]) in ORDERS else None


def order_units(
    run_id: str, table_id: str, source: str, results: str | None = None, *, epsilon: float = EPSILON
) -> pd.DataFrame:
    """The rows of :func:`played_seats` as units of ``adaptive_tom.<table_id>`` (one row per seat, episode and
    metric of :data:`ORDER_METRICS`, and :data:`LEAD` for a ``ToM-k`` agent).

    Args:
        run_id: the run whose steps are read.
        table_id: the units table, e.g. ``table1_orders``.
        source: the run's source (``llm:<model>``, ``formal``).
        results: the results folder.
        epsilon: as for :func:`played_seats`.
    """
    rows: list[dict[str, Any]] = []
    leads: dict[tuple[str, int, str], list[tuple[str, str, float]]] = {}
    for p in played_seats(run_id, results, epsilon=epsilon):
        if p.orders is None:
            continue
        seat = f"player{p.seat + 1}"
        base = _unit(table_id, source, epsilon, p.condition, p.episode, p.agent, p.partner, seat)
        values = [*p.orders.loglik, p.orders.steps, p.orders.informative]
        rows += [{**base, "metric": m, "value": v} for m, v in zip(ORDER_METRICS, values, strict=True)]
        k = prompted_order(p.agent)
        if k is not None and p.orders.steps:
            leads.setdefault((p.condition, p.episode, p.agent), []).append((seat, p.partner, p.orders.lead(k)))
    for (condition, episode, agent), seats in leads.items():  # an episode is one unit: its seats are not independent
        seat, partner = (seats[0][0], seats[0][1]) if len(seats) == 1 else ("both", agent)
        unit = _unit(table_id, source, epsilon, condition, episode, agent, partner, seat)
        rows.append({**unit, "metric": LEAD, "value": sum(v for _, _, v in seats) / len(seats)})
    return pd.DataFrame(rows)


def _unit(
    table_id: str, source: str, epsilon: float, condition: str, episode: int, agent: str, partner: str, seat: str
) -> dict[str, Any]:
    """The condition and unit columns of an order units row."""
    return {
        "paper_id": PAPER_ID,
        "table_id": table_id,
        "task": condition.split(":", 1)[0],
        "condition": condition,
        "agent": agent,
        "partner": partner,
        "seat": seat,
        "epsilon": f"{epsilon:g}",
        "episode": episode,
        "source": source,
    }


def write_order_units(
    run_id: str, table_id: str, source: str, results: str | None = None, *, epsilon: float = EPSILON
) -> pd.DataFrame:
    """:func:`order_units`, written to ``results/units/adaptive_tom.<table_id>.csv`` (nothing when the run kept no
    steps); returns the rows."""
    rows = order_units(run_id, table_id, source, results, epsilon=epsilon)
    write_units_with_truth(rows, results)
    return rows


def epsilon_sensitivity(
    run_id: str, results: str | None = None, *, seat: str | None = None, epsilons: Iterable[float] = (0.02, 0.1, 0.3)
) -> pd.DataFrame:
    """The effective order of each agent of a run under several noises ε (the estimator's one reading): the order,
    its posterior and the episodes agreeing, one column group per ε.

    Args:
        run_id: the run whose steps are read.
        results: the results folder.
        seat: only this seat (``player1``); None: both.
        epsilons: the noises to compare.
    """
    frames = []
    for eps in dict.fromkeys(epsilons):
        units = order_units(run_id, "orders", "formal", results, epsilon=eps)
        if seat is not None:
            units = units[units["seat"] == seat]
        got = orders_table(units, by=["agent", "partner"]).set_index(["agent", "partner"])
        frames.append(pd.concat({f"ε={eps:g}": got}, axis=1))
    return pd.concat(frames, axis=1) if frames else pd.DataFrame()


def partner_orders(
    runs: Sequence[Any], weights: pd.DataFrame, results: str | None = None, *, epsilon: float = EPSILON
) -> pd.DataFrame:
    """§6.1 beside the estimator: the order each partner A-ToM meets in Table 3's runs really plays (Greedy, the PPO
    stand-in, the fixed orders), from the episodes each run's log keeps step by step, beside A-ToM's average expert
    weights against it (:func:`expert_weights`'s frame). Does A-ToM put its weight where the partner's play is?

    Args:
        runs: Table 3 runs (:func:`table3`), each a :class:`Reproduction`.
        weights: :func:`expert_weights`'s rows for those runs (``algorithm``, ``partner``, ``source``, ``expert``,
            ``value``).
        results: the results folder.
        epsilon: as for :func:`played_seats`.
    """
    frames = []
    for run in runs:
        source = str(run.table["source"].iloc[0]) if len(run.table) else "formal"
        units = order_units(run.run_id, "table3_orders", source, results, epsilon=epsilon)
        if units.empty:
            continue
        agent = units["agent"].astype(str).replace(STAND_IN_NAMES)  # Table 3's name of the seat it fills
        met = units["partner"].astype(str).str.startswith("A-ToM") & ~agent.str.startswith("A-ToM")
        if source.endswith(SOURCE_SUFFIX):  # the stand-in's run: its other pairings are the plain run's again
            met &= agent == "PBT"
        frames.append(units[met].assign(agent=agent[met]))
    if not frames:
        return pd.DataFrame()
    stacked = pd.concat(frames, ignore_index=True)
    table = orders_table(stacked, by=("source", "agent")).rename(columns={"agent": "partner"})
    got = weights.dropna(subset=["value"])
    for algorithm, part in got.groupby("algorithm"):
        wide = part.pivot_table(index=["source", "partner"], columns="expert", values="value", aggfunc="first")
        text = wide.apply(lambda r: " / ".join(f"{v:.2f}" for v in r), axis=1).rename(f"A-ToM ({algorithm}) weights")
        table = table.merge(text.reset_index(), on=["source", "partner"], how="left")
    return table


def run_orders(run: Any, results: str | None = None, *, epsilon: float = EPSILON) -> pd.DataFrame:
    """Which order each agent of a run plays (:func:`orders_table` by agent and partner), from every step its log
    keeps: for an LLM run, all of them.

    Args:
        run: a :class:`Reproduction` (its ``run_id`` and its rows' source).
        results: the results folder.
        epsilon: as for :func:`played_seats`.
    """
    source = str(run.table["source"].iloc[0]) if len(run.table) else "formal"
    units = order_units(run.run_id, "orders", source, results, epsilon=epsilon)
    return orders_table(units, by=("agent", "partner")) if len(units) else pd.DataFrame()
