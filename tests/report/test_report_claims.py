"""REPORT's claims parts: the headline tally per source (no simulated rows, no runs under another reading), and a
simulated model's verdicts set against the truth its competence declares."""

from __future__ import annotations

import pandas as pd
import pytest

from tomlib.claims import VERDICT_COLUMNS
from tomlib.report._claims import claims_tally, sim_truth

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def verdicts(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([{**dict.fromkeys(VERDICT_COLUMNS), "paper_id": "coalition", **r} for r in rows])


def test_the_headline_counts_verdicts_per_source_and_leaves_the_sim_and_other_readings_apart() -> None:
    frame = verdicts(
        [
            {"claim_id": "coalition.a", "source": "formal", "verdict": "supported"},
            {"claim_id": "coalition.b", "source": "formal", "verdict": "contradicted"},
            {"claim_id": "coalition.c", "source": "formal", "verdict": "supported"},
            {"claim_id": "coalition.a", "source": "llm:local", "verdict": "inconclusive"},
            {"claim_id": "coalition.b", "source": "llm:local", "verdict": "not reproduced"},
            {"claim_id": "coalition.a", "source": "sim:sim", "verdict": "supported"},
            {"claim_id": "coalition.a", "source": "formal (tie_break=shared(ε=0))", "verdict": "supported"},
        ]
    )
    assert claims_tally("coalition", frame) == (
        "formal: 2 supported (0 firm), 1 contradicted (0 firm) · llm:local: 1 inconclusive"
    )
    assert claims_tally("tom_ib", frame) == "no claim judged yet"


def test_the_sims_verdicts_are_set_against_its_declared_truth() -> None:
    frame = verdicts(
        [
            {
                "claim_id": "coalition.matching_raises_ftm_humaneval",
                "source": "sim:sim",
                "verdict": "supported",
                "effect": 8.0,
                "ci_low": 4.0,
                "ci_high": 12.0,
                "n_units": 40,
                "declared_effect": 11.4,
                "declared_truth": "holds",
                "matches_truth": "yes",
            },
            {
                "claim_id": "coalition.tom2_best_pass1",
                "source": "sim:sim",
                "verdict": "supported",
                "effect": 0.1,
                "ci_low": 0.02,
                "ci_high": 0.2,
                "n_units": 40,
                "declared_effect": 0.0,
                "declared_truth": "boundary",
                "matches_truth": "no",
            },
            {"claim_id": "coalition.tom2_more_stable", "source": "sim:sim", "verdict": "inconclusive"},
        ]
    )
    table, text = sim_truth("coalition", frame)
    assert len(table) == 2 and list(table["matches?"]) == ["yes", "no: a false verdict"]
    assert "2 verdicts" in text and "1 match it (1 decided)" in text and "1 are false" in text
    assert "1 other verdicts rest on rows whose expectation has no closed form" in text
    assert sim_truth("coalition", frame[frame["declared_truth"].isna()])[0].empty
