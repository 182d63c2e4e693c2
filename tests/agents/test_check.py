"""The agent conformance check: a sound agent passes every check, each broken one fails exactly its own, and the
command line says so in a table, failure lines and its exit code."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from examples.broken_agent import BlockingAgent, IllegalAgent, SharedStateAgent, UnseededAgent
from tomlib.__main__ import main
from tomlib.agents import CHECKS, Agent, AgentSpecError, Decision, FormalToMAgent, check_agent
from tomlib.errors import UsageError
from tomlib.experiments.adaptive_tom import TASKS

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

ROOT = Path(__file__).resolve().parents[2]
ROOM = 5.0
"""block_limit_s for agents that never block: room for a loaded machine, where a formal act can wait its turn."""


def test_the_worked_example_of_the_docs_is_the_example_file_and_passes_every_check() -> None:
    page = (ROOT / "docs" / "your-agent.md").read_text()
    shown = re.search(r"^```python\n(.*?)^```", page, re.S | re.M)
    assert shown and shown[1] == (ROOT / "examples" / "copy_partner.py").read_text()
    result = check_agent("examples.copy_partner:CopyPartner(fallback='A')", block_limit_s=ROOM)
    assert result.passed and result.agent.endswith("(fallback='A')"), str(result)


def test_the_formal_tom2_agent_passes_every_check_in_every_task() -> None:
    result = check_agent(lambda: FormalToMAgent(2), block_limit_s=ROOM)
    assert result.tasks == tuple(TASKS) and result.passed, str(result)
    assert set(result.verdicts.values()) == {"pass"} and len(result.verdicts) == len(CHECKS) * len(TASKS)
    assert not result.failures and "every check passed" in str(result)


@pytest.mark.parametrize(
    ("make", "fails", "options"),
    [
        (IllegalAgent, "legal_actions", {}),
        (SharedStateAgent, "no_shared_state", {}),
        (UnseededAgent, "determinism", {}),
        (lambda: BlockingAgent(seconds=0.03), "no_blocking", {"block_limit_s": 0.01}),
    ],
    ids=["illegal", "shared-state", "unseeded", "blocking"],
)
def test_each_broken_agent_fails_exactly_its_own_check(make: Any, fails: str, options: dict[str, Any]) -> None:
    options = {"block_limit_s": ROOM, **options}
    result = check_agent(make, tasks="memory_1,game1", seeds=1, **options)
    assert result.failing_checks() == {fails}, str(result)
    assert {(f.check, f.task) for f in result.failures} == {(fails, "memory_1"), (fails, "game1")}
    for failure in result.failures:
        line = failure.line()
        assert "\n" not in line and line.startswith(f"{fails} (task {failure.task}, seat player")
        assert "seed 0" in line and f"step {failure.step}" in line and "Fix: " in line


def test_what_each_failure_line_says() -> None:
    line = check_agent(IllegalAgent, tasks="memory_1", seeds=1, block_limit_s=ROOM).failures[0].line()
    assert "act returned 'fly', which is not legal there; legal: A, B" in line
    line = check_agent(UnseededAgent, tasks="memory_1", seeds=1, block_limit_s=ROOM).failures[0].line()
    assert "two fresh agents chose" in line and "self.rng" in line
    result = check_agent(SharedStateAgent, tasks="memory_1", seeds=1, block_limit_s=ROOM)
    assert "class-level data changed while it played: SharedStateAgent.seen" in result.failures[0].line()
    blocked = check_agent(lambda: BlockingAgent(seconds=0.05), tasks="memory_1", seeds=1, block_limit_s=0.02)
    line = blocked.failures[0].line()
    assert "step 1" in line and "held the event loop for" in line and "asyncio.to_thread" in line


class OffPathAgent(Agent):
    """Plays well on the partners' paths but answers illegally once its history is not what it chose, which only
    a rollout it did not steer shows."""

    immediate = True

    async def act(self, state: Any) -> Decision:
        if self.history and self.history[-1][self.player] != self.chosen:
            return Decision("fly")
        self.chosen = self.game.legal_actions(state, self.player)[0]
        return Decision(self.chosen)


def test_states_off_the_partners_paths_are_probed() -> None:
    result = check_agent(OffPathAgent, tasks="game1", seeds=2, block_limit_s=ROOM)
    assert result.failing_checks() == {"legal_actions"}, str(result)
    assert result.failures[0].partner == "random rollout"


class HangingAgent(Agent):
    async def act(self, state: Any) -> Decision:
        await asyncio.Event().wait()  # never set
        raise AssertionError("unreachable")


class SyncAgent(Agent):
    def act(self, state: Any) -> Decision:  # type: ignore[override]
        return Decision(self.game.legal_actions(state, self.player)[0])


def test_an_act_that_never_answers_fails_and_stops_the_task_and_a_plain_function_is_blocking() -> None:
    result = check_agent(HangingAgent, tasks="memory_1", seeds=1, act_timeout_s=0.05)
    assert result.verdicts[("no_blocking", "memory_1")] == "FAIL"
    assert "did not answer within 0.05 s" in result.failures[0].line()
    assert {result.verdicts[(c, "memory_1")] for c in CHECKS if c != "no_blocking"} == {"skip"}
    assert "skip legal_actions (memory_1): not judged: act did not answer within 0.05 s" in result.lines()
    sync = check_agent(SyncAgent, tasks="memory_1", seeds=1, block_limit_s=ROOM)
    assert sync.failing_checks() == {"no_blocking"} and "not a coroutine" in sync.failures[0].line()


def test_what_check_agent_refuses() -> None:
    with pytest.raises(UsageError, match="unknown task 'kitchen'"):
        check_agent(IllegalAgent, tasks="memory_1,kitchen")
    with pytest.raises(UsageError, match="seeds must be a whole number"):
        check_agent(IllegalAgent, seeds=0)
    with pytest.raises(AgentSpecError, match=r"each check needs fresh agents"):
        check_agent(IllegalAgent())  # type: ignore[arg-type]
    with pytest.raises(AgentSpecError, match="has no attribute 'Nope'"):
        check_agent("examples.broken_agent:Nope")


def test_the_command_prints_a_table_and_failure_lines_and_exits_0_or_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-agent", "tomlib.agents:FormalToMAgent(order=1)", "--tasks", "memory_1", "--seeds", "1"]) == 0
    out = capsys.readouterr().out
    assert "every check passed" in out and "FAIL" not in out
    assert out.splitlines()[1].split() == ["check", "memory_1"]
    assert [line.split() for line in out.splitlines()[2:]] == [[c, "pass"] for c in CHECKS]
    argv = ["check-agent", "examples.broken_agent:IllegalAgent", "--tasks", "memory_1,game1", "--seeds", "1"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[2:7]}
    assert rows["legal_actions"] == ["FAIL", "FAIL"] and rows["determinism"] == ["pass", "pass"]
    assert sum(line.startswith("FAIL legal_actions (task ") for line in out.splitlines()) == 2


def test_the_command_finds_a_module_in_the_folder_it_runs_from_and_a_bad_spec_exits_2(tmp_path: Path) -> None:
    (tmp_path / "my_agents.py").write_text(
        "from tomlib.agents import FormalToMAgent\n\ndef tom1():\n    return FormalToMAgent(1)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "tomlib", "check-agent", *args]
        return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)

    done = run("my_agents:tom1", "--tasks", "memory_1", "--seeds", "1")
    assert done.returncode == 0, done.stderr
    bad = run("my_agents:tom2")
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip() == (
        "tomlib: error: agent spec 'my_agents:tom2': module 'my_agents' has no attribute 'tom2'; its Agent "
        "subclasses: FormalToMAgent"  # imported there, so my_agents:FormalToMAgent(order=1) would load
    )
