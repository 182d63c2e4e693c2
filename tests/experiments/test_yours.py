"""Notebook 15's experiment: your agent in A-ToM's seat, beside the paper, the alignment claims asked of it, and the
order each agent of a run plays (issue 57)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pandas as pd
import pytest

from tomlib.claims import read_units
from tomlib.experiments import adaptive_tom as at
from tomlib.report import llm_orders, orders_table

pytestmark = pytest.mark.tier("fast")

BAYES = "tomlib.agents.bayes:BayesToMAgent"


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


def test_your_agent_plays_every_partner_beside_the_papers_cells(isolated: Path) -> None:
    yours = run(at.your_agent(BAYES, tasks=["memory_1", "overcooked"], episodes=2, progress=False))
    means = yours.table[yours.table["metric"].isin(["point", "time"])]
    assert set(means["player1"]) == {"Bayes-ToM"} and set(means["source"]) == {"formal"}
    partners = means.groupby("task")["player2"].apply(set)
    assert partners["memory_1"] == {"ToM-0", "ToM-1", "ToM-2", "A-ToM (FTL)", "A-ToM (Hedge)"}
    assert partners["overcooked"] == partners["memory_1"] | {"Greedy"}  # Greedy plays Overcooked only
    beside = at.beside_paper(yours)
    row = beside.loc[("memory_1", "ToM-1", "point")]
    assert row["Bayes-ToM"] == 70  # the first round is lost, then the posterior knows its partner
    assert row["paper: aligned pair (Table 1)"] == 75 and row["paper: A-ToM (FTL) (Table 2)"] == 70
    units = read_units(None)
    assert set(units["adaptive_tom.your_agent"]["agent"]) == {BAYES}
    orders = units["adaptive_tom.your_agent_orders"]
    assert set(orders["metric"]) >= {"loglik_0", "loglik_1", "loglik_2", "steps", "informative"}


def test_the_alignment_claims_are_judged_with_your_agent_in_a_toms_seat(isolated: Path) -> None:
    assert at.judge_your_agent(BAYES).empty  # Table 1's units are not there yet: nothing to compare with
    run(at.table1(tasks=["memory_1"], episodes=3, progress=False))
    run(at.your_agent(BAYES, tasks=["memory_1"], partners=at.FIXED, episodes=3, progress=False))
    got = at.judge_your_agent(BAYES)
    point = got[(got["claim_id"] == "adaptive_tom.yours_as_aligned_point") & (got["source"] == "formal")]
    assert len(point) == 1 and point["verdict"].iloc[0] in ("supported", "contradicted", "inconclusive")
    claims = {c.claim_id: c for c in at.your_claims(BAYES)}
    assert "agent == 'tomlib.agents.bayes:BayesToMAgent'" in claims["adaptive_tom.yours_as_aligned_point"].a


def test_formal_tom_k_agents_play_their_own_order_where_orders_differ(isolated: Path) -> None:
    """The estimator on a run log: exact ToM-k agents, every step logged, are read as ToM-k wherever the orders
    choose differently (Memory-1's ToM-1); where ToM-0 and ToM-2 choose alike, the table says it cannot tell."""
    r = run(at.table1(tasks=["memory_1"], episodes=3, progress=False, detail_episodes=3))
    got = at.run_orders(r).set_index(["agent", "partner"])
    tom1 = got.loc[("ToM-1", "ToM-1")]
    assert tom1["plays as"] == "ToM-1" and tom1["episodes"] == 6 and tom1["agree"].startswith("6/6")  # both seats
    tom2 = got.loc[("ToM-2", "ToM-2")]
    assert tom2["P(ToM-1)"] < 0.05 and tom2["P(ToM-0)"] == tom2["P(ToM-2)"]


def test_reports_table_is_for_llm_sources_and_names_the_models_size() -> None:
    rows = []
    for source in ("llm:local", "formal"):
        for ep in range(2):
            base = {
                "source": source,
                "agent": "ToM-1",
                "table_id": "table1_orders",
                "condition": "c",
                "seat": "player1",
            }
            for metric, value in (
                ("loglik_0", -9.0),
                ("loglik_1", -1.0),
                ("loglik_2", -9.0),
                ("steps", 5),
                ("informative", 5),
            ):
                rows.append({**base, "episode": ep, "metric": metric, "value": value})
    units = pd.DataFrame(rows)
    table = llm_orders({"adaptive_tom.table1_orders": units})
    assert list(table["source"]) == ["llm:local"] and "135M" in table["model"].iloc[0]
    assert table["plays as"].iloc[0] == "ToM-1"
    assert orders_table(units, by=("source",))["episodes"].tolist() == [2, 2]


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"agent": "nosuchpkg.mod:Agent"}, "nosuchpkg"),
        ({"episodes": 0}, "episodes"),
        ({"partners": "ToM-3"}, "partners"),
        ({"epsilon": 1.5}, "epsilon"),
    ],
)
def test_notebook_15s_parameters_fail_in_one_line(change: dict[str, object], says: str) -> None:
    params = {"agent": BAYES, "episodes": 2, "seed": 42, "tasks": "memory_1", "partners": "ToM-1", "epsilon": 0.1}
    with pytest.raises(Exception, match=says) as err:
        at.check_your_parameters(**{**params, **change})
    assert "\n" not in str(err.value)
