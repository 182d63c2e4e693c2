"""Which stable outcome is played: a named rule, applied exactly, that no longer hides inside the solver."""

from __future__ import annotations

import random

import numpy as np
import pytest

from tomlib.coalition import (
    Algorithm1,
    CoalitionInputError,
    choose,
    make_instance,
    solve_coalitions,
    stable_outcomes,
    team_shares,
)
from tomlib.debate import DebateConfig
from tomlib.experiments._selection import random_instances, selection_shares
from tomlib.programming import TeamConfig

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

NAMES = ["ToM0", "ToM1", "ToM2"]


def reasoning_team(s12: float, s21: float, s10: float, s20: float):  # type: ignore[no-untyped-def]
    """The reasoning team of three: ToM-0 has no beliefs; scores in [-1, 1], higher = better aligned."""
    scores = [[0, 0, 0], [s10, 0, s12], [s20, s21, 0]]
    return make_instance(scores, names=NAMES, no_beliefs=["ToM0"], min_size=2)


def test_each_rule_plays_its_own_stable_outcome() -> None:
    # ToM1 and ToM2 trust each other a little, and ToM1 trusts ToM0 most: three coalitions are stable
    inst = reasoning_team(s12=0.2, s21=0.2, s10=0.9, s20=-0.5)
    teams = {o.team for o in stable_outcomes(inst, "iclr")}
    assert len(teams) > 1
    # the solver's objective keeps everyone with beliefs inside: all three
    assert solve_coalitions(inst).structure.coalitions == ((0, 1, 2),)  # type: ignore[union-attr]
    assert team_shares(inst, "iclr", "fewest-outside") == {(0, 1, 2): 1.0}
    # the strongest-aligned team is ToM1 with ToM0 (ToM1's misalignment 0.05)
    assert team_shares(inst, "iclr", "best-aligned") == {(0, 1): 1.0}
    outcomes = [o.team for o in stable_outcomes(inst, "iclr")]
    expected = {t: outcomes.count(t) / len(outcomes) for t in teams}  # each stable outcome equally likely
    assert team_shares(inst, "iclr", "uniform") == pytest.approx(expected)


def test_uniform_draws_are_seeded_and_cover_every_stable_pair() -> None:
    inst = make_instance([[0, 0, 0], [0.1, 0, 0.1], [0.1, 0.1, 0]], names=NAMES, no_beliefs=["ToM0"], min_size=2)
    pairs = {o.team for o in stable_outcomes(inst, "neurips")}
    drawn = [choose(inst, "neurips", "uniform", random.Random(i))[0].team for i in range(60)]  # type: ignore[union-attr]
    assert set(drawn) == pairs and len(pairs) > 1
    again = [choose(inst, "neurips", "uniform", random.Random(i))[0].team for i in range(60)]  # type: ignore[union-attr]
    assert drawn == again


def test_algorithm1_takes_the_rule_and_defaults_to_each_drafts_own() -> None:
    inst = reasoning_team(s12=0.2, s21=0.2, s10=0.9, s20=-0.5)
    scores = inst.scores
    picked = {
        rule: Algorithm1(inst, mechanism="iclr", selection=rule).step(scores).team
        for rule in ("best-aligned", "fewest-outside")
    }
    assert picked == {"best-aligned": (0, 1), "fewest-outside": (0, 1, 2)}
    assert Algorithm1(inst, mechanism="iclr").selection == "best-aligned"
    assert Algorithm1(inst, mechanism="neurips").selection == "uniform"
    rec = Algorithm1(inst, mechanism="iclr").step(scores)
    assert rec.team == (0, 1) and rec.stable_outcomes == len(stable_outcomes(inst, "iclr"))
    with pytest.raises(CoalitionInputError, match=r"Unknown selection rule 'fewest'.*best-aligned"):
        Algorithm1(inst, selection="fewest")


