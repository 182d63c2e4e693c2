"""The tom_ib experiment against the fake server: sections per configuration, the verification loop, counters."""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from tomlib.experiments import tom_ib
from tomlib.report import validate_results
from tomlib.trace import load_runs, payload_frame

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

RETRY = "Your earlier tries this turn failed"


def responder(request: dict) -> str:  # type: ignore[type-arg]
    """Inconsistent beliefs on a turn's first try, consistent ones after; MOVE(2) in the paper's format."""
    system, user = request["messages"][0]["content"], request["messages"][-1]["content"]
    if system.startswith("Translate an agent's statements"):
        statements = ["at(food_agent,d1).", "plan(move,d2)."]
        if "retry" not in user:
            statements += ["at(food_agent,d2).", ":- at(food_agent,d1), at(food_agent,d2)."]
        return json.dumps({"statements": statements})
    if system.startswith("Translate statements"):  # grounded: one wrong road
        return json.dumps({"facts": ["at(food_agent,d1).", "connected(d1,d4)."]})
    reply = {"response": "heading out", "action": "MOVE(2)"}
    if "beliefs_about_others" in system:
        reply["beliefs_about_others"] = "the others will go to their districts"
    if "internal_beliefs" in system:
        reply["internal_beliefs"] = "I am in d1. I plan to move to d2." + (" (retry)" if RETRY in user else "")
    return json.dumps(reply)


def test_fig5_runs_every_configuration_and_counts(make_model, server, isolated: Path) -> None:  # type: ignore[no-untyped-def]
    server.responder = responder
    chat = make_model(json_mode="json_object")
    got = asyncio.run(tom_ib.fig5(models=["fake"], chats={"fake": chat}, trials=2, progress=False))
    validate_results(got.table)
    validate_results(got.counters)
    assert set(got.trials["configuration"]) == {"Base", "ToM", "IB", "ToM+IB"} and len(got.trials) == 8
    ib = got.trials[got.trials["configuration"] == "IB"]
    base = got.trials[got.trials["configuration"] == "Base"]
    assert (ib["inconsistencies"] > 0).all() and (ib["revisions"] > 0).all()
    assert (base["verifications"] == 0).all() and (base["inconsistencies"] == 0).all()
    # MOVE(2) is illegal once an agent is in d2 (no road d2-d2): invalid actions are counted
    assert (got.trials["invalid_actions"] > 0).all()
    refs = got.table[got.table["source"] == "formal"].set_index("configuration")["value"]
    assert refs["ASP optimum"] >= refs["heuristic team"]
    ver = payload_frame(load_runs(run_ids=[got.run_id]), "verification")
    assert set(ver["mode"]) == {"authors"}
    assert ver["explanation"].str.contains("The constraint :- at\\(food_agent,d1\\); at\\(food_agent,d2\\)").any()


def _trial(make_model, server, isolated: Path, reply, **kw):  # type: ignore[no-untyped-def]
    """One ToM+IB trial against a fake model answering with ``reply(system, user)``; the requests it saw."""
    from tomlib.envs.city import City
    from tomlib.trace import RunLog, logging_to

    seen: list[tuple[str, str]] = []

    def respond(request: dict) -> str:  # type: ignore[type-arg]
        system, user = request["messages"][0]["content"], request["messages"][-1]["content"]
        seen.append((system, user))
        return reply(system, user)

    server.responder = respond
    log = RunLog("tom_ib.test", results=str(isolated / "results"))
    with logging_to(log):
        chat = make_model(json_mode="json_object")
        trial = asyncio.run(tom_ib.run_trial(City(), chat, "ToM+IB", 0, experiment="tom_ib.test", **kw))
    log.close()
    states = payload_frame(load_runs(str(isolated / "results"), run_ids=[log.run_id]), "env_state")
    return trial, seen, states


def _agent(beliefs: str, statements: list[str] | str, action: str = "MOVE(2)"):  # type: ignore[no-untyped-def]
    def reply(system: str, user: str) -> str:
        if system.startswith("Translate"):
            return statements if isinstance(statements, str) else json.dumps({"statements": statements})
        return json.dumps(
            {"beliefs_about_others": "x", "internal_beliefs": beliefs, "response": "on my way", "action": action}
        )

    return reply


def test_no_action_is_executed_until_the_beliefs_are_consistent(make_model, server, isolated: Path) -> None:  # type: ignore[no-untyped-def]
    """The authors' loop: inconsistent beliefs on every try mean three tries, then a lost turn; nobody moves."""
    contradiction = ["at(food_agent,d1).", "at(food_agent,d2).", ":- at(food_agent,d1), at(food_agent,d2)."]
    trial, seen, states = _trial(make_model, server, isolated, _agent("I am in d1 and in d2.", contradiction))
    c = trial.counters
    assert (c.inconsistencies, c.failed_turns, c.invalid_actions) == (63, 21, 0)  # 21 turns x 3 tries
    assert len(seen) == 21 * 3 * 2  # each try: one decision, one translation that parses
    assert all(set(pos.values()) == {"d1"} for pos in states["positions"])
    assert "These beliefs cannot all be true" in seen[2][1]  # the 2nd try is told why


