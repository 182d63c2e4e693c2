"""REPORT at a glance (issue 54): per paper a verdict grid whose cells are claims.csv's verdicts, cell for cell, with
the readings each verdict rests on; counts that are the grid's; claims cited by table and public address, not by a
line of a file the reader does not have; counts with thousands separators and claims.csv with integer counts."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from tomlib.claims import VERDICT_COLUMNS, load_claims, paper_info
from tomlib.report._claims import claims_tally, grid_frame, grid_html, is_firm
from tomlib.report._markup import _cell
from tomlib.report._tables import with_paper_models

pytestmark = pytest.mark.tier("fast")


def verdicts(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([{**dict.fromkeys(VERDICT_COLUMNS), **r} for r in rows])


def test_the_grid_has_a_cell_per_claim_and_source_and_marks_the_readings_a_verdict_rests_on() -> None:
    first, second = (c.claim_id for c in load_claims("coalition")[:2])
    frame = verdicts(
        [
            {"paper_id": "coalition", "claim_id": first, "source": "formal", "verdict": "supported",
             "robust": "no", "flips_under": "trust=uniform; blocking=any"},
            {"paper_id": "coalition", "claim_id": second, "source": "llm:local", "verdict": "inconclusive",
             "robust": "yes", "held_under": "metric=ftm_team"},
            {"paper_id": "coalition", "claim_id": second, "source": "sim:sim", "verdict": "supported"},
            {"paper_id": "coalition", "claim_id": first, "source": "formal (trust=uniform)", "verdict": "contradicted"},
        ]
    )  # fmt: skip
    grid = grid_frame("coalition", frame).set_index("#")
    assert list(grid.columns) == ["claim", "formal", "llm:local"]  # no sim, no run under another reading
    assert len(grid) == len(load_claims("coalition")) and list(grid.index[:2]) == ["C1", "C2"]
    assert grid.loc["C1", "formal"] == "🟩 supported ⚑ trust=uniform, blocking=any"
    assert grid.loc["C1", "llm:local"] == "⬜ not run"
    assert grid.loc["C2", "llm:local"] == "🟨 inconclusive"
    page = grid_html("coalition", frame, "#claim-coalition")
    assert "href='#claim-coalition-C1'" in page and "background:#d4edda'>supported ⚑ trust=uniform" in page
    assert claims_tally("coalition", frame) == "formal: 1 supported (0 firm) · llm:local: 1 inconclusive"
    assert is_firm(frame.iloc[1]) and not is_firm(frame.iloc[0])


def test_counts_carry_thousands_separators() -> None:
    assert _cell(7848858) == "7,848,858" and _cell(7848858.0) == "7,848,858" and _cell(0.25) == "0.25"
    assert _cell(float("nan")) == "" and _cell(True) == "True" and _cell("7848858") == "7848858"


def test_a_table_of_other_models_than_the_papers_shows_the_papers_own_models_beside_ours() -> None:
    layout = pd.DataFrame(
        {"model": ["local", "local"], "benchmark": ["humaneval"] * 2, "matching": ["no_matching"] * 2,
         "tom_order": [1, 1], "round": [1, 2], "metric": ["ftm", "ftm"], "paper": ["", ""], "llm:local": ["1", "2"]}
    )  # fmt: skip
    shown, models = with_paper_models(layout, "coalition", "table2")
    assert "GPT-3.5-Turbo" in models and "paper" not in shown.columns
    assert shown.loc[0, "paper: GPT-3.5-Turbo"] == "62.50"  # Table 2 (NeurIPS draft), round 1, ToM-1, no matching
    mine = layout.assign(paper=["3.00", ""])  # a paper value of our own model: nothing to add
    assert with_paper_models(mine, "coalition", "table2") == (mine, [])


def grids(report: str) -> dict[tuple[str, str], str]:
    """REPORT.md's 'At a glance' tables: (claim number, source) -> cell."""
    cells = {}
    for part in report.split("### At a glance")[1:]:
        lines = [ln for ln in part.split("\n\n")[1].splitlines() if ln.startswith("|")]
        head = [h.strip() for h in lines[0].strip("|").split("|")]
        for line in lines[2:]:
            row = [c.strip() for c in line.strip("|").split("|")]
            cells.update({(row[0], h): c for h, c in zip(head[2:], row[2:], strict=True)})
    return cells


