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


def responder(request: dict) -> str:  # type: ignore[type-arg]
    system = request["messages"][0]["content"]
    if "Translate statements" in system:
        # one wrong road, so IB runs always find an inconsistency and revise
        return json.dumps({"facts": ["at(food_agent,d1).", "connected(d1,d4)."]})
    reply = {"response": "heading out", "action": "MOVE(d2)"}
    if "beliefs_about_others" in system:
        reply["beliefs_about_others"] = "the others will go to their districts"
    if "internal_beliefs" in system:
        reply["internal_beliefs"] = ["I am in d1", "d1 connects to d4"]
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
    # MOVE(d2) is illegal once an agent is in d2 (no road d2-d2) — corrections and invalid actions are counted
    assert (got.trials["invalid_actions"] > 0).all()
    refs = got.table[got.table["source"] == "formal"].set_index("configuration")["value"]
    assert refs["ASP optimum"] >= refs["heuristic team"]
    events = load_runs(run_ids=[got.run_id])
    ver = payload_frame(events, "verification")
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
        ({"decrease_rule": "cod"}, "decrease_rule must be paper or code"),
        ({"model": "gpt4"}, "Unknown model 'gpt4'"),
    ],
)
def test_notebook_parameters_are_checked_before_any_work(change: dict[str, object], error: str) -> None:
    good: dict[str, object] = {
        "model": "local",
        "llm_mode": "replay",
        "configs": "Base,ToM,IB,ToM+IB",
        "trials": 1,
        "decrease_rule": "paper",
    }
    tom_ib.check_parameters(**good)  # type: ignore[arg-type]
    with pytest.raises(Exception, match=error):
        tom_ib.check_parameters(**{**good, **change})  # type: ignore[arg-type]
