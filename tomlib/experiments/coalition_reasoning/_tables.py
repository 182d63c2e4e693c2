"""Notebooks 13-14: the coalition paper's reasoning teams (§6.5, Appendices E, F; Tables 5, 7, 8, 9).

Every table comes from the same per-question runs (:mod:`tomlib.reasoning`), so notebooks and tables sharing a
method and question replay (or pay for) its calls once:

- ``chateval`` / ``chateval_w_tom``: the ChatEval-style team without / with 2-ToM (Tables 5, 9);
- ``dylan`` / ``dylan_w_tom``: the DyLAN-style network without / with 2-ToM (Tables 5, 8; the paper's "+2-ToM");
- ``ours_matching``: ToM-0/1/2 agents whose coalition (Algorithm 1) answers together (Table 5);
- ``dylan_code`` / ``dylan_code_w_tom``: DyLAN's coder network on HumanEval (Table 7).

Accuracy is the share of questions whose team answer is the key, with a 95% Wilson interval; the Agent Importance
Score of a role is its per-question score averaged over the questions. Two readings of ours put it on the table's
scale: ``importance_scale`` (:data:`tomlib.reasoning._dylan_graph.IMPORTANCE_SCALES`: DyLAN's sum over steps divided by
their number, or normalised to 1 per question) and ``zero_credit``, how a question that earned nobody credit (no final
answer) enters the mean (:data:`ZERO_CREDIT`).

Each table function also writes its units (``results/units/coalition.<table_id>.csv``), one row per method,
question (``qid``), seed and metric: ``correct`` (0/1) per question; Tables 7 and 8 add ``importance`` per role under
every pair of readings (columns ``importance_scale`` and ``zero_credit``: a question without credit has rows only
under ``as-zero``), with
the methods named as the aggregated tables name them (``dylan``, ``dylan_w_2tom``) and Table 8's subject in ``task``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from tomlib.choices import accuracy
from tomlib.coalition import check_selection
from tomlib.datasets import ChoiceQuestion, CodeTask, aqua_rat, humaneval, mmlu
from tomlib.errors import UsageError
from tomlib.experiments._checks import check_counts, check_models
from tomlib.experiments._cost import Estimate, price
from tomlib.experiments._jobs import in_flight, run_jobs
from tomlib.experiments._selection import random_instances, recorded_instances, selection_shares
from tomlib.experiments.coalition_programming import long_units, model_label, pass_at_1, write_long_units
from tomlib.llm import ChatModel, source_of
from tomlib.reasoning import (
    CODE_ROLES,
    IMPORTANCE_SCALES,
    MMLU_ROLES,
    DylanCodeResult,
    run_chateval,
    run_coalition_team,
    run_dylan,
    run_dylan_code,
    scaled,
)
from tomlib.report import attach_paper_values
from tomlib.sandbox import CheckCache, describe_sandbox, require_sandbox, sandbox_mode
from tomlib.trace import RunLog

PAPER_ID = "coalition"
SUBJECTS = ("us_foreign_policy", "human_sexuality", "international_law", "abstract_algebra")
"""§6.5's MMLU subjects (F.2's text names college_chemistry instead of human_sexuality; we follow §6.5 and Table 8)."""
TASK_OF = {"aqua_rat": "logic_problem_solving", "mmlu": "general_reasoning"}
METHODS = ("chateval", "chateval_w_tom", "dylan", "dylan_w_tom", "ours_matching")
CODE_METHODS = ("dylan_code", "dylan_code_w_tom")
CALLS_PER_QUESTION = {"chateval": 4, "chateval_w_tom": 4, "dylan": 17, "dylan_w_tom": 17, "ours_matching": 15}
"""Upper bounds per question (DyLAN stops early on consensus): ChatEval 2 roles x 2 turns; DyLAN 7 + 7 + ranker + 2;
ours 3 rounds x (3 answers + 2 self-evaluations)."""
CALLS_PER_CODE_TASK = 14  # Tester + 4 + 4 + 2 coders + 2 Reflector + Ranker
TOKENS_PER_CALL = (700, 300)
PAPER_TOP_ROLE = {
    "us_foreign_policy": "Economist",
    "human_sexuality": "Lawyer",
    "international_law": "Economist",
    "abstract_algebra": "Mathematician",
}
"""Table 8's "role with highest importance score" per subject (the paper's DyLAN run)."""
ZERO_CREDIT = {
    "as-zero": "a question that earned nobody credit counts as 0 for every role (the default)",
    "drop": "such a question is left out of the mean",
}
"""How a question without a final answer enters a role's mean importance (the paper is silent)."""