@pytest.mark.series
def test_reports_grid_is_claims_csv_cell_for_cell(offline_series: dict) -> None:  # type: ignore[type-arg]
    res: Path = offline_series["results"]
    report = (res / "REPORT.md").read_text()
    claims = pd.read_csv(res / "claims.csv")
    shown = grids(report)
    number = {c.claim_id: c.number for p in ("adaptive_tom", "coalition", "tom_ib") for c in load_claims(p)}
    mine = claims[~claims["source"].str.startswith("sim:") & ~claims["source"].str.contains(" (", regex=False)]
    expected = {
        (number[c.claim_id], s)
        for p in ("adaptive_tom", "coalition", "tom_ib")
        for c in load_claims(p)
        for s in set(mine.loc[mine["paper_id"] == p, "source"])
    }
    assert set(shown) == expected
    for r in mine.itertuples():
        cell = shown[(number[r.claim_id], r.source)]
        word = "not run" if r.verdict == "not reproduced" else r.verdict
        assert cell.split(" ⚑ ")[0].endswith(word), (r.claim_id, r.source, cell)
        flips = "" if pd.isna(r.flips_under) else r.flips_under.replace("; ", ", ")
        assert (cell.split(" ⚑ ")[1] if " ⚑ " in cell else "") == flips.replace("|", "\\|"), (r.claim_id, cell)
    # the summary's counts, per paper and source, are the grid's
    top = report.split("\n## ")[0]
    for p in ("adaptive_tom", "coalition", "tom_ib"):
        row = next(line for line in top.splitlines() if line.startswith(f"| {paper_info(p).topic} |"))
        for source in set(mine.loc[mine["paper_id"] == p, "source"]):
            said = re.search(rf"{re.escape(source)}: ([^·|]*)", row)
            for v in ("supported", "contradicted", "inconclusive"):
                n = sum(
                    1
                    for (num, s), c in shown.items()
                    if s == source and num[0] == paper_info(p).prefix and c.split(" ⚑ ")[0].endswith(v)
                )
                assert (f"{n} {v}" in said.group(1)) if n else (v not in (said.group(1) if said else "")), (p, row)
    glance = (res / "glance.md").read_text()  # the book's: HTML grids, their numbers linking into REPORT.html
    assert glance.count("<table class='grid'>") == report.count("### At a glance")
    assert "href='../REPORT.html#claim-coalition-C1'" in glance
    # cited by table and public address; no line of a paper file the reader does not have
    assert not re.search(r"\.txt:\d+", report) and "arXiv:2603.16264" in report
    # claims.csv: counts as integers, floats without binary noise
    raw = pd.read_csv(res / "claims.csv", dtype=str, keep_default_na=False)
    for col in ("n_units", "units_in_clusters", "units_for_power"):
        assert raw[col].str.fullmatch(r"\d*").all(), (col, raw[col][~raw[col].str.fullmatch(r"\d*")].head())
    assert not re.search(r"[1-9]\d{10,}", (res / "claims.csv").read_text().replace(".", ""))  # 10 digits at most


def test_readmes_claim_counts_are_the_registrys() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    said = re.search(r"the papers' (\d+) claims \((\d+), (\d+) and (\d+)\)", readme)
    counts = [len([c for c in load_claims(p) if c.by == "paper"]) for p in ("adaptive_tom", "coalition", "tom_ib")]
    assert said and [int(g) for g in said.groups()] == [sum(counts), *counts]
