"""Robustness to our readings on known truth: verdicts read the default rows only, an alternative replaces the rows of
the conditions it ran, a flip is named as ``reading=value``, and a reading no units hold is "not checked"."""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
import pytest

from tomlib.claims import PAPERS, load_claims
from tomlib.claims._judge import with_robustness
from tomlib.claims._robust import CLAIMS_COLUMNS, Reading, is_default, load_readings, under
from tomlib.claims._verdict import Judge
from tomlib.paths import data_dir

from .test_engine import claim

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def reading(**over: object) -> Reading:
    fields: dict = {
        "paper_id": "t",
        "parameter": "ties",
        "column": "ties",
        "default": "independent",
        "concerns": "all",
        "tables": ("t.units",),
        "computed_by": "a rerun",
    }
    fields.update(over)
    return Reading(**fields)


def table(rng: np.random.Generator, means: dict[tuple[str, str], float], n: int = 40) -> pd.DataFrame:
    """``n`` units per (condition, ties value) with the declared means."""
    rows = [
        {"cond": cond, "ties": ties, "unit": i, "metric": "score", "value": rng.normal(mean, 1.0), "source": "sim:x"}
        for (cond, ties), mean in means.items()
        for i in range(n)
    ]
    return pd.DataFrame(rows).rename(columns={"unit": "episode"})


def judged(c, t: pd.DataFrame, readings: list[Reading]) -> pd.Series:
    judge = Judge({"t.units": t})
    rows = judge.verdicts("t", [c], {"t.units": under(t, readings)}, ["sim:x"])
    return with_robustness(rows, "t", [c], readings, {"t.units": t}, judge).iloc[0]


def test_the_verdict_reads_the_default_rows_and_an_alternative_that_reverses_it_flips_it() -> None:
    rng = np.random.default_rng(3)
    t = table(rng, {("A", "independent"): 1.0, ("B", "independent"): 0.0, ("B", "shared(ε=0.1)"): 2.0})
    row = judged(claim(), t, [reading()])
    assert row["verdict"] == "supported", row  # pooled, B's rows would average 1.0 and the claim would not hold
    assert row["robust"] == "no" and row["flips_under"] == "ties=shared(ε=0.1)", row
    assert row["effect"] == pytest.approx(1.0, abs=0.4)


def test_an_alternative_that_leaves_the_verdict_is_robust_and_one_no_units_hold_is_not_checked() -> None:
    rng = np.random.default_rng(4)
    t = table(rng, {("A", "independent"): 1.0, ("B", "independent"): 0.0, ("B", "shared(ε=0.1)"): 0.1})
    row = judged(claim(), t, [reading()])
    assert (row["robust"], row["flips_under"], row["not_checked"]) == ("yes", "", ""), row
    more = [reading(), reading(parameter="history", column="history", default="10")]
    row = judged(claim(), t, more)
    assert row["robust"] == "not all checked" and row["not_checked"] == "history", row
    formal_only = [reading(), reading(parameter="history", column="history", default="10", concerns="formal")]
    assert judged(claim(), t, formal_only)["robust"] == "yes"  # a formal reading does not bear on sim:x


def test_a_condition_without_alternative_rows_keeps_its_default_rows() -> None:
    rng = np.random.default_rng(5)
    t = table(rng, {("A", "independent"): 1.0, ("B", "independent"): 0.0, ("A", "shared(ε=0.1)"): 3.0})
    alt = under(t, [reading()], (reading(), "shared(ε=0.1)"))
    assert set(zip(alt["cond"], alt["ties"], strict=True)) == {("A", "shared(ε=0.1)"), ("B", "independent")}
    assert len(alt) == 80


def test_a_default_that_depends_on_another_column() -> None:
    r = reading(column="selection", default="best-aligned; uniform if draft=neurips")
    t = pd.DataFrame(
        {
            "draft": ["iclr", "iclr", "neurips", "neurips", "iclr"],
            "selection": ["best-aligned", "uniform", "uniform", "best-aligned", ""],
        }
    )
    assert is_default(t, r).tolist() == [True, False, True, False, True]