def check_reasoning_parameters(
    models: str,
    *,
    llm_mode: str,
    aqua_questions: Any,
    mmlu_questions: Any,
    humaneval_tasks: Any = 0,
    seeds: Any = 1,
    zero_credit: str = "as-zero",
    importance_scale: str = "per-step",
) -> list[str]:
    """Check notebook 13/14's parameters before any work; return the model names."""
    check_counts(
        aqua_questions=aqua_questions, mmlu_questions=mmlu_questions, humaneval_tasks=humaneval_tasks, seeds=seeds
    )
    if zero_credit not in ZERO_CREDIT:
        raise UsageError(
            f"zero_credit={zero_credit!r} is not a reading; use one of: "
            + "; ".join(f"{k} ({v})" for k, v in ZERO_CREDIT.items())
        )
    if importance_scale not in IMPORTANCE_SCALES:
        raise UsageError(
            f"importance_scale={importance_scale!r} is not a reading; use one of: "
            + "; ".join(f"{k} ({v})" for k, v in IMPORTANCE_SCALES.items())
        )
    return check_models(models, llm_mode)


def load_questions(aqua_questions: int, mmlu_questions: int) -> list[ChoiceQuestion]:
    """The first ``aqua_questions`` of AQuA-RAT's test split and the first ``mmlu_questions`` of each subject's
    test split (0: all; the paper: all 254 and all 452)."""
    aqua = list(aqua_rat("test"))
    out = aqua if aqua_questions == 0 else aqua[:aqua_questions]
    for s in SUBJECTS:
        qs = list(mmlu(s, "test"))
        out += qs if mmlu_questions == 0 else qs[:mmlu_questions]
    return out


def estimate(model: str, methods: Sequence[str], n_questions: int, n_code_tasks: int, seeds: int) -> Estimate:
    """Calls, tokens and USD of running from scratch (upper bounds; our token guess per call)."""
    calls = sum(CALLS_PER_QUESTION[m] for m in methods if m in CALLS_PER_QUESTION) * n_questions
    calls += sum(1 for m in methods if m in CODE_METHODS) * CALLS_PER_CODE_TASK * n_code_tasks
    return price(model, calls * seeds, TOKENS_PER_CALL)


@dataclass
class Outcome:
    """One method on one question (or code task) and seed."""

    method: str
    qid: str
    benchmark: str
    subject: str
    seed: int
    answer: str | None
    correct: bool
    importance: dict[str, float] | None  # each role's importance summed over the steps (DyLAN); None for the others


@dataclass
class ReasoningRuns:
    model: str
    outcomes: list[Outcome]
    run_id: str
    results: str | None = None  # where the run was logged: the tables write their units there
    selection: str = ""  # the rule ours_matching used among stable coalitions

    @property
    def source(self) -> str:
        return source_of(self.model)


async def _one(
    chat: ChatModel, method: str, q: ChoiceQuestion, seed: int, log: RunLog, selection: str | None = None
) -> Outcome:
    tom = 2 if method.endswith("_w_tom") else 0
    if method.startswith("chateval"):
        res: Any = await run_chateval(chat, q, tom=tom, seed=seed, log=log)
        imp = None
    elif method.startswith("dylan"):
        res = await run_dylan(chat, q, tom=tom, seed=seed, log=log)
        imp = res.sums()
    elif method == "ours_matching":
        res = await run_coalition_team(chat, q, seed=seed, log=log, selection=selection)
        imp = None
    else:
        raise ValueError(f"unknown method {method!r}; use one of {', '.join(METHODS)}")
    return Outcome(method, q.qid, q.benchmark, q.subject, seed, res.answer, res.correct, imp)


