"""The results contract: what notebooks write, how it is checked, compared and reported."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tomlib.report import (
    ResultsContractError,
    build_report,
    compare,
    plot_compare,
    read_results,
    save_figure,
    validate_results,
    write_table,
)

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def reproduced() -> pd.DataFrame:
    """Rows a Table 1 notebook would write: two formal cells and one LLM cell (values made up for the test)."""
    return pd.DataFrame(
        {
            "paper_id": "adaptive_tom",
            "table_id": "table1",
            "player1": ["ToM-0", "ToM-1", "ToM-0"],
            "player2": ["ToM-1", "ToM-1", "ToM-1"],
            "task": "memory_1",
            "metric": "point",
            "value": [75.0, 5.0, 70.0],
            "source": ["formal", "formal", "llm:local"],
        }
    )


def test_write_table_fills_paper_values_and_round_trips(isolated: Path) -> None:
    (path,) = write_table(reproduced())
    assert path == isolated / "results" / "tables" / "adaptive_tom.table1.csv"
    back = pd.read_csv(path)
    assert list(back.columns) == [
        "paper_id",
        "table_id",
        "player1",
        "player2",
        "task",
        "metric",
        "value",
        "source",
        "paper_value",
    ]
    assert back["paper_value"].tolist() == [75.0, 0.0, 75.0]  # from data/paper_tables/adaptive_tom.table1.csv
    validate_results(back)
    assert set(read_results()) == {"adaptive_tom.table1"}


def test_compare_is_side_by_side_per_source() -> None:
    side = compare(reproduced(), "table1")
    assert list(side.columns[-4:]) == ["source", "paper", "ours", "difference"]
    assert side["difference"].tolist() == [0.0, 5.0, -5.0]


def test_unmatched_cells_have_no_paper_value() -> None:
    df = reproduced().assign(task="matrix_5x5")
    assert compare(df)["paper"].isna().all()


def test_ambiguous_draft_must_be_named() -> None:
    df = pd.DataFrame(
        {
            "paper_id": ["coalition"],
            "table_id": ["table1"],
            "benchmark": ["humaneval"],
            "model": ["GLM-4"],
            "tom_order": [1],
            "round": [1],
            "metric": ["ftm"],
            "value": [60.0],
            "source": ["llm:local"],
        }
    )
    assert compare(df)["paper"].tolist() == [65.5]  # both drafts print 65.5: not ambiguous
    t2 = df.assign(table_id="table4", setting="no_tom", side="affirmative", metric="win_rate_pct")
    t2 = t2.drop(columns=["benchmark", "model", "tom_order", "round"])
    with pytest.raises(ResultsContractError, match=r"add the column\(s\) \['draft'\]"):
        compare(t2)
    assert compare(t2.assign(draft="iclr"))["paper"].tolist() == [65.45]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.drop(columns=["source"]), "missing column"),
        (lambda d: d.assign(source="gpt-4"), "source must be"),
        (lambda d: d.assign(paper_id="tom"), "unknown paper_id"),
        (lambda d: d.assign(table_id="Table 1"), "table_id must be lowercase"),
        (lambda d: d.assign(player1="ToM-0"), "repeat the same conditions"),
        (lambda d: d.assign(value=[np.nan, 1.0, 2.0]), "no numeric value and no note"),
    ],
)
def test_contract_violations_are_reported(mutate, message) -> None:  # type: ignore[no-untyped-def]
    df = mutate(reproduced().assign(paper_value=np.nan))
    with pytest.raises(ResultsContractError, match=message):
        validate_results(df)


def test_a_not_reproduced_cell_needs_a_note(isolated: Path) -> None:
    df = pd.DataFrame(
        {
            "paper_id": ["adaptive_tom"],
            "table_id": ["table3"],
            "agent_type": ["PBT"],
            "task": ["overcooked"],
            "metric": ["time"],
            "value": [np.nan],
            "source": ["formal"],
            "note": ["not reproduced: the pretrained PBT population is not available offline"],
        }
    )
    (path,) = write_table(df)
    back = pd.read_csv(path)
    assert back["paper_value"].tolist() == [49.09] and back["note"].str.startswith("not reproduced").all()


def test_report_indexes_tables_with_the_comparison(isolated: Path) -> None:
    write_table(reproduced())
    md = build_report().read_text()
    assert "## An adaptive ToM agent" in md and "### `adaptive_tom.table1`" in md
    assert "> Average coordination performance" in md
    # per source and metric; the pipes in the headers are escaped, so renderers keep it a table
    assert "| source | metric | cells | with paper value | exact (\\|diff\\| < 0.005) | mean \\|diff\\| |" in md
    assert "| formal | point | 2 | 2 | 1 | 2.5 |" in md
    page = (isolated / "results" / "REPORT.html").read_text()
    assert page.startswith("<!doctype html>") and "`" not in page and "<code>formal</code>" in page


def test_report_embeds_figures_and_lays_tables_out_beside_the_paper(isolated: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    write_table(reproduced())
    fig, _ = plt.subplots()
    save_figure(fig, "adaptive_tom.table1_formal")
    md = build_report().read_text()
    assert "![adaptive_tom.table1_formal.png](figures/adaptive_tom.table1_formal.png)" in md
    assert "| player1 | player2 | task | metric | paper | formal | llm:local |" in md
    assert "<img src='figures/adaptive_tom.table1_formal.png'" in (isolated / "results" / "REPORT.html").read_text()


def test_plot_compare_draws_one_point_per_cell_and_saves_a_png(isolated: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    ax = plot_compare(compare(reproduced()))
    assert sum(len(c.get_offsets()) for c in ax.collections) == 3
    path = save_figure(ax.figure, "adaptive_tom.table1_vs_paper")
    assert path == isolated / "results" / "figures" / "adaptive_tom.table1_vs_paper.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="bare name"):
        save_figure(ax.figure, "figs/x.png")


def test_report_lists_the_readings_we_chose_with_what_they_change(isolated: Path) -> None:
    md = build_report().read_text()
    section = md.split("(`coalition`)", 1)[1]
    assert "Readings we chose where the paper is silent" in section
    for parameter in ("selection", "zero_credit", "epsilon", "everyone_in"):
        assert f"| {parameter} |" in section, parameter
    assert "fewest-outside" in section and "0.90" in section


def test_each_notebook_gets_the_readings_that_decide_its_cells() -> None:
    from tomlib.report import readings_of

    params = {nb: set(readings_of("coalition", nb)["parameter"]) for nb in ("07", "09", "10", "12", "13", "14")}
    assert {"selection", "quota", "alignment", "everyone_in"} <= params["07"]
    assert {"selection", "epsilon", "pm_history"} <= params["10"] and "zero_credit" not in params["10"]
    assert {"pm_feedback", "pm_cites", "rematch", "initial", "preferences"} <= params["10"]
    assert params["14"] == {"importance_scale", "zero_credit", "epsilon"}
    assert "shown in" not in readings_of("coalition", "09").columns
    assert readings_of("adaptive_tom", "01").empty or "parameter" in readings_of("adaptive_tom", "01")
