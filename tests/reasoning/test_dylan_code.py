"""The DyLAN-style coder network against the fake server: Tester asserts run in the sandbox, the Reflector's lines
reach the coders, the ranker keeps two, the final code is the best on the Tester's tests, hidden tests give Pass@1."""

from __future__ import annotations

import asyncio
import re

import pytest

from tomlib.datasets import CodeTask
from tomlib.reasoning import CODE_ROLES, counting_tests, parse_asserts, run_dylan_code
from tomlib.sandbox import CheckCache, run_tests

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

TASK = CodeTask(
    task_id="T/0",
    benchmark="humaneval",
    prompt='def add(a, b):\n    """Return a + b."""\n',
    reference="",
    tests="def check(f):\n    assert f(2, 3) == 5\n    assert f(-1, 1) == 0\n\ncheck(add)\n",
    entry_point="add",
)
GOOD = "```python\ndef add(a, b):\n    return a + b\n```"
BAD = "```python\ndef add(a, b):\n    return a - b\n```"
WRONG = {  # each coder wrong in its own way: codes that run and differ (BLEU < 90), so the coders never agree
    "PythonAssistant": "```python\ndef add(a, b):\n    return str(a) + str(b)\n```",
    "AlgorithmDeveloper": "```python\ndef add(a, b):\n    total = 1\n    for _ in range(b):\n"
    "        total *= a\n    return total\n```",
    "ComputerScientist": "```python\ndef add(first, second):\n    values = [first, second]\n"
    "    return max(values) * 2\n```",
    "Programmer": BAD,
}


def responder(request: dict) -> str:  # type: ignore[type-arg]
    user = request["messages"][-1]["content"]
    if "You are the Tester" in user:
        return "assert add(1, 1) == 2\nassert add(5, 0) == 5\nnot a test\nassert add(1,\nassert add(2, 2) == 4"
    if "You are the Reflector" in user:
        return "\n".join(f"Solution {i + 1}: check the sign" for i in range(len(re.findall(r"Solution \d+:", user))))
    if "You are the Ranker" in user:
        return "[4, 1]"
    me = re.search(r"You are (\w+),", request["messages"][0]["content"]).group(1)  # type: ignore[union-attr]
    n = len(re.findall(r"Solution \d+:", user))
    ratings = f"\n[[{', '.join(['5'] * n)}]]" if n else ""
    # only the Programmer gets it right, and only from step 1 on (after reading the Reflector)
    right = me == "Programmer" and "Reflector: check the sign" in user
    return (GOOD if right else WRONG[me]) + ratings


def agreeing(request: dict) -> str:  # type: ignore[type-arg]
    """Every coder writes the same wrong code that runs: the coders agree as soon as more than 2/3 have written."""
    user = request["messages"][-1]["content"]
    if "You are the" in user:
        return responder(request)
    n = len(re.findall(r"Solution \d+:", user))
    return BAD + (f"\n[[{', '.join(['5'] * n)}]]" if n else "")


def test_the_network_runs_its_judges_and_credits_the_right_coder(make_model, server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    server.responder = responder
    res = asyncio.run(run_dylan_code(make_model(), TASK, seed=1, cache=CheckCache(tmp_path / "c.sqlite")))
    assert res.tests == ["assert add(1, 1) == 2", "assert add(5, 0) == 5", "assert add(2, 2) == 4"]
    steps = [[n for n in res.nodes if n.step == s] for s in range(3)]
    assert [len(s) for s in steps] == [4, 4, 2]
    # Tester 1 + coders 4 + 4 + 2 + Reflector at steps 0 and 1 + Ranker 1
    assert len(server.requests) == 1 + 10 + 2 + 1
    assert all(n.runs for n in res.nodes)
    by = {(n.step, n.agent): n.tests_passed for n in res.nodes}
    assert by[(0, "Programmer")] == 1  # a - b passes only add(5, 0) == 5
    assert by[(1, "Programmer")] == 3 and res.final is not None and res.final.agent in res.ranked
    assert all(n.feedback == "check the sign" for n in steps[0])
    assert res.passed == (res.final.agent == "Programmer")
    imp = res.importance()
    assert set(imp) == set(CODE_ROLES) and sum(imp.values()) == pytest.approx(1.0)  # every step ran: 3 of 3
    assert res.stopped_at is None


def test_coders_who_agree_on_a_running_code_stop_the_network_as_dylan_does(make_model, server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """DyLAN's early stop: at step 1, once more than 2/3 of the four coders have written the same code that runs, the
    network ends; step 2 never runs, so the roles' importance sums to 2 steps of 3 on DyLAN's scale."""
    server.responder = agreeing
    res = asyncio.run(run_dylan_code(make_model(), TASK, seed=1, cache=CheckCache(tmp_path / "c.sqlite")))
    steps = [[n for n in res.nodes if n.step == s] for s in range(3)]
    assert res.stopped_at == 1 and [len(s) for s in steps] == [4, 3, 0]  # the fourth coder of step 1 never wrote
    assert len(server.requests) == 1 + 4 + 3 + 1  # Tester, step 0, three of step 1, the Reflector after step 0 only
    assert not res.ranked  # no ranker: there is no step 2
    assert sum(res.importance().values()) == pytest.approx(2 / 3)  # DyLAN's sum over steps, divided by 3
    assert sum(res.importance("per-task").values()) == pytest.approx(1.0)
    assert sum(res.sums().values()) == pytest.approx(2.0)


def test_the_consensus_test_is_dylans_bleu_on_running_codes() -> None:
    from tomlib.reasoning._dylan_code import CodeNode, consensus, same_code

    code = "def add(a, b):\n    return a - b\n"
    assert same_code(TASK.prompt + "    return a - b\n", TASK.prompt + "    return a - b\n", TASK)
    assert not same_code(code, "def add(a, b):\n    return str(a) + str(b)\n", TASK)
    nodes = [CodeNode(1, f"c{i}", "", code, [], {}, runs=i != 2) for i in range(3)]
    assert not consensus(nodes, 4, TASK)  # two of four hold it where it runs: not more than 2/3
    nodes.append(CodeNode(1, "c3", "", code, [], {}, runs=True))
    assert consensus(nodes, 4, TASK)


def test_asserts_are_parsed_not_run_and_counted_in_the_sandbox() -> None:
    asserts = parse_asserts("assert f(1) == 1\nassert f(2) == 3\nassert f(\nimport os; assert True\n" * 2)
    assert asserts == ["assert f(1) == 1", "assert f(2) == 3"]
    res = run_tests("def f(x):\n    return x\n", counting_tests(asserts))
    assert res.passed and "TOMLIB_TESTS_PASSED 1/2" in res.stdout
    crashed = run_tests("def f(x):\n    raise SystemExit(3)\n", counting_tests(asserts))
    assert not crashed.passed  # SystemExit is not an Exception: the count is never printed