async def _one_code(chat: ChatModel, method: str, task: CodeTask, seed: int, log: RunLog, cache: CheckCache) -> Outcome:
    tom = 2 if method.endswith("_w_tom") else 0
    res: DylanCodeResult = await run_dylan_code(chat, task, tom=tom, seed=seed, log=log, cache=cache)
    answer = res.final.agent if res.final else None
    return Outcome(method, task.task_id, "humaneval", "", seed, answer, res.passed, res.sums())


async def run_reasoning(
    methods: Sequence[str] = METHODS,
    *,
    model: str = "local",
    llm_mode: str = "replay",
    aqua_questions: int = 2,
    mmlu_questions: int = 1,
    humaneval_tasks: int = 2,
    seeds: int = 1,
    experiment: str = "coalition.reasoning",
    results: str | None = None,
    progress: bool = True,
    parallel: int | None = None,
    chat: ChatModel | None = None,
    on_sandbox: Callable[[str], None] | None = print,
    selection: str | None = None,
) -> ReasoningRuns:
    """Every (method, question, seed); code methods run on the first ``humaneval_tasks`` HumanEval tasks (0: all).
    ``selection``: the rule ``ours_matching`` uses among stable coalitions (None: the ICLR draft's default)."""
    rule = check_selection(selection, "iclr")
    bad = [m for m in methods if m not in METHODS + CODE_METHODS]
    if bad:
        raise ValueError(f"unknown method(s) {bad}; use {', '.join(METHODS + CODE_METHODS)}")
    questions = load_questions(aqua_questions, mmlu_questions) if set(methods) & set(METHODS) else []
    tasks: list[CodeTask] = []
    if set(methods) & set(CODE_METHODS):
        tasks = list(humaneval() if humaneval_tasks == 0 else humaneval()[:humaneval_tasks])
    meta: dict[str, Any] = {"model": model, "source": source_of(model), "methods": list(methods), "seeds": seeds}
    if tasks:  # before any call is paid for: code that cannot be isolated is not run
        meta["sandbox"] = {"mode": sandbox_mode(), "isolation": list(require_sandbox())}
    chat = chat or ChatModel.from_name(model, mode=llm_mode)  # type: ignore[arg-type]
    if on_sandbox is not None and tasks:
        on_sandbox(describe_sandbox())
    if llm_mode != "replay":  # before the first live call; refused here when it exceeds the budget
        estimate(model, methods, len(questions), len(tasks), seeds).announce(model)
    log = RunLog(experiment, results=results, meta=meta)
    log.observe(chat)
    cache = CheckCache()
    jobs: list[Any] = [(m, q, s) for m in methods if m in METHODS for q in questions for s in range(seeds)] + [
        (m, t, s) for m in methods if m in CODE_METHODS for t in tasks for s in range(seeds)
    ]

    async def one(method: str, item: Any, seed: int) -> Outcome:
        if method in CODE_METHODS:
            return await _one_code(chat, method, item, seed, log, cache)
        return await _one(chat, method, item, seed, log, selection)

    try:
        outcomes = await run_jobs(
            jobs,
            one,
            parallel=in_flight(parallel, chat.concurrency),
            desc=f"{experiment} (llm:{model})",
            unit="run",
            progress=progress,
        )
    finally:
        log.close()
    return ReasoningRuns(model, outcomes, log.run_id, results, rule)


# -- tables -------------------------------------------------------------------------------------------------------


def outcome_frame(runs: ReasoningRuns) -> pd.DataFrame:
    """One row per (method, question, seed)."""
    return pd.DataFrame(
        [
            {
                "model": model_label(runs.model),
                "method": o.method,
                "task": TASK_OF.get(o.benchmark, o.benchmark),
                "subject": o.subject,
                "qid": o.qid,
                "seed": o.seed,
                "answer": o.answer,
                "correct": o.correct,
                "selection": runs.selection if o.method == "ours_matching" else "",
                "source": runs.source,
            }
            for o in runs.outcomes
        ]
    )


UNIT_COLUMNS = ["qid", "seed"]


