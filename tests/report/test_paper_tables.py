"""The transcribed paper tables: long form, consistent with their index, spot-checked cells."""

from __future__ import annotations

import pandas as pd
import pytest

from tomlib.report import condition_columns, paper_table, paper_table_index
from tomlib.report._tables import paper_tables_dir

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

FILES = sorted(p for p in paper_tables_dir().glob("*.csv") if not p.name.endswith(".index.csv"))


def test_every_paper_has_an_index_and_every_table_is_indexed() -> None:
    index = paper_table_index()
    assert set(index["paper_id"]) == {"coalition", "adaptive_tom", "tom_ib"}
    indexed = {f"{r.paper_id}.{r.table_id}" for r in index.itertuples() if int(r.n_values) > 0}
    assert indexed == {p.name[: -len(".csv")] for p in FILES}
    assert (index["caption"].str.len() > 20).all()


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_long_form_with_numeric_paper_values(path) -> None:  # type: ignore[no-untyped-def]
    paper_id, table_id = path.stem.split(".")
    df = paper_table(paper_id, table_id)
    assert list(df.columns[:2]) == ["paper_id", "table_id"]
    assert list(df.columns[-3:]) == ["metric", "value", "source"]
    assert (df["paper_id"] == paper_id).all() and (df["table_id"] == table_id).all()
    assert (df["source"] == "paper").all()
    assert pd.api.types.is_float_dtype(df["value"]) and df["value"].notna().all()
    keys = [c for c in condition_columns(df) if c != "draft_table"] + ["metric"]
    assert not df.duplicated(subset=keys).any(), "two values for one cell"
    index = paper_table_index(paper_id)
    rows = index[index["table_id"] == table_id]
    assert sum(int(n) for n in rows["n_values"]) == len(df)


def cell(paper_id: str, table_id: str, **conds: object) -> float:
    df = paper_table(paper_id, table_id)
    for k, v in conds.items():
        df = df[df[k] == str(v)]
    assert len(df) == 1, conds
    return float(df["value"].iloc[0])


def test_spot_checks_against_the_papers() -> None:
    # adaptive-tom-aaai2026.txt Table 1: aligned pairs score 75 in Memory-1, misaligned 0
    assert cell("adaptive_tom", "table1", player1="ToM-0", player2="ToM-1", task="memory_1", metric="point") == 75.0
    assert cell("adaptive_tom", "table1", player1="ToM-1", player2="ToM-1", task="memory_1", metric="point") == 0.0
    assert (
        cell("adaptive_tom", "table1", player1="ToM-2", player2="ToM-1", task="overcooked", metric="time_sd") == 12.88
    )
    # Table 2: FTL self-play fails in the matrix game, Hedge self-play mostly succeeds
    assert (
        cell(
            "adaptive_tom", "table2", algorithm="FTL", player1="A-ToM", player2="A-ToM", task="memory_1", metric="point"
        )
        == 0.0
    )
    assert (
        cell(
            "adaptive_tom",
            "table2",
            algorithm="Hedge",
            player1="A-ToM",
            player2="A-ToM",
            task="memory_1",
            metric="point",
        )
        == 68.17
    )
    assert cell("adaptive_tom", "table3", agent_type="PBT", metric="time") == 49.09
    assert cell("adaptive_tom", "table4", player1="ToM-2", player2="ToM-1", task="memory_n", metric="point_sd") == 5.40
    # coalition drafts: Table 3 (both drafts), Table 6 (ICLR) = Table 5 (NeurIPS)
    assert (
        cell(
            "coalition",
            "table3",
            draft="iclr",
            method="ours",
            tom_order=2,
            matching="matching",
            benchmark="mbpp",
            metric="pass_at_1_pct",
        )
        == 90.4
    )
    for draft in ("iclr", "neurips"):
        assert (
            cell(
                "coalition",
                "table6",
                draft=draft,
                model="GLM-4",
                matching="matching",
                tom_order=2,
                round=5,
                metric="ftm",
            )
            == 93.66
        )


def test_both_coalition_drafts_are_kept() -> None:
    t6 = paper_table("coalition", "table6")
    assert set(t6["draft"]) == {"iclr", "neurips"}
    assert set(paper_table("coalition", "table6", draft="neurips")["draft_table"]) == {"Table 5"}
    t4 = paper_table("coalition", "table4")
    assert set(t4["draft"]) == {"iclr", "neurips"}
