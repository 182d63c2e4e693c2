"""A verdict says what part of its claim the source ran, how many clusters its units make, and what the source is
(issue 53, items 4, 7 and 8): formal agents without a PBT partner cover the claim without PBT; a source composed on
formal repeats formal's units; the local model is a 135M model."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.claims.test_engine import claim, verdict_of
from tomlib.claims import verdict_text, verdicts
from tomlib.claims._coverage import ALL, covers, named_values
from tomlib.claims._verdict import groups
from tomlib.llm import describe_source
from tomlib.report._claims import claims_table

pytestmark = pytest.mark.tier("fast")


def crossplay(partners: list[str], source: str = "formal", seed: int = 0) -> pd.DataFrame:
    """A-ToM and a fixed order each with ``partners``, 12 episodes a pair."""
    rng = np.random.default_rng(seed)
    rows = [
        {"player1": p1, "player2": p2, "episode": e, "value": rng.normal(5 if p1 == "A-ToM" else 3, 1)}
        for p1 in ("A-ToM", "ToM-1")
        for p2 in partners
        for e in range(12)
    ]
    return pd.DataFrame(rows).assign(metric="score", source=source)


CROSS = {
    "a": "player1 == 'A-ToM' and player2 in ['Greedy', 'PBT']",
    "b": "player1 == 'ToM-1' and player2 in ['Greedy', 'PBT']",
}


def test_a_source_that_never_ran_a_named_partner_covers_the_claim_without_it() -> None:
    row = verdict_of(claim(**CROSS), crossplay(["Greedy"]))
    assert row["covers"] == "all but player2 PBT"
    assert verdict_text(row).endswith("; covers all but player2 PBT")
    assert verdict_of(claim(**CROSS), crossplay(["Greedy", "PBT"]))["covers"] == ALL


def test_a_stratum_one_group_never_ran_is_not_covered() -> None:
    # A ran both tasks, B only memory_1: the claim compares within each task, so memory_n is not covered
    frame = pd.DataFrame(
        {
            "cond": ["A"] * 8 + ["B"] * 4,
            "task": ["memory_1"] * 4 + ["memory_n"] * 4 + ["memory_1"] * 4,
            "value": np.arange(12.0),
            "metric": "score",
            "source": "llm:x",
        }
    )
    c = claim(select="task in ['memory_1', 'memory_n']", strata="task")
    assert covers(c, groups(c, frame)) == "all but task memory_n"


def test_a_composed_source_names_the_units_it_shares_with_its_base() -> None:
    table = pd.concat([crossplay(["Greedy"]), crossplay(["Greedy", "PBT"], source="formal+ppo:selfplay")])
    # the composed source's Greedy episodes are formal's own: same agents, same seed, same outcomes
    table.loc[table["source"] != "formal", "value"] = np.concatenate(
        [
            table.loc[(table["source"] == "formal") & (table["player1"] == p1), "value"].to_numpy().tolist()
            + np.random.default_rng(9).normal(0, 1, 12).tolist()
            for p1 in ("A-ToM", "ToM-1")
        ]
    )
    got = verdicts("t", [claim(**CROSS)], {"t.units": table}).set_index("source")
    assert got.loc["formal+ppo:selfplay", "covers"] == (
        f"{ALL}; 24 of 48 units are formal's own (the same agents and outcomes): not a second confirmation"
    )
    assert got.loc["formal", "covers"] == "all but player2 PBT"


def test_clustered_units_show_their_clusters_beside_the_units() -> None:
    rng = np.random.default_rng(3)
    tasks = np.repeat([f"t{i}" for i in range(4)], 6)  # 4 tasks, each paired under 6 configurations
    frame = pd.DataFrame(
        {
            "cond": ["A"] * 24 + ["B"] * 24,
            "task": np.tile(tasks, 2),
            "config": np.tile(np.tile(np.arange(6), 4), 2),
            "value": np.concatenate([rng.normal(1, 1, 24), rng.normal(0, 1, 24)]),
            "metric": "score",
            "source": "llm:x",
        }
    )
    row = verdict_of(claim(pair_on="task, config", cluster_on="task"), frame)
    assert (row["n_units"], row["units_in_clusters"]) == (4, 24)
    assert "n = 4 clusters of 24 units" in verdict_text(row)


def test_named_values_are_the_lists_a_condition_picks_from() -> None:
    assert named_values("task in ['a', 'b'] and not x in [1, 2] and y == 3") == {"task": ("a", "b")}
    assert named_values("(p in ['A', 'B'] and q == 1) or p in ['B', 'C']") == {"p": ("A", "B", "C")}


def test_each_source_says_what_it_is_with_the_models_size_and_kind() -> None:
    assert describe_source("llm:local") == "135M parameters, run here by llama.cpp"
    assert describe_source("llm:llama-3.3-70b") == "70B parameters, over an API"
    assert describe_source("llm:gpt-4o") == "size unpublished, over an API"
    assert describe_source("formal") == "exact ToM agents, no LLM"
    assert describe_source("llm:nonesuch") == "not in configs/models.yaml"


def test_reports_claims_table_names_each_source_with_what_it_is() -> None:
    verdict = pd.DataFrame(
        [
            {
                "paper_id": "adaptive_tom",
                "claim_id": "adaptive_tom.three_action_aligned_lower",
                "source": "llm:local",
                "verdict": "inconclusive",
                "effect": 42.5,
                "ci_low": 18.2,
                "ci_high": 66.8,
                "n_units": 8,
                "units_in_clusters": None,
                "covers": "all but task memory_n",
            }
        ]
    )
    table = claims_table("adaptive_tom", verdict)
    header = "llm:local (135M parameters, run here by llama.cpp)"
    assert header in table.columns
    cell = table.loc[table[header] != "not reproduced (no units)", header].iloc[0]
    assert cell.endswith("covers all but task memory_n")