def _correct_units(f: pd.DataFrame, table_id: str) -> pd.DataFrame:
    cols = ["model", "task", "subject", "method", "selection", *UNIT_COLUMNS]
    return long_units(f, table_id, cols, {"correct": "correct"})


def _accuracy_rows(frame: pd.DataFrame, keys: list[str]) -> list[dict[str, Any]]:
    rows = []
    for group, part in frame.groupby(keys, sort=True):
        acc = accuracy(int(part["correct"].sum()), len(part))
        note = f"{acc.correct}/{acc.total} correct; 95% Wilson CI {100 * acc.low:.1f}-{100 * acc.high:.1f}%"
        base = dict(zip(keys, group if isinstance(group, tuple) else (group,), strict=True))
        rows.append({**base, "metric": "accuracy_pct", "value": round(100 * acc.value, 2), "note": note})
        rows.append({**base, "metric": "accuracy_pct_ci_low", "value": round(100 * acc.low, 2), "note": note})
        rows.append({**base, "metric": "accuracy_pct_ci_high", "value": round(100 * acc.high, 2), "note": note})
    return rows


def _finish(rows: list[dict[str, Any]], table_id: str, source: str) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    df.insert(0, "draft", "iclr")
    df.insert(0, "table_id", table_id)
    df.insert(0, "paper_id", PAPER_ID)
    df["source"] = source
    return attach_paper_values(df.assign(paper_value=np.nan))


def table5(runs: ReasoningRuns) -> pd.DataFrame:
    """Table 5: accuracy (%) of ChatEval w. ToM, DyLAN w. ToM and ours (+matching), per task."""
    f = outcome_frame(runs)
    f = f[f["method"].isin(["chateval_w_tom", "dylan_w_tom", "ours_matching"])]
    write_long_units([_correct_units(f, "table5")], runs.results)
    return _finish(_accuracy_rows(f, ["task", "model", "method"]), "table5", runs.source)


def table9(runs: ReasoningRuns) -> pd.DataFrame:
    """Table 9: ChatEval accuracy (%) without and with ToM per task, and the point change."""
    f = outcome_frame(runs)
    f = f[f["method"].isin(["chateval", "chateval_w_tom"])]
    write_long_units([_correct_units(f, "table9")], runs.results)
    rows = _accuracy_rows(f, ["task", "model", "method"])
    acc = {(r["task"], r["model"], r["method"]): r["value"] for r in rows if r["metric"] == "accuracy_pct"}
    for (task, model, method), v in list(acc.items()):
        if method == "chateval_w_tom" and (task, model, "chateval") in acc:
            rows.append(
                {
                    "task": task,
                    "model": model,
                    "method": method,
                    "metric": "accuracy_pct_point_change_vs_chateval",
                    "value": round(v - acc[(task, model, "chateval")], 2),
                }
            )
    return _finish(rows, "table9", runs.source)


def _check_zero_credit(zero_credit: str) -> None:
    if zero_credit not in ZERO_CREDIT:
        raise ValueError(f"zero_credit must be one of {', '.join(ZERO_CREDIT)}; got {zero_credit!r}")


def importance_frame(
    runs: ReasoningRuns, *, zero_credit: str = "as-zero", importance_scale: str = "per-step"
) -> pd.DataFrame:
    """Mean Agent Importance Score per (method, benchmark, subject, role) over the questions; ``questions`` counts
    those averaged. A question that earned nobody credit (no final answer) counts as 0 for every role, or is left
    out with ``zero_credit="drop"`` (:data:`ZERO_CREDIT`); ``importance_scale`` as :data:`IMPORTANCE_SCALES`."""
    f = question_importance(runs, zero_credit=zero_credit, importance_scale=importance_scale)
    return f.groupby(["method", "benchmark", "subject", "role"], as_index=False).agg(
        score=("score", "mean"), questions=("qid", "nunique")
    )


