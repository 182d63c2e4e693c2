"""Notebooks 13-14's experiment module against the fake server: every method on real questions, Tables 5, 7, 8, 9
follow the results contract with the paper's values attached, and parameters are checked before any work."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from tomlib.experiments import coalition_reasoning as cr
from tomlib.report import validate_results
from tomlib.sandbox import CheckCache

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

GOOD = (
    "```python\ndef has_close_elements(numbers, threshold):\n    return any(abs(a - b) < threshold for i, a in "
    "enumerate(numbers) for b in numbers[i + 1:])\n```"
)


def responder(request: dict) -> str:  # type: ignore[type-arg]
    system, user = request["messages"][0]["content"], request["messages"][-1]["content"]
    if "evaluating your own beliefs" in system:
        names = re.findall(r'"(ToM\d)": "', user)
        return json.dumps({n: {"score": 0.8, "explanation": "e", "justification": "j"} for n in names})
    if "You are the Tester" in user:
        return "assert has_close_elements([1.0, 2.0], 0.5) is False\nassert has_close_elements([1.0, 1.1], 0.5)"
    if "You are the Reflector" in user:
        return "Solution 1: fine"
    if "Choose the best 2 solutions" in user:
        return "[1, 2]"
    if "```python block" in user:
        n = len(re.findall(r"Solution \d+:", user))
        return GOOD + (f"\n[[{', '.join(['4'] * n)}]]" if n else "")
    # every multiple-choice agent answers A: right on some questions, wrong on others
    n = len(re.findall(r"Solution \d+:", user))
    return "Belief: they will say A.\nAnswer: A" + (f"\n[[{', '.join(['3'] * n)}]]" if n else "")


def test_all_tables_from_one_run(make_model, server, isolated) -> None:  # type: ignore[no-untyped-def]
    server.responder = responder
    chat = make_model(json_mode="json_object")
    runs = asyncio.run(
        cr.run_reasoning(
            cr.METHODS + cr.CODE_METHODS,
            model="fake",
            chat=chat,
            aqua_questions=1,
            mmlu_questions=1,
            humaneval_tasks=1,
            progress=False,
        )
    )
    questions = cr.load_questions(1, 1)
    assert len(questions) == 5 and len(runs.outcomes) == 5 * len(cr.METHODS) + 2
    truth_a = {q.qid for q in questions if q.answer == "A"}
    for o in runs.outcomes:
        if o.benchmark != "humaneval":
            assert o.answer == "A" and o.correct == (o.qid in truth_a)
    t5, t7, t8, t9 = cr.table5(runs), cr.table7(runs), cr.table8(runs), cr.table9(runs)
    for t in (t5, t7, t8, t9):
        validate_results(t)
    acc = t5[t5["metric"] == "accuracy_pct"].set_index(["task", "method"])["value"]
    n_mmlu_a = sum(q.answer == "A" for q in questions if q.benchmark == "mmlu")
    assert acc[("general_reasoning", "ours_matching")] == pytest.approx(100 * n_mmlu_a / 4)
    # every method answered A everywhere: ChatEval's point change is 0
    change = t9[t9["metric"] == "accuracy_pct_point_change_vs_chateval"]["value"]
    assert len(change) == 2 and set(change) == {0.0}
    # Table 8: seven roles per subject; every question stopped on consensus at step 0 (all answer A), so on DyLAN's
    # scale (a role's importance summed over the steps, / 3) a subject's roles sum to 1/3, per task to 1
    imp = t8[t8["metric"] == "importance_score"]
    assert imp.groupby(["task", "method"])["value"].sum().round(3).eq(round(1 / 3, 3)).all()
    per_task = cr.table8(runs, importance_scale="per-task")
    per_task = per_task[per_task["metric"] == "importance_score"]
    assert per_task.groupby(["task", "method"])["value"].sum().round(3).eq(1.0).all()
    econ = t8[(t8["task"] == "us_foreign_policy") & (t8["role"] == "Economist") & (t8["metric"] == "importance_score")]
    assert set(econ["paper_value"]) == {0.20, 0.16}
    # Table 7: four coders, the final code passes the hidden tests, PythonAssistant's paper value attached
    row = t7[(t7["metric"] == "importance_score") & (t7["role"] == "PythonAssistant") & (t7["method"] == "dylan")]
    assert row["paper_value"].iloc[0] == 0.2399
    assert set(t7.loc[t7["metric"] == "pass_at_1", "value"]) == {1.0}


def test_parameters_are_checked_before_work() -> None:
    with pytest.raises(TypeError, match="aqua_questions must be a whole number"):
        cr.check_reasoning_parameters("local", llm_mode="replay", aqua_questions="two", mmlu_questions=1)
    with pytest.raises(ValueError, match="mmlu_questions counts items"):
        cr.check_reasoning_parameters("local", llm_mode="replay", aqua_questions=1, mmlu_questions=-1)
    with pytest.raises(Exception, match="gpt-5-nano"):
        cr.check_reasoning_parameters("gpt-5-nano", llm_mode="replay", aqua_questions=1, mmlu_questions=1)
    with pytest.raises(ValueError, match="unknown method"):
        asyncio.run(cr.run_reasoning(["dylan_tom"], progress=False))


def test_the_estimate_counts_calls_and_prices_them() -> None:
    est = cr.estimate("gpt-4o-mini", cr.METHODS, 706, 0, 1)
    assert est.calls == sum(cr.CALLS_PER_QUESTION.values()) * 706
    assert est.usd is not None and est.usd > 0
    assert cr.estimate("local", cr.CODE_METHODS, 0, 164, 1).calls == 2 * 14 * 164


def test_check_cache_is_used_for_the_code_network(make_model, server, isolated, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tomlib.datasets import humaneval
    from tomlib.reasoning import run_dylan_code

    server.responder = responder
    cache = CheckCache(tmp_path / "checks.sqlite")
    asyncio.run(run_dylan_code(make_model(), humaneval()[0], cache=cache))
    first = cache.hits
    asyncio.run(run_dylan_code(make_model(), humaneval()[0], cache=cache))
    assert cache.hits > first  # the same codes are not run twice


def test_early_stops_make_a_row_sum_below_one_on_dylans_scale_and_zero_credit_only_without_credit() -> None:
    """The paper's Table 7 rows sum to 1.0000 (DyLAN) and 0.9001 (+2-ToM). On DyLAN's own scale (a role's importance
    summed over the steps that ran, divided by 3) a task the coders agreed on at step 1 gives its roles 2/3: three tasks
    in ten stopped early make a row sum to 0.9, and every role drops. Normalised per task, every row sums to 1."""
    roles = cr.CODE_ROLES
    share = dict(zip(roles, (0.4, 0.3, 0.2, 0.1), strict=True))
    full = {r: 3 * v for r, v in share.items()}  # summed over 3 steps, each giving the roles 1
    early = {r: 2 * v for r, v in share.items()}  # stopped at step 1: steps 0 and 1 only
    outcomes = [
        cr.Outcome(m, f"HumanEval/{q}", "humaneval", "", 0, "PythonAssistant", False, imp)
        for m in cr.CODE_METHODS
        for q, imp in enumerate([full] * 7 + [early if m == "dylan_code_w_tom" else full] * 3)
    ]
    runs = cr.ReasoningRuns("fake", outcomes, "run")
    t7 = cr.table7(runs)
    sums = t7[t7["metric"] == "importance_score"].groupby("method")["value"].sum().round(4)
    assert sums.to_dict() == {"dylan": 1.0, "dylan_w_2tom": 0.9}
    change = t7[t7["metric"] == "importance_score_pct_change"].set_index("role")["value"]
    assert (change < 0).all()  # every role drops, as the paper claims
    assert t7["note"].str.contains("importance_scale=per-step; zero_credit=as-zero").any()
    per_task = cr.table7(runs, importance_scale="per-task")
    assert per_task[per_task["metric"] == "importance_score"].groupby("method")["value"].sum().round(4).eq(1.0).all()
    both = cr.importance_readings([runs], "humaneval")
    total = both.xs("(sum over roles)", level="role").loc[("fake", "dylan_code_w_tom", "")].to_dict()
    assert total == {
        "per-step, as-zero": 0.9,
        "per-step, drop": 0.9,  # every task ended with a final code: zero_credit changes nothing
        "per-task, as-zero": 1.0,
        "per-task, drop": 1.0,
    }
    # a task without credit (no final answer, possible in Table 8's network): 0 for every role, or left out
    none = dict.fromkeys(roles, 0.0)
    credit = [
        cr.Outcome("dylan_code", f"H/{q}", "humaneval", "", 0, None, False, full if q else none) for q in range(4)
    ]
    mean = cr.importance_frame(cr.ReasoningRuns("fake", credit, "run"))["score"].sum()
    dropped = cr.importance_frame(cr.ReasoningRuns("fake", credit, "run"), zero_credit="drop")["score"].sum()
    assert round(mean, 4) == 0.75 and round(dropped, 4) == 1.0
    with pytest.raises(ValueError, match="zero_credit must be one of"):
        cr.table7(runs, zero_credit="zero")
    with pytest.raises(ValueError, match="importance_scale must be one of"):
        cr.table7(runs, importance_scale="per-role")
