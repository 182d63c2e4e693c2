"""Agents named by import path: what loads, the one line for each way a spec fails, and where specs are taken."""

from __future__ import annotations

import asyncio
import pickle
import sys
from pathlib import Path

import pytest

from tomlib.agents import (
    Agent,
    AgentSpecError,
    Decision,
    FormalToMAgent,
    agent_factory,
    display_name,
    is_agent_spec,
    load_agent,
    play_episode,
    split_specs,
)
from tomlib.envs import IllegalAction, load_game
from tomlib.experiments import adaptive_tom as at

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

FORMAL = "tomlib.agents:FormalToMAgent"


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder on sys.path for modules written by a test (removed again, with the modules it imported)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        if name.startswith("m57_"):
            del sys.modules[name]


def one_line(spec: str) -> str:
    with pytest.raises(AgentSpecError) as caught:
        load_agent(spec)
    text = str(caught.value)
    assert "\n" not in text and spec in text, text
    return text


def test_a_class_with_literal_keywords_loads_fresh_each_time() -> None:
    a = load_agent(f"{FORMAL}(order=2, tie_break='shared', tie_epsilon=0.25)")
    assert isinstance(a, FormalToMAgent) and (a.order, a.tie_break, a.tie_epsilon) == (2, "shared", 0.25)
    make = agent_factory(f"{FORMAL}(order=1)")
    first, second = make(), make()
    assert first is not second and first.order == second.order == 1


def test_a_factory_function_and_the_display_name(user_module: Path) -> None:
    (user_module / "m57_made.py").write_text(
        "from tomlib.agents import Agent, Decision, FormalToMAgent\n"
        "class Plain(Agent):\n"
        "    async def act(self, state):\n"
        "        return Decision(self.game.legal_actions(state, self.player)[0])\n"
        "class Named(Plain):\n"
        "    name = 'Copycat'\n"
        "def tom(order=0):\n"
        "    return FormalToMAgent(order)\n"
    )
    assert load_agent("m57_made:tom(order=2)").name == "ToM-2"
    assert display_name(load_agent("m57_made:Plain")) == "Plain" == load_agent("m57_made:Plain").name
    assert display_name(load_agent("m57_made:Named")) == "Copycat"


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("no colon here", "write it as package.module:Class"),
        (f"{FORMAL}(2)", "positional arguments"),
        (f"{FORMAL}(order=__import__('os').getpid())", "is not a literal"),
        (f"{FORMAL}(**{{'order': 1}})", "**-unpacking"),
        (f"{FORMAL}(order=1 tie_break=2)", "not keyword=literal pairs"),
        (
            "m57_nowhere.agents:X",
            "no module named 'm57_nowhere.agents' (is it installed, or is its folder on PYTHONPATH?",
        ),
        ("tomlib.agents:Nope", "has no attribute 'Nope'; its Agent subclasses: AdaptiveToMAgent, FormalToMAgent"),
        ("tomlib.agents:Decision", "not a tomlib.agents.Agent subclass"),
        ("tomlib.agents:SEATS", "names a tuple; it needs a tomlib.agents.Agent subclass"),
        ("tomlib.agents:Agent", "is abstract: define act"),
        (f"{FORMAL}(orde=1)", "does not take these keywords: FormalToMAgent.__init__() got an unexpected keyword"),
        (f"{FORMAL}(order=1, tie_break='coin')", "building the agent failed: ValueError: tie_break must be one of"),
        ("tomlib.envs:load_game(spec='matrix')", "returned a RepeatedMatrixGame, not a tomlib.agents.Agent"),
    ],
)
def test_each_way_a_spec_fails_is_one_line_naming_it(spec: str, says: str) -> None:
    assert says in one_line(spec)


def test_a_literal_is_read_and_never_run(user_module: Path) -> None:
    marker = user_module / "ran"
    one_line(f"{FORMAL}(order=open({str(marker)!r}, 'w'))")
    assert not marker.exists()


def test_an_error_inside_the_users_module_is_shown_not_taken_for_a_missing_module(user_module: Path) -> None:
    (user_module / "m57_broken.py").write_text("import m57_not_installed_anywhere\n")
    (user_module / "m57_raises.py").write_text("raise RuntimeError('no key in the environment\\nsecond line')\n")
    text = one_line("m57_broken:Agent")
    assert "importing 'm57_broken' failed: ModuleNotFoundError: No module named 'm57_not_installed_anywhere'" in text
    text = one_line("m57_raises:Agent")
    assert text.endswith("importing 'm57_raises' failed: RuntimeError: no key in the environment")
    with pytest.raises(AgentSpecError) as caught:
        load_agent("m57_raises:Agent")
    assert isinstance(caught.value.__cause__, RuntimeError)  # the original, for a traceback that wants it