def question_importance(
    runs: ReasoningRuns, *, zero_credit: str = "as-zero", importance_scale: str = "per-step"
) -> pd.DataFrame:
    """Each role's Agent Importance Score per (method, question, seed), on the ``importance_scale`` and under the
    ``zero_credit`` reading (a question that earned nobody credit: every role 0, or no rows with ``drop``)."""
    _check_zero_credit(zero_credit)
    rows = [
        {
            "method": o.method,
            "benchmark": o.benchmark,
            "subject": o.subject,
            "qid": o.qid,
            "seed": o.seed,
            "role": r,
            "score": v,
        }
        for o in runs.outcomes
        if o.importance is not None and (zero_credit == "as-zero" or sum(o.importance.values()) > 0)
        for r, v in scaled(o.importance, importance_scale).items()
    ]
    return pd.DataFrame(rows, columns=["method", "benchmark", "subject", "qid", "seed", "role", "score"])


PAPER_METHOD = {
    "dylan": "dylan",
    "dylan_w_tom": "dylan_w_2tom",
    "dylan_code": "dylan",
    "dylan_code_w_tom": "dylan_w_2tom",
}
"""Our DyLAN methods as Tables 7 and 8 name them."""


def _write_dylan_units(runs: ReasoningRuns, table_id: str) -> None:
    """Table 7's (``dylan_code*`` on HumanEval) or Table 8's (``dylan*`` on MMLU, the subject in ``task``) units:
    each role's ``importance`` per question under every pair of the importance readings, and ``correct`` (Table 7:
    ``pass``) per question, with the methods named as the table names them."""
    methods, benchmark, correct = (
        (CODE_METHODS, "humaneval", "pass") if table_id == "table7" else (("dylan", "dylan_w_tom"), "mmlu", "correct")
    )
    imp = pd.concat(
        [
            question_importance(runs, zero_credit=credit, importance_scale=scale).assign(
                zero_credit=credit, importance_scale=scale
            )
            for credit in ZERO_CREDIT
            for scale in IMPORTANCE_SCALES
        ],
        ignore_index=True,
    )
    imp = imp[imp["method"].isin(methods) & (imp["benchmark"] == benchmark)]
    out = outcome_frame(runs)
    if len(out):
        out = out[out["method"].isin(methods) & (out["task"] == TASK_OF.get(benchmark, benchmark))]
        out = out.assign(
            benchmark=benchmark, role="", zero_credit="", importance_scale="", score=out["correct"].astype(int)
        )
    both = pd.concat([imp.assign(_metric="importance"), out.assign(_metric=correct)], ignore_index=True)
    if both.empty:
        return
    both = both.assign(
        model=model_label(runs.model),
        method=both["method"].map(PAPER_METHOD),
        task=both["subject"] if table_id == "table8" else benchmark,
        source=runs.source,
    )
    cols = ["model", "benchmark", "task", "method", "role", "zero_credit", "importance_scale", *UNIT_COLUMNS]
    frames = [long_units(both[both["_metric"] == m], table_id, cols, {m: "score"}) for m in ("importance", correct)]
    write_long_units(frames, runs.results)


def importance_readings(runs: Sequence[ReasoningRuns], benchmark: str) -> pd.DataFrame:
    """Each role's importance under every pair of the readings (:data:`IMPORTANCE_SCALES` x :data:`ZERO_CREDIT`),
    and each method's sum over roles: how much they move the cells (per-task with "drop": every sum is 1)."""
    frames = []
    for r in runs:
        for scale in IMPORTANCE_SCALES:
            for credit in ZERO_CREDIT:
                f = importance_frame(r, zero_credit=credit, importance_scale=scale)
                reading = f"{scale}, {credit}"
                f = f[f["benchmark"] == benchmark].assign(model=model_label(r.model), reading=reading)
                frames.append(f)
    if not frames or all(f.empty for f in frames):
        return pd.DataFrame()
    f = pd.concat(frames, ignore_index=True)
    keys = ["model", "method", "subject"]
    wide = f.pivot_table(index=[*keys, "role"], columns="reading", values="score", aggfunc="first")
    sums = f.groupby([*keys, "reading"])["score"].sum().unstack("reading")
    sums.index = pd.MultiIndex.from_tuples([(*k, "(sum over roles)") for k in sums.index], names=[*keys, "role"])
    return pd.concat([wide, sums]).sort_index().round(4)