def test_a_choice_of_measure_is_judged_on_each_measure() -> None:
    rng = np.random.default_rng(6)
    rows = []
    for metric, gap in (("ftm_team", 1.0), ("ftm_next", -1.0)):
        for cond, mean in (("A", gap), ("B", 0.0)):
            rows += [
                {"cond": cond, "episode": i, "metric": metric, "value": rng.normal(mean, 1), "source": "sim:x"}
                for i in range(40)
            ]
    r = reading(parameter="ftm measure", column="metric", default="ftm|ftm_next|ftm_team")
    row = judged(claim(metric="ftm_team"), pd.DataFrame(rows), [r])
    assert row["verdict"] == "supported" and row["flips_under"] == "metric=ftm_next", row


@pytest.mark.parametrize("paper", PAPERS)
def test_every_reading_of_ours_says_how_it_reaches_the_claims(paper: str) -> None:
    """A reading added to data/readings/<paper>.csv without its claims_* columns filled fails here."""
    path = data_dir() / "readings" / f"{paper}.csv"
    rows = list(csv.DictReader(path.open())) if path.exists() else []
    assert all(set(CLAIMS_COLUMNS) <= set(r) for r in rows), f"{path.name} lacks columns {CLAIMS_COLUMNS}"
    chosen = [r["parameter"] for r in rows if r["parameter"] != "(fixed)"]
    mine = load_readings(paper)
    assert [r.parameter for r in mine] == chosen
    tables = {t for c in load_claims(paper) for t in c.tables}
    for r in mine:
        assert r.computed_by, f"{r.parameter}: claims_alternative must say what computes an alternative"
        assert set(r.tables) <= tables, f"{r.parameter}: tables {set(r.tables) - tables} that no claim reads"
        assert r.concerns in {"formal", "llm", "all", ""} or r.concerns.startswith("formal+"), r
        for c in load_claims(paper):  # a claim that pinned a reading could not be judged under its alternatives
            if r.column and r.column != "metric":
                for q in (c.select, c.a, c.b):
                    assert r.column not in q.replace("'", " ").split(), f"{c.claim_id} pins reading {r.column}"


def test_a_run_only_under_another_reading_is_judged_and_labelled_by_it() -> None:
    """A notebook run with tie_break=shared in a fresh results folder: no default rows, so the verdict is given under
    that reading, as its own column, never as the default's."""
    rng = np.random.default_rng(8)
    t = table(rng, {("A", "shared(ε=0)"): 1.0, ("B", "shared(ε=0)"): 0.0})
    judge = Judge({"t.units": t})
    rows = judge.verdicts("t", [claim()], {"t.units": under(t, [reading()])}, ["sim:x"])
    out = with_robustness(rows, "t", [claim()], [reading()], {"t.units": t}, judge)
    got = out.set_index("source")
    assert "sim:x" not in got.index or got.loc["sim:x", "verdict"] == "not reproduced"
    assert got.loc["sim:x (ties=shared(ε=0))", "verdict"] == "supported", out


def test_robustness_asked_for_some_claims_is_theirs_in_the_whole_table() -> None:
    """``wanted``: the claims a notebook shows. Their rows are those of the whole judgement, though alternatives that
    touch only the other claims are skipped; Holm's family still holds every claim."""
    rng = np.random.default_rng(5)
    means = {("A", "independent"): 0.6, ("B", "independent"): 0.0, ("B", "shared(ε=0.1)"): 0.5}
    means |= {("C", "independent"): 0.5, ("D", "independent"): 0.0, ("D", "shared(ε=0.5)"): 0.6}
    t = table(rng, means, n=30)
    first = claim(claim_id="t.first")
    second = claim(claim_id="t.second", a="cond == 'C'", b="cond == 'D'")
    readings = [reading()]
    judge = Judge({"t.units": t})
    rows = judge.verdicts("t", [first, second], {"t.units": under(t, readings)}, ["sim:x"])
    whole = with_robustness(rows, "t", [first, second], readings, {"t.units": t}, judge)
    part = with_robustness(rows, "t", [first, second], readings, {"t.units": t}, judge, wanted={"t.first"})
    pd.testing.assert_series_equal(part.iloc[0], whole.iloc[0])
    assert whole.iloc[0]["flips_under"] + whole.iloc[0]["held_under"] == "ties=shared(ε=0.1)"  # not ε=0.5's
    assert whole.iloc[1]["flips_under"] + whole.iloc[1]["held_under"] == "ties=shared(ε=0.5)"
    assert part.iloc[1]["flips_under"] + part.iloc[1]["held_under"] == ""  # ε=0.5 touches only the second: skipped