def test_a_failed_translation_blocks_the_action_and_empty_beliefs_count_as_one(
    make_model, server, isolated: Path
) -> None:  # type: ignore[no-untyped-def]
    trial, seen, _ = _trial(make_model, server, isolated, _agent("I am in d1.", '{"statements": ["p(f(x))."]}'))
    assert (trial.counters.invalid_translations, trial.counters.failed_turns) == (63, 21)
    translations = [s for s, _ in seen if s.startswith("Translate")]
    assert len(translations) == 63 * 3  # three translator attempts per try
    trial, seen, _ = _trial(make_model, server, isolated, _agent("  ", ["p(a)."]))
    assert trial.counters.invalid_translations == 63 and not any(s.startswith("Translate") for s, _ in seen)


def test_consistent_beliefs_and_the_papers_move_format_execute(make_model, server, isolated: Path) -> None:  # type: ignore[no-untyped-def]
    trial, seen, states = _trial(make_model, server, isolated, _agent("I am in d1.", ["at(food_agent,d1)."]))
    assert states["positions"].iloc[1]["FOOD_AGENT"] == "d2"  # MOVE(2) moved the food agent to d2
    assert trial.counters.failed_turns > 0  # later MOVE(2) from d2 is illegal three times
    first = seen[0][1]
    assert "What you see here:" in first and "d4: health" not in first  # partial observation by default
    full = _trial(make_model, server, isolated, _agent("I am in d1.", ["a."]), observation="full")[1]
    assert "d4: health" in full[0][1]


def test_grounded_verification_checks_beliefs_against_the_true_state(make_model, server, isolated: Path) -> None:  # type: ignore[no-untyped-def]
    def reply(system: str, user: str) -> str:
        if system.startswith("Translate statements"):
            return json.dumps({"facts": ["at(food_agent,d1).", "connected(d1,d4)."]})
        return json.dumps(
            {"beliefs_about_others": "x", "internal_beliefs": "d1 links d4", "response": "", "action": "NONE"}
        )

    trial, _, _ = _trial(make_model, server, isolated, reply, verification="grounded")
    assert trial.counters.inconsistencies == 63
    ver = payload_frame(load_runs(str(isolated / "results"), kinds=["verification"]), "verification")
    assert ver["explanation"].str.contains("no road between d1 and d4").any()
    assert ver["core"].map(lambda c: c == ["connected(d1,d4)."]).any()


def test_bootstrap_median_interval() -> None:
    median, lo, hi = tom_ib.bootstrap_median([10, 20, 30, 40, 50], resamples=2000)
    assert median == 30 and lo <= median <= hi and lo >= 10 and hi <= 50
    assert tom_ib.bootstrap_median([42.0]) == (42.0, 42.0, 42.0)
    with pytest.raises(ValueError):
        tom_ib.bootstrap_median([])
    assert np.isfinite(tom_ib.bootstrap_median([1, 2], seed=3)[1])


def test_references_need_no_llm(isolated: Path) -> None:
    got = asyncio.run(tom_ib.fig5(models=[], progress=False))
    assert got.run_id is None and set(got.table["configuration"]) == {"heuristic team", "ASP optimum"}


def test_worked_example_walks_to_consistency_and_takes_a_students_beliefs() -> None:
    steps = tom_ib.worked_example()
    assert not steps[0]["verdict"].consistent and steps[-1]["verdict"].consistent
    assert all(len(b["facts"]) < len(a["facts"]) for a, b in itertools.pairwise(steps))
    mine = tom_ib.worked_example(["at(food_agent,d2).", "connected(d1,d4)."])
    assert list(mine[0]["verdict"].core) == ["connected(d1,d4)."] and mine[1]["verdict"].consistent


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"trials": "3"}, "trials must be a whole number"),
        ({"configs": "Base,TOM"}, r"configs: unknown \['TOM'\]; choose from Base, ToM, IB, ToM\+IB"),
        ({"dynamics": "code"}, "dynamics must be authors or paper"),
        ({"verification": "oracle"}, "verification must be authors or grounded"),
        ({"observation": "all"}, "observation must be partial or full"),
        ({"model": "gpt4"}, "Unknown model 'gpt4'"),
    ],
)
def test_notebook_parameters_are_checked_before_any_work(change: dict[str, object], error: str) -> None:
    good: dict[str, object] = {
        "model": "local",
        "llm_mode": "replay",
        "configs": "Base,ToM,IB,ToM+IB",
        "trials": 1,
        "dynamics": "authors",
        "verification": "authors",
        "observation": "partial",
    }
    tom_ib.check_parameters(**good)  # type: ignore[arg-type]
    with pytest.raises(Exception, match=error):
        tom_ib.check_parameters(**{**good, **change})  # type: ignore[arg-type]


def test_the_estimate_is_an_upper_bound_of_every_try_and_translation(capsys: pytest.CaptureFixture[str]) -> None:
    base = tom_ib.estimate("local", ["Base"], 1)
    assert base.calls == 21 * 3 and base.usd == 0.0  # 21 turns, 3 tries, one decision each
    full = tom_ib.estimate("llama-3.1-8b", list(tom_ib.CONFIGS), 10)
    assert full.calls == 10 * 21 * 3 * (1 + 1 + 4 + 4) and full.usd is not None  # IB: + 3 translator attempts a try
    tom_ib.announce(["gpt-4o", "local"], ["IB"], 2, "auto")
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("gpt-4o: 504 model calls (before re-asks)") and "$" in printed[0]
    assert "upper bound" in printed[1]
    tom_ib.announce(["gpt-4o"], ["IB"], 2, "replay")
    assert capsys.readouterr().out == ""