def _pct_change(new: float, old: float) -> float:
    return round(100 * (new - old) / old, 2) if old else float("nan")


def table8(runs: ReasoningRuns, *, zero_credit: str = "as-zero", importance_scale: str = "per-step") -> pd.DataFrame:
    """Table 8 (MMLU, DyLAN): every role's mean importance without / with 2-ToM and its relative change, and the task
    accuracy, per subject. Rows of the paper's top role carry the paper's values; our top role is named in the note.
    ``zero_credit``: how questions without a final answer enter the means (:data:`ZERO_CREDIT`); ``importance_scale``
    as :data:`IMPORTANCE_SCALES`."""
    imp = importance_frame(runs, zero_credit=zero_credit, importance_scale=importance_scale)
    imp = imp[(imp["benchmark"] == "mmlu") & imp["method"].isin(["dylan", "dylan_w_tom"])]
    acc = outcome_frame(runs)
    acc = acc[(acc["task"] == "general_reasoning") & acc["method"].isin(["dylan", "dylan_w_tom"])]
    paper_method = {"dylan": "dylan", "dylan_w_tom": "dylan_w_2tom"}
    rows: list[dict[str, Any]] = []
    for subject in SUBJECTS:
        part = imp[imp["subject"] == subject]
        base_scores = part[part["method"] == "dylan"].set_index("role")["score"]
        top = str(base_scores.idxmax()) if len(base_scores) and base_scores.max() > 0 else ""
        tom_scores = part[part["method"] == "dylan_w_tom"].set_index("role")["score"]
        for role in MMLU_ROLES:
            note = "highest importance in this run (without ToM)" if role == top else ""
            common = {"benchmark": "mmlu", "task": subject, "role": role}
            for method, scores in (("dylan", base_scores), ("dylan_w_tom", tom_scores)):
                if role in scores.index:
                    value, why = round(float(scores[role]), 4), note
                elif role == PAPER_TOP_ROLE[subject] and not acc[acc["subject"] == subject].empty:
                    value, why = float("nan"), "no question of this subject ended with an answer: no importance"
                else:
                    continue
                rows.append(
                    {
                        **common,
                        "method": paper_method[method],
                        "metric": "importance_score",
                        "value": value,
                        "note": why,
                    }
                )
            if role in base_scores.index and role in tom_scores.index:
                rows.append(
                    {
                        **common,
                        "method": "dylan_w_2tom",
                        "metric": "importance_score_pct_change",
                        "value": _pct_change(float(tom_scores[role]), float(base_scores[role])),
                        "note": note,
                    }
                )
        accs = {}
        for method in ("dylan", "dylan_w_tom"):
            a = acc[(acc["subject"] == subject) & (acc["method"] == method)]
            if len(a):
                accs[method] = float(a["correct"].mean())
                rows.append(
                    {
                        "benchmark": "mmlu",
                        "task": subject,
                        "role": PAPER_TOP_ROLE[subject],
                        "method": paper_method[method],
                        "metric": "accuracy",
                        "value": round(accs[method], 4),
                        "note": f"task accuracy over {len(a)} question(s) (the paper prints it beside its top role)",
                    }
                )
        if len(accs) == 2:
            rows.append(
                {
                    "benchmark": "mmlu",
                    "task": subject,
                    "role": PAPER_TOP_ROLE[subject],
                    "method": "dylan_w_2tom",
                    "metric": "accuracy_pct_change",
                    "value": _pct_change(accs["dylan_w_tom"], accs["dylan"]),
                    "note": "relative change of the task accuracy (nan when the base accuracy is 0)",
                }
            )
    out = _finish(rows, "table8", runs.source)
    _write_dylan_units(runs, "table8")
    if not out.empty:
        out["value"] = out["value"].astype(float)
        out.loc[out["value"].isna(), "note"] = out.loc[out["value"].isna(), "note"].replace("", "no base value")
    return _name_reading(out, zero_credit, importance_scale)


def _name_reading(table: pd.DataFrame, zero_credit: str, importance_scale: str) -> pd.DataFrame:
    """Importance rows say which readings made them."""
    if table.empty:
        return table
    rows = table["metric"].str.startswith("importance_score")
    said = f"importance_scale={importance_scale}; zero_credit={zero_credit}"
    table.loc[rows, "note"] = [f"{n}; {said}" if n else said for n in table.loc[rows, "note"].fillna("")]
    return table


