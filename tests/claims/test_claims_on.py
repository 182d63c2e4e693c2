"""What a notebook's last cell shows when it ran alone into a fresh results folder."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tomlib.claims import claims_on
from tomlib.experiments import adaptive_tom as at

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def test_a_claim_resting_on_a_table_these_results_lack_says_so(tmp_path: Path) -> None:
    """Notebook 02 alone: its claims that also rest on Table 1 (A-ToM against aligned pairs) are not reproduced
    here and say which table is missing, instead of failing on Table 1's columns; the rest are judged."""
    asyncio.run(at.table2(tasks=["memory_1"], algorithms=["FTL"], episodes=2, progress=False, results=str(tmp_path)))
    assert sorted(p.name for p in (tmp_path / "units").glob("*.csv")) == ["adaptive_tom.table2.csv"]
    shown = claims_on(["adaptive_tom.table2"], tmp_path).set_index("#")
    needs_table1 = shown["the paper says"].str.contains("Table 1")
    assert needs_table1.any() and (~needs_table1).any()
    for text in shown.loc[needs_table1, "ours"]:
        assert text.startswith("not reproduced here: it also rests on adaptive_tom.table1"), text
    assert shown.loc[~needs_table1, "formal"].notna().all()  # judged on the formal rows this run wrote


def test_a_notebook_shows_the_claims_table_whole(tmp_path: Path) -> None:
    """pandas cuts a cell at 50 characters in a notebook: the claims table is shown uncut, as HTML and as text."""
    from IPython.core.formatters import DisplayFormatter

    asyncio.run(at.table2(tasks=["memory_1"], algorithms=["FTL"], episodes=2, progress=False, results=str(tmp_path)))
    shown = claims_on(["adaptive_tom.table2"], tmp_path)
    long = [str(v) for v in shown.to_numpy().ravel() if isinstance(v, str) and len(v) > 60]
    assert long  # statements and "not reproduced here: ..." are longer than pandas' cut
    formats, _ = DisplayFormatter().format(shown)
    for text in long:
        assert text in formats["text/plain"]
        assert text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") in formats["text/html"]
    assert type(shown.set_index("claim")).__name__ == "ClaimsTable"  # still a DataFrame to work with
