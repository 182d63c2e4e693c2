"""A claim's declared truth on a simulated model's rows (tomlib.claims._truth): the claim's own contrast on the
expected values, with its pairs and strata; an inverted direction, a dropped pairing or a wrong match table fails."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.claims.test_engine import claim
from tomlib.claims._truth import declared_truth, matches, point_effect
from tomlib.claims._verdict import groups

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def frame(c: object, rows: list[dict]) -> pd.DataFrame:
    table = pd.DataFrame(rows).assign(metric="score", source="sim:x")
    return groups(c, table)  # type: ignore[arg-type]


def test_the_declared_effect_is_the_claims_contrast_on_the_expected_values() -> None:
    rows = [{"cond": c, "value": 0.0, "expected": e} for c, e in (("A", 0.7), ("A", 0.7), ("B", 0.5), ("B", 0.5))]
    assert declared_truth(claim(), frame(claim(), rows)) == pytest.approx((0.2, "holds"))  # type: ignore[arg-type]
    assert declared_truth(claim(direction="less"), frame(claim(), rows))[1] == "fails"  # type: ignore[index]
    same = [{**r, "expected": 0.5} for r in rows]
    assert declared_truth(claim(), frame(claim(), same))[1] == "boundary"  # type: ignore[index]
    # a "no better" claim holds strictly inside its margin and sits on its boundary at the margin's edge
    assert declared_truth(claim(direction="not_greater", margin=0.3), frame(claim(), rows))[1] == "holds"  # type: ignore[index]
    assert declared_truth(claim(direction="not_greater", margin=0.2), frame(claim(), rows))[1] == "boundary"  # type: ignore[index]
    # no declared expectation for some row: no truth to check against
    partial = [*rows[:3], {**rows[3], "expected": np.nan}]
    assert declared_truth(claim(), frame(claim(), partial)) is None


def test_pairs_and_strata_weigh_the_expected_values_as_the_verdict_does() -> None:
    # stratum s1 has many B units with a low expectation; an unweighted pooled difference would say "fails"
    rows = [{"cond": "A", "s": "s1", "expected": 0.6}] * 2 + [{"cond": "B", "s": "s1", "expected": 0.5}] * 2
    rows += [{"cond": "A", "s": "s2", "expected": 0.9}] * 8 + [{"cond": "B", "s": "s2", "expected": 0.85}] * 2
    rows = [{**r, "value": 0.0} for r in rows]
    c = claim(strata="s")
    assert point_effect(c, frame(c, rows)) == pytest.approx((0.1 + 0.05) / 2)
    pooled = np.mean([r["expected"] for r in rows if r["cond"] == "A"]) - 0.675
    assert pooled != pytest.approx((0.1 + 0.05) / 2)
    # pairs: the mean of within-pair differences, over the pairs that ran both conditions
    pairs = [{"cond": "A", "task": t, "expected": e, "value": 0.0} for t, e in (("t1", 0.9), ("t2", 0.2), ("t3", 1.0))]
    pairs += [{"cond": "B", "task": t, "expected": e, "value": 0.0} for t, e in (("t1", 0.8), ("t2", 0.4))]
    p = claim(pair_on="task")
    assert point_effect(p, frame(p, pairs)) == pytest.approx(((0.9 - 0.8) + (0.2 - 0.4)) / 2)


def test_a_verdict_matches_its_truth_only_on_the_truths_side() -> None:
    assert matches("supported", "holds") == "yes" and matches("contradicted", "fails") == "yes"
    assert matches("supported", "fails") == "no" and matches("contradicted", "holds") == "no"
    assert matches("supported", "boundary") == "no" and matches("contradicted", "boundary") == "no"
    assert matches("inconclusive", "boundary") == "yes" and matches("inconclusive", "holds") == "undecided"