def table7(runs: ReasoningRuns, *, zero_credit: str = "as-zero", importance_scale: str = "per-step") -> pd.DataFrame:
    """Table 7 (HumanEval, DyLAN coders): each coder's mean importance without / with 2-ToM and its relative change;
    Pass@1 of the network's final code beside it (not in the paper's table). ``importance_scale``: DyLAN's sum over
    steps (a task the coders agreed on at step 1 gives its roles 2/3 in all) or per task (:data:`IMPORTANCE_SCALES`);
    ``zero_credit``: how tasks without a final code enter the means (:data:`ZERO_CREDIT`)."""
    imp = importance_frame(runs, zero_credit=zero_credit, importance_scale=importance_scale)
    imp = imp[imp["method"].isin(CODE_METHODS)]
    paper_method = {"dylan_code": "dylan", "dylan_code_w_tom": "dylan_w_2tom"}
    rows: list[dict[str, Any]] = []
    scores = {m: imp[imp["method"] == m].set_index("role")["score"] for m in CODE_METHODS}
    for role in CODE_ROLES:
        for m in CODE_METHODS:
            if role in scores[m].index:
                rows.append(
                    {
                        "benchmark": "humaneval",
                        "role": role,
                        "method": paper_method[m],
                        "metric": "importance_score",
                        "value": round(float(scores[m][role]), 4),
                    }
                )
        if all(role in scores[m].index for m in CODE_METHODS):
            rows.append(
                {
                    "benchmark": "humaneval",
                    "role": role,
                    "method": "dylan_w_2tom",
                    "metric": "importance_score_pct_change",
                    "value": _pct_change(float(scores["dylan_code_w_tom"][role]), float(scores["dylan_code"][role])),
                }
            )
    f = outcome_frame(runs)
    for m in CODE_METHODS:
        part = f[f["method"] == m]
        if len(part):
            rows.append(
                {
                    "benchmark": "humaneval",
                    "role": "(network)",
                    "method": paper_method[m],
                    "metric": "pass_at_1",
                    "value": round(pass_at_1(list(part["correct"])), 4),
                    "note": f"final code on the hidden tests, {len(part)} task(s)",
                }
            )
    out = _finish(rows, "table7", runs.source)
    _write_dylan_units(runs, "table7")
    if not out.empty and "note" in out.columns:
        out["note"] = out["note"].fillna("")
        out.loc[out["value"].isna(), "note"] = "no base value"
    return _name_reading(out, zero_credit, importance_scale)


# -- views --------------------------------------------------------------------------------------------------------


def team_by_rule(runs: Sequence[ReasoningRuns], *, results: str | None = None, draws: int = 1000) -> pd.DataFrame:
    """Ours (+matching), round 1: the share (%) of questions in which each rule makes each coalition the team, on
    the scores the runs recorded (no new calls) and on uniform random scores. Under ``fewest-outside`` the team is
    mostly all three agents, so the team answer is mostly a plain majority vote."""
    names = ["ToM0", "ToM1", "ToM2"]
    kw = {"no_beliefs": ["ToM0"], "min_size": 2}
    frames = {}
    for r in runs:
        ours = lambda c: c.startswith("ours_matching:")  # noqa: E731
        recorded = recorded_instances([r.run_id], names, results=results, condition=ours, **kw)
        if recorded:
            frames[f"{model_label(r.model)}: recorded round 1"] = selection_shares(recorded, "iclr")
    frames[f"uniform random scores ({draws} draws)"] = selection_shares(
        random_instances(names, draws=draws, **kw),
        "iclr",  # type: ignore[arg-type]
    )
    return pd.concat(frames, axis=1)


