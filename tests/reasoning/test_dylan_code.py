"""The DyLAN-style coder network against the fake server: Tester asserts run in the sandbox, the Reflector's lines
reach the coders, the ranker keeps two, the final code is the best on the Tester's tests, hidden tests give Pass@1."""

from __future__ import annotations

import asyncio
import re

import pytest

from tomlib.datasets import CodeTask
from tomlib.reasoning import CODE_ROLES, counting_tests, parse_asserts, run_dylan_code
from tomlib.sandbox import CheckCache, run_tests

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
    return (GOOD if right else BAD) + ratings


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
    assert set(imp) == set(CODE_ROLES) and sum(imp.values()) == pytest.approx(1.0)


def test_asserts_are_parsed_not_run_and_counted_in_the_sandbox() -> None:
    asserts = parse_asserts("assert f(1) == 1\nassert f(2) == 3\nassert f(\nimport os; assert True\n" * 2)
    assert asserts == ["assert f(1) == 1", "assert f(2) == 3"]
    res = run_tests("def f(x):\n    return x\n", counting_tests(asserts))
    assert res.passed and "TOMLIB_TESTS_PASSED 1/2" in res.stdout
    crashed = run_tests("def f(x):\n    raise SystemExit(3)\n", counting_tests(asserts))
    assert not crashed.passed  # SystemExit is not an Exception: the count is never printed