def test_what_counts_as_a_spec_and_how_lists_of_them_split() -> None:
    assert is_agent_spec("my_agents:Copy") and is_agent_spec("a.b.c:D(x=1)")
    assert not any(map(is_agent_spec, ["ToM-1", "A-ToM (FTL)", "Greedy", "http://x", ":X", 3]))
    text = "ToM-0, a.b:C(x=1, y=[1, 2]),A-ToM (FTL), d:E(s='a,b')"
    assert split_specs(text) == ["ToM-0", "a.b:C(x=1, y=[1, 2])", "A-ToM (FTL)", "d:E(s='a,b')"]


def test_the_setup_builds_a_spec_and_a_worker_can_rebuild_it_from_its_settings() -> None:
    spec = f"{FORMAL}(order=1, tie_break='shared')"
    setup = at.Setup()
    agent = setup.agent(spec)
    assert isinstance(agent, FormalToMAgent) and agent.order == 1 and agent.tie_break == "shared"
    make, arguments = pickle.loads(pickle.dumps(setup._formal(spec)))  # what a worker process gets
    assert make(**arguments).tie_break == "shared"
    assert setup.settings(spec) == ("load_agent", ("spec", spec)) != setup.settings(f"{FORMAL}(order=2)")


def test_parameters_take_specs_and_a_typo_fails_before_any_work() -> None:
    base = {"model": "", "llm_mode": "replay", "episodes": 1, "llm_episodes": 1, "seed": 42}
    at.check_parameters(**base, llm_agents=f"ToM-0,{FORMAL}(order=2, tie_break='shared'),Greedy")
    with pytest.raises(AgentSpecError, match=r"^parameter llm_agents: agent spec 'tomlib\.agents:Nope': module"):
        at.check_parameters(**base, llm_agents="ToM-0,tomlib.agents:Nope")
    with pytest.raises(ValueError, match=r"unknown \['ToM-7'\].*or give an import path"):
        at.check_parameters(**base, llm_agents="ToM-7")


def test_the_runner_checks_a_spec_given_with_dash_p() -> None:
    from tomlib.errors import UsageError
    from tomlib.runner._params import check_values

    declared = {"llm_agents": {"inferred_type_name": "str", "default": '"ToM-0,Greedy"'}}
    check_values("03_adaptive_tom_table3", declared, {"llm_agents": f"ToM-0,{FORMAL}(order=1, tie_epsilon=0.5)"}, "-p")
    with pytest.raises(UsageError, match=r"'llm_agents': agent spec 'tomlib\.agents:Nope'"):
        check_values("03_adaptive_tom_table3", declared, {"llm_agents": "tomlib.agents:Nope"}, "-p")
    table1 = {"episodes": {"inferred_type_name": "int", "default": "30"}}
    with pytest.raises(UsageError, match=r"'agents' is not a parameter of 01_adaptive_tom_table1 \(.*15_your_agent"):
        check_values("01_adaptive_tom_table1", table1, {"agents": [f"{FORMAL}(order=1)"]}, "-p")  # where it goes


class _Says(Agent):
    name = "Talker"

    def __init__(self, answer: object) -> None:
        self.answer = answer

    async def act(self, state: object) -> Decision:
        return self.answer if self.t == 2 else Decision(self.game.legal_actions(state, self.player)[0])  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (Decision("fly"), "act returned 'fly', which is not legal there; legal: A, B"),
        ("A", "act returned str 'A', not a tomlib.agents.Decision(action, detail)"),
        (Decision(0), "act returned Decision(action=0), an action of type int"),  # type: ignore[arg-type]
    ],
)
def test_play_episode_names_the_agent_seat_step_task_and_legal_actions_of_a_bad_decision(
    answer: object, says: str
) -> None:
    game = load_game("matrix(memory=1)")
    with pytest.raises(IllegalAction) as caught:
        asyncio.run(play_episode(game, [FormalToMAgent(1), _Says(answer)], seed=0, episode=0))
    text = str(caught.value)
    where = (
        "agent 'Talker' (tests.agents.test_load:_Says) in seat player2, step 2 of matrix(actions=2,memory=1,rounds=15)"
    )
    assert text == f"{where}: {says}" or (text.startswith(where) and says in text), text
    assert "\n" not in text


def test_a_worker_process_plays_a_spec_as_the_caller_does() -> None:
    """What a worker is sent for a formal condition (:mod:`tomlib.experiments.adaptive_tom._offload`) names the agent
    by its spec, and playing it there gives the caller's episodes."""
    from tomlib.experiments.adaptive_tom._offload import ConditionJob, play_job

    spec = "examples.copy_partner:CopyPartner(fallback='B')"
    job = ConditionJob(("matrix(memory=1)", ""), ("ToM-1", spec), at.Setup(), range(3), 42, "c", "adhoc")
    there, _ = play_job(pickle.loads(pickle.dumps(job)))
    game = at.Setup().game("memory_1")
    here = [
        asyncio.run(
            play_episode(game, [at.Setup().agent("ToM-1"), load_agent(spec)], seed=42, episode=e, condition="c")
        )
        for e in range(3)
    ]
    assert [r.actions for r in there] == [r.actions for r in here]
    assert any(a[1] == "B" for r in here for a in r.actions) and any(a[1] == "A" for r in here for a in r.actions)
