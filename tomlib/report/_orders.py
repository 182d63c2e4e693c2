"""The effective ToM order table (issue 57): which order each agent of a run plays, from the order units the
adaptive-ToM runs write (``adaptive_tom.<table>_orders``: each order's log-likelihood of a seat's actions per
episode), pooled by :func:`tomlib.tom.effective_order`."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from tomlib.llm import describe_source
from tomlib.tom import ORDERS, EffectiveOrder, EpisodeOrders, effective_order

ORDER_UNITS = ("table1_orders", "table2_orders", "table3_orders", "table4_orders")
"""The order units of notebooks 01-04's runs (every LLM run, and Table 3's formal partners)."""
PROMPTED = [f"ToM-{k}" for k in ORDERS]
SEAT_METRICS = (*(f"loglik_{k}" for k in ORDERS), "steps", "informative")
"""What order units hold per seat and episode (the estimate pools these)."""


def orders_table(units: pd.DataFrame, by: Iterable[str] = ("source", "agent")) -> pd.DataFrame:
    """The effective order of each group of seats in order units, one row per group: the pooled posterior over
    orders, the order it puts most on, the episodes whose own best order agrees (with a 95% interval) and the share of
    steps where the orders choose differently at all (none: nothing can be told apart, and the row says so).

    Args:
        units: order units rows (``loglik_0``.., ``steps``, ``informative`` per seat and episode; tables stacked).
        by: the columns a row of the result stands for.
    """
    by = list(by)
    if units.empty:
        return pd.DataFrame(columns=by)
    units = units[units["metric"].isin(SEAT_METRICS)]  # not the claim's lead, which is per episode
    keys = [c for c in (*by, "table_id", "condition", "seat", "episode") if c in units.columns]
    wide = units.pivot_table(index=list(dict.fromkeys(keys)), columns="metric", values="value", aggfunc="first")
    wide = wide.reset_index()
    rows = []
    for key, group in wide.groupby(by, sort=True):
        seats = [
            EpisodeOrders(
                loglik=tuple(float(r[f"loglik_{k}"]) for k in ORDERS),
                steps=int(r["steps"]),
                informative=int(r["informative"]),
                matches=(),
            )
            for _, r in group.iterrows()
        ]
        named = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True))
        rows.append({**named, **order_row(effective_order(seats))})
    return pd.DataFrame(rows)


def order_row(found: EffectiveOrder) -> dict[str, object]:
    """An effective order as a row a reader takes in at a glance: the order it plays as (or which orders cannot be
    told apart), the posterior per order, the episodes with an order of their own that agree (95% Wilson interval),
    and the share of steps where the orders choose differently at all."""
    if found.map_order is not None:
        plays = f"ToM-{found.map_order}"
    elif not found.distinguishable:
        plays = "cannot be told apart here"
    else:
        top = max(found.posterior.values())
        tied = [f"ToM-{k}" for k, p in found.posterior.items() if p >= top - 1e-9]
        plays = f"{' or '.join(tied)} (cannot be told apart here)"
    lo_hi = f" [{found.agree_ci[0]:.2f}, {found.agree_ci[1]:.2f}]" if found.agree_ci else ""
    return {
        "plays as": plays,
        **{f"P(ToM-{k})": round(p, 3) for k, p in found.posterior.items()},
        "episodes": found.episodes,
        "agree": f"{found.agree}/{found.decided}{lo_hi}",
        "steps": found.steps,
        "informative": round(found.informative_share, 3) if found.steps else 0.0,
    }


def llm_orders(units: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """REPORT's table: for every LLM (or simulated) source of notebooks 01-04, each fixed-order agent's effective
    order; the source named with its model's size (``llm:local (135M parameters, run here by llama.cpp)``).

    Args:
        units: units tables by ``<paper_id>.<table_id>`` (:func:`tomlib.claims.read_units`).
    """
    frames = [units[f"adaptive_tom.{t}"] for t in ORDER_UNITS if f"adaptive_tom.{t}" in units]
    if not frames:
        return pd.DataFrame()
    stacked = pd.concat(frames, ignore_index=True)
    source = stacked["source"].astype(str)
    mine = stacked[(source.str.startswith("llm:") | source.str.startswith("sim:")) & stacked["agent"].isin(PROMPTED)]
    if mine.empty:
        return pd.DataFrame()
    table = orders_table(mine, by=("source", "agent"))
    table.insert(1, "model", [describe_source(s) for s in table["source"]])
    return table.rename(columns={"agent": "told to play"})