def test_the_rule_moves_who_cooperates_on_random_scores() -> None:
    # the measurement: with three debaters, several pairs are stable in most draws, and tomlib's first rule
    # picked the ToM-1/ToM-2 pair about twice as often as a uniform draw among the stable pairs
    inst = random_instances(["D0", "D1", "D2"], no_beliefs=["D0"], draws=400, min_size=2)
    shares = selection_shares(inst, "neurips")
    assert shares.loc["(instances with several stable outcomes)", "uniform"] > 80
    tom_pair = shares.loc["{D1, D2}"]
    assert tom_pair["fewest-outside"] > 55 and tom_pair["uniform"] < 40
    for rule in shares.columns:  # every draw plays exactly one team (shares of teams sum to 100%)
        assert shares[rule].drop(["(instances with several stable outcomes)", "(instances with none)"]).sum() == (
            pytest.approx(100, abs=0.5)
        )


def test_a_rule_other_than_the_default_is_named_in_the_condition() -> None:
    assert TeamConfig(pm_tom=1, matching=True).label == "pm1-eng0-matching"
    assert TeamConfig(pm_tom=1, matching=True, selection="uniform").label == "pm1-eng0-matching-uniform"
    assert DebateConfig(setting="tom_matching").label == "tom_matching:affirmative"
    assert DebateConfig(setting="tom_matching", selection="best-aligned").label.endswith(":best-aligned")


def test_enumeration_has_a_clear_limit() -> None:
    big = make_instance(np.zeros((9, 9)))
    with pytest.raises(CoalitionInputError, match=r"at most 8 agents.*fewest-outside"):
        stable_outcomes(big, "iclr")


def test_equal_means_compare_equal_and_block_nothing() -> None:
    # the PM's misalignments 3/16, 3/16 (s = 0.625) in its coalition, and 1/8, 1/4 (s = 0.75, 0.5) outside it: both
    # means are exactly 3/16. Rounded to 1/1000 (half to even), 0.1875 became 0.188 > 0.1875, so the outsiders'
    # coalition falsely blocked the PM's.
    from tomlib.coalition import CoalitionStructure, find_blocking, strictly_prefers

    scores = {"PM": {"E1": 0.625, "E2": 0.625, "E3": 0.75, "E4": 0.5}}
    names = ["PM", "E1", "E2", "E3", "E4"]
    ours = CoalitionStructure.of([(0, 1, 2)], 5)
    inst = make_instance(scores, names=names)
    assert inst.exact and inst.min_size == 3
    assert not strictly_prefers(inst, 0, (0, 3, 4), (0, 1, 2)) and not strictly_prefers(inst, 0, (0, 1, 2), (0, 3, 4))
    assert find_blocking(inst, ours) is None
    rounded = make_instance(scores, names=names, resolution=1000)
    assert not rounded.exact and find_blocking(rounded, ours) == (0, 3, 4)


def test_the_literal_reading_puts_everyone_in_a_coalition() -> None:
    from tomlib.coalition import brute_force_stable, enumerate_structures

    # three agents, coalitions of at least two: with outsiders allowed there are four structures, read literally one
    assert len(list(enumerate_structures(3, 2))) == 5 and len(list(enumerate_structures(3, 2, everyone_in=True))) == 1
    inst = reasoning_team(s12=0.2, s21=0.2, s10=0.9, s20=-0.5)
    literal = make_instance(inst.scores, names=NAMES, no_beliefs=["ToM0"], min_size=2, everyone_in=True)
    # ToM0 has no beliefs, so it never leaves a coalition for another: the grand coalition is stable, and it is the
    # only outcome the literal reading allows, where outsiders give several to choose from
    assert [o.team for o in stable_outcomes(literal, "iclr")] == [(0, 1, 2)]
    assert brute_force_stable(literal) == [solve_coalitions(literal).structure]
    assert {o.team for o in stable_outcomes(inst, "iclr")} >= {(0, 1), (0, 1, 2)}
    # five agents with ⌈5/2⌉ = 3: read literally only the grand coalition is a structure
    five = make_instance(np.full((5, 5), 0.5), everyone_in=True)
    assert [s.coalitions for s in enumerate_structures(5, 3, everyone_in=True)] == [((0, 1, 2, 3, 4),)]
    assert solve_coalitions(five).structure.coalitions == ((0, 1, 2, 3, 4),)  # type: ignore[union-attr]
