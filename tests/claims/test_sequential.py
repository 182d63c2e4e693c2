"""Anytime-valid verdicts (issue 34): the confidence sequence keeps its error rate at every look where repeated fixed-n
intervals do not, reads each direction the right way round, and reduces each design to independent observations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tomlib.claims import load_claims
from tomlib.claims._calibrate import design, draw
from tomlib.claims._sequential import confidence_sequence, decide, first_units, observations, sequential_verdict
from tomlib.claims._verdict import groups

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

pytest.importorskip("confseq.boundaries")

REPS, LOOKS, STEP = 300, 20, 10  # 300 streams looked at after every 10 observations, up to 200


def _claim(claim_id: str):
    paper = claim_id.split(".", 1)[0]
    return next(c for c in load_claims(paper) if c.claim_id == claim_id)


def test_under_no_effect_looking_after_every_wave_keeps_the_error_rate_where_fixed_intervals_do_not() -> None:
    rng = np.random.default_rng(7)
    ever_cs = ever_fixed = 0
    for _ in range(REPS):
        x = rng.normal(0, 3, LOOKS * STEP)
        cs_hit = fixed_hit = False
        for k in range(1, LOOKS + 1):
            seen = x[: k * STEP]
            seq = confidence_sequence(seen, 0.05, 100)
            cs_hit |= seq.low > 0 or seq.high < 0
            fixed_hit |= stats.ttest_1samp(seen, 0).pvalue < 0.05
        ever_cs += cs_hit
        ever_fixed += fixed_hit
    bound = 0.05 + 2 * np.sqrt(0.05 * 0.95 / REPS)
    assert ever_cs / REPS <= bound  # any look, any stopping rule
    assert ever_fixed / REPS > bound  # the naive reading of 20 looks errs far more: the test can tell them apart


def test_a_real_effect_is_decided_for_the_claim_and_the_sequence_holds_it() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(2.0, 3.0, 120)
    seq = confidence_sequence(x, 0.05, 60)
    assert seq.low < 2.0 < seq.high and seq.low > 0
    claim = _claim("coalition.matching_raises_ftm_humaneval")  # greater
    assert decide(claim, seq.low, seq.high) == "supported"
    assert decide(claim, -seq.high, -seq.low) == "contradicted"


@pytest.mark.parametrize(
    ("claim_id", "low", "high", "verdict"),
    [
        ("coalition.ftm_declines_without_matching", -3.0, -1.0, "supported"),  # less
        ("coalition.ftm_declines_without_matching", 1.0, 3.0, "contradicted"),
        ("coalition.higher_tom_no_gain", -2.0, 4.0, "supported"),  # not greater by more than 5
        ("coalition.higher_tom_no_gain", 6.0, 9.0, "contradicted"),
        ("coalition.higher_tom_no_gain", 2.0, 8.0, "inconclusive"),
    ],
)
def test_each_direction_is_read_the_right_way_round(claim_id: str, low: float, high: float, verdict: str) -> None:
    assert decide(_claim(claim_id), low, high) == verdict


def test_a_paired_claim_observes_each_pairs_difference_in_sampling_order() -> None:
    claim = _claim("coalition.matching_raises_ftm_humaneval")
    c = design(claim)
    frame = groups(c, draw(claim, 5.0, 30, np.random.default_rng(0)))
    got = observations(c, frame)
    keys = c.columns["pair_on"]
    a = frame[frame.group == "A"].groupby(keys, sort=False)["value"].mean()
    b = frame[frame.group == "B"].groupby(keys, sort=False)["value"].mean()
    assert np.allclose(got, (a - b.reindex(a.index)).to_numpy())
    assert len(first_units(c, frame, 10).groupby(keys)) == 10


def test_an_unpaired_claim_sets_units_of_a_and_b_side_by_side_within_strata() -> None:
    claim = _claim("adaptive_tom.alignment_matters_point")  # episodes, within each task
    c = design(claim)
    frame = pd.DataFrame(
        {
            "task": ["m1"] * 4 + ["mn"] * 4,
            "group": ["A", "A", "B", "B"] * 2,
            "value": [10.0, 12.0, 1.0, 2.0, 30.0, 31.0, 3.0, 5.0],
        }
    )
    assert list(observations(c, frame)) == [9.0, 10.0, 27.0, 26.0]
    verdict, seq = sequential_verdict(c, frame, 0.05, 4)
    assert seq.n == 4 and verdict in ("supported", "inconclusive")


def test_a_one_group_claim_is_set_against_its_null_once() -> None:
    """The values themselves are observed and the interval is read against the null: a stream at the null stays
    undecided, one clearly above it is supported (a double subtraction of the null decided every null stream)."""
    claim = _claim("adaptive_tom.nonllm_read_as_tom0")  # the mean weight on ToM-0 is above its null
    c = design(claim)
    rng = np.random.default_rng(11)
    at_null = pd.DataFrame({"group": "A", "value": float(claim.null) + rng.normal(0, 0.05, 60)})
    assert np.allclose(observations(c, at_null), at_null["value"])
    assert sequential_verdict(c, at_null, 0.05, 60)[0] == "inconclusive"
    above = at_null.assign(value=at_null["value"] + 0.2)
    assert sequential_verdict(c, above, 0.05, 60)[0] == "supported"