def wide_accuracy(table: pd.DataFrame) -> pd.DataFrame:
    """Accuracy (%) per method and model by task: ours with its 95% interval, and the paper's."""
    t = table[table["metric"] == "accuracy_pct"].copy()
    lo = table[table["metric"] == "accuracy_pct_ci_low"].set_index(["task", "model", "method"])["value"]
    hi = table[table["metric"] == "accuracy_pct_ci_high"].set_index(["task", "model", "method"])["value"]
    t = t.set_index(["task", "model", "method"])
    t["ours"] = [f"{v:.1f} [{lo[i]:.0f}-{hi[i]:.0f}]" for i, v in t["value"].items()]
    t["paper"] = t["paper_value"].map(lambda v: "" if pd.isna(v) else f"{v:.2f}")
    return t[["ours", "paper"]].unstack("task")


def importance_wide(table: pd.DataFrame) -> pd.DataFrame:
    """Importance per role (rows) without / with 2-ToM, ours and the paper's, and the relative change (%); a cell we
    did not run says "not run", one the paper does not print "not printed"."""
    t = table[table["metric"].isin(["importance_score", "importance_score_pct_change"])].copy()
    keys = [c for c in ("task", "role") if c in t.columns]
    t["column"] = t["method"] + np.where(t["metric"] == "importance_score", "", " % change")
    ours = t.pivot_table(index=keys, columns="column", values="value", aggfunc="first", dropna=False)
    paper = t.pivot_table(index=keys, columns="column", values="paper_value", aggfunc="first", dropna=False)

    def said(frame: pd.DataFrame, missing: str) -> pd.DataFrame:  # words, not NaN, for an empty cell
        return frame.round(3).astype(object).where(frame.notna(), missing)

    return pd.concat({"ours": said(ours, "not run"), "paper": said(paper, "not printed")}, axis=1)


def plot_importance(table: pd.DataFrame, benchmark: str) -> Any:
    """Bars of each role's importance without and with 2-ToM: ours (solid) beside the paper's (hatched)."""
    import matplotlib.pyplot as plt

    t = table[(table["metric"] == "importance_score") & (table["benchmark"] == benchmark)]
    groups = sorted(t["task"].unique()) if "task" in t.columns else [None]
    fig, axes = plt.subplots(1, len(groups), figsize=(4.2 * len(groups), 3.4), squeeze=False, sharey=True)
    for ax, g in zip(axes[0], groups, strict=True):
        part = t if g is None else t[t["task"] == g]
        roles = list(dict.fromkeys(part["role"]))
        x = np.arange(len(roles))
        for j, (method, color) in enumerate((("dylan", "#4c72b0"), ("dylan_w_2tom", "#c44e52"))):
            m = part[part["method"] == method].set_index("role").reindex(roles)
            ax.bar(x + (j - 1) * 0.4 + 0.2 - 0.1, m["value"], 0.2, color=color, label=f"{method} (ours)")
            ax.bar(
                x + (j - 1) * 0.4 + 0.2 + 0.1,
                m["paper_value"],
                0.2,
                color=color,
                alpha=0.45,
                hatch="//",
                label=f"{method} (paper)",
            )
        ax.set_xticks(x, roles, rotation=45, ha="right", fontsize=8)
        ax.set_title(g or benchmark, fontsize=9)
    axes[0][0].set_ylabel("Agent Importance Score")
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    return fig


def extraction_counts(runs: Sequence[ReasoningRuns], results: str | None = None) -> pd.DataFrame:
    """How the letter was read from every agent reply (``tomlib.choices``), per model and method: a reply naming
    several letters is ``ambiguous`` and one naming none is ``no answer found``; neither is guessed."""
    from tomlib.trace import load_runs

    ev = load_runs(results, run_ids=[r.run_id for r in runs], kinds=["action", "run_start"])
    model = {r.run_id: model_label(r.model) for r in runs}
    rows = [
        {
            "model": model[run],
            "method": str(cond).split(":")[0].replace("_tom2", "_w_tom"),
            "how": str(p["how"]).split(":")[0] or "(none)",
        }
        for run, cond, p in ev[["run_id", "condition", "payload"]].itertuples(index=False)
        if isinstance(p, dict) and "how" in p
    ]
    f = pd.DataFrame(rows, columns=["model", "method", "how"])
    return f.groupby(["model", "method", "how"]).size().unstack("how", fill_value=0)
