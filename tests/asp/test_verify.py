"""ASP belief verification: vocabulary-only facts, minimal cores (proven minimal), plain explanations, fuzzing."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tomlib.asp import (
    Checker,
    TranslationError,
    domain_facts,
    minimal_core,
    parse_facts,
    parse_program,
    self_consistent,
    verify,
)
from tomlib.envs.city import Action, City

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

CITY = City()
STATE = CITY.apply(CITY.reset(), "FOOD_AGENT", Action("MOVE", "d2"))  # food agent now in d2; medical's turn

TRUE = [
    "at(food_agent,d2).", "carries(food_agent,food,100).", "connected(d2,d4).", "connected(d1,d2).",
    "level(d4,food,30).", "health(d3,100).", "plan(move(d4)).", "expects(medical_agent,move(d3)).",
]  # fmt: skip
FALSE = [
    "at(food_agent,d3).", "carries(food_agent,food,120).", "connected(d1,d4).", "level(d4,food,50).",
    "plan(move(d1)).", "plan(supply(medicine,10)).", "carries(food_agent,medicine,10).", "health(d2,40).",
]  # fmt: skip


def test_true_beliefs_are_consistent() -> None:
    v = verify(CITY, STATE, "FOOD_AGENT", parse_facts(TRUE))
    assert v.consistent and not v.core


def test_a_wrong_road_is_found_and_explained() -> None:
    v = verify(CITY, STATE, "FOOD_AGENT", parse_facts([*TRUE, "connected(d1,d4)."]))
    assert not v.consistent
    assert v.core == ("connected(d1,d4).",)
    assert "no road between d1 and d4" in v.explanation


def test_a_plan_that_clashes_with_a_belief_needs_both_statements() -> None:
    beliefs = ["at(food_agent,d2).", "carries(food_agent,food,100).", "plan(supply(food,150))."]
    v = verify(CITY, STATE, "FOOD_AGENT", parse_facts(beliefs))
    assert not v.consistent
    assert v.core == ("carries(food_agent,food,100).", "plan(supply(food,150)).")  # each alone is fine
    assert "cannot supply 150 units when you carry 100" in v.explanation


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(TRUE + FALSE), min_size=1, max_size=10, unique=True))
def test_cores_are_minimal(beliefs: list[str]) -> None:
    facts = parse_facts(beliefs)
    checker = Checker(domain_facts(CITY, STATE, "FOOD_AGENT"), facts)
    everything = list(range(len(facts)))
    if checker.consistent(everything):
        return
    core = minimal_core(checker)
    assert core and not checker.consistent(core), "the core must be inconsistent"
    for i in core:
        assert checker.consistent([j for j in core if j != i]), "dropping any statement must restore consistency"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("at(X,d1).", "variable"),
        ("at(food_agent,d1", "syntax error"),
        ("level(d2,food,1..1000000000).", "syntax error"),
        ("p(a).", "not in the vocabulary"),
        ("at(food_agent,d1) :- plan(none).", "rule or directive"),
        ("#const n=10.", "rule or directive"),
        ("{ at(food_agent,d1) }.", "rule or directive"),
        ("at(a,b). " * 100, "statements"),
        ("x" * 7000, "characters"),
    ],
)
def test_malformed_translations_are_reported_never_run(text: str, why: str) -> None:
    with pytest.raises(TranslationError, match=why):
        parse_facts(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("abcdXYZ_(),. :-#{}012345689\n%")), max_size=120))
def test_fuzz_translation_never_crashes(text: str) -> None:
    try:
        facts = parse_facts(text)
    except TranslationError:
        return
    verify(CITY, STATE, "FOOD_AGENT", facts)  # whatever parsed must verify without error


@pytest.mark.parametrize(
    ("program", "why"),
    [
        (["p(f(x))."], "not nested terms"),
        (["q(X) :- p(g(X))."], "not nested terms"),
        (["q(X) :- not p(X)."], "no negation"),
        (["q(X) :- p(X), X > 3."], "no comparisons"),
        (["{p(a)}."], "single atom"),
        (["#show p/1."], "directives"),
        (["p(a"], "syntax error"),
        ([], "empty"),
        ([f"p({i})." for i in range(61)], "at most 60"),
    ],
)
def test_the_authors_translation_format_refuses_what_their_validator_refuses(program: list[str], why: str) -> None:
    with pytest.raises(TranslationError, match=why):
        parse_program(program)


def test_self_consistency_finds_a_minimal_core_and_never_looks_at_the_world() -> None:
    statements = parse_program(
        [
            "at(food_agent,d2).",
            "carries_nothing(food_agent).",
            "plans_supply(food_agent,d2).",
            "ok(x).",
            ":- carries_nothing(A), plans_supply(A,D).",
        ]
    )
    verdict = self_consistent(statements)
    assert not verdict.consistent
    assert set(verdict.core) == {statements[1], statements[2], statements[4]}  # ok(x) and at(...) are not needed
    assert "The constraint :- carries_nothing(A); plans_supply(A,D)." in verdict.explanation
    assert self_consistent(statements[:2] + statements[3:]).consistent  # false beliefs pass if nothing clashes
    unsafe = self_consistent(parse_program(["p(a).", "q(X) :- p(Y)."]))
    assert not unsafe.consistent and "'X' is unsafe" in unsafe.explanation
