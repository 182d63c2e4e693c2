"""The claims registries: every row well formed, every quote on its line of the paper, ids unique."""

from __future__ import annotations

import pytest

from tomlib.claims import PAPERS, load_claims, misquoted, papers_dir
from tomlib.claims._registry import Claim
from tomlib.errors import ConfigFileError

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


@pytest.mark.parametrize("paper", PAPERS)
def test_every_claim_is_well_formed(paper: str) -> None:
    claims = load_claims(paper)
    assert len(claims) >= 3
    assert all(c.claim_id.startswith(paper + ".") for c in claims)


@pytest.mark.parametrize("paper", PAPERS)
def test_every_quote_stands_at_its_line(paper: str) -> None:
    papers = papers_dir()
    if papers is None:
        pytest.skip("the paper texts (../shared/papers or TOMLIB_PAPERS) are not on this machine")
    assert misquoted(load_claims(paper), papers) == []


def test_a_quote_moved_off_its_line_is_caught(tmp_path) -> None:
    papers = papers_dir()
    if papers is None:
        pytest.skip("the paper texts are not on this machine")
    c = load_claims("adaptive_tom")[0]
    moved = Claim(**{**c.model_dump(), "line": c.line + 1})
    assert misquoted([moved], papers) and not misquoted([c], papers)


def test_a_malformed_row_names_file_row_and_field(tmp_path) -> None:
    source = load_claims("tom_ib")[0].model_dump()
    row = {k: ("" if v is None else v) for k, v in source.items()}
    row["direction"] = "sideways"
    import pandas as pd

    pd.DataFrame([row]).to_csv(tmp_path / "tom_ib.csv", index=False)
    with pytest.raises(ConfigFileError, match=r"tom_ib\.csv:2 .*direction"):
        load_claims("tom_ib", tmp_path)
