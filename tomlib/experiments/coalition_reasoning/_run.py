"""Running the coalition paper's reasoning teams (``coalition-matching-iclr-draft.txt`` §6.5, Appendices E, F): every
(method, question, seed) of one model, logged to one run log. Every table comes from the same per-question runs
(:mod:`tomlib.reasoning`), so notebooks and tables sharing a method and question replay (or pay for) its calls
once."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tomlib.coalition import check_selection
from tomlib.datasets import ChoiceQuestion, CodeTask, humaneval
from tomlib.experiments._jobs import in_flight, run_jobs
from tomlib.experiments.coalition_reasoning._cost import estimate
from tomlib.experiments.coalition_reasoning._presets import CODE_METHODS, METHODS, load_questions
from tomlib.llm import ChatModel, source_of
from tomlib.reasoning import DylanCodeResult, run_chateval, run_coalition_team, run_dylan, run_dylan_code
from tomlib.sandbox import CheckCache, describe_sandbox, require_sandbox, sandbox_mode
from tomlib.trace import RunLog, logging_to


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
    """One model's outcomes of every method, question and seed, and the run log that holds their steps."""

    model: str
    outcomes: list[Outcome]
    run_id: str
    results: str | None = None  # where the run was logged: the tables write their units there
    selection: str = ""  # the rule ours_matching used among stable coalitions

    @property
    def source(self) -> str:
        return source_of(self.model)


async def _one(chat: ChatModel, method: str, q: ChoiceQuestion, seed: int, selection: str | None = None) -> Outcome:
    tom = 2 if method.endswith("_w_tom") else 0
    if method.startswith("chateval"):
        res: Any = await run_chateval(chat, q, tom=tom, seed=seed)
        imp = None
    elif method.startswith("dylan"):
        res = await run_dylan(chat, q, tom=tom, seed=seed)
        imp = res.sums()
    elif method == "ours_matching":
        res = await run_coalition_team(chat, q, seed=seed, selection=selection)
        imp = None
    else:
        raise ValueError(f"unknown method {method!r}; use one of {', '.join(METHODS)}")
    return Outcome(method, q.qid, q.benchmark, q.subject, seed, res.answer, res.correct, imp)


async def _one_code(chat: ChatModel, method: str, task: CodeTask, seed: int, cache: CheckCache) -> Outcome:
    tom = 2 if method.endswith("_w_tom") else 0
    res: DylanCodeResult = await run_dylan_code(chat, task, tom=tom, seed=seed, cache=cache)
    answer = res.final.agent if res.final else None
    return Outcome(method, task.task_id, "humaneval", "", seed, answer, res.passed, res.sums())


def _items(
    methods: Sequence[str], aqua_questions: int, mmlu_questions: int, humaneval_tasks: int
) -> tuple[list[ChoiceQuestion], list[CodeTask]]:
    """The questions (when a question method is asked for) and the code tasks (when a code method is)."""
    bad = [m for m in methods if m not in METHODS + CODE_METHODS]
    if bad:
        raise ValueError(f"unknown method(s) {bad}; use {', '.join(METHODS + CODE_METHODS)}")
    questions = load_questions(aqua_questions, mmlu_questions) if set(methods) & set(METHODS) else []
    tasks: list[CodeTask] = []
    if set(methods) & set(CODE_METHODS):
        tasks = list(humaneval() if humaneval_tasks == 0 else humaneval()[:humaneval_tasks])
    return questions, tasks


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

    Args:
        methods: the teams (:data:`METHODS`: §6.5, Appendix F.2; :data:`CODE_METHODS`: Appendix F.1).
        model: a name from ``configs/models.yaml``; ``local`` is the bundled offline model.
        llm_mode: ``replay`` (recorded transcripts only), ``auto`` (live when not recorded) or ``record``.
        aqua_questions: the first N AQuA-RAT test questions, 0 for all 254 (§6.5).
        mmlu_questions: the first N test questions of each of §6.5's MMLU subjects, 0 for all 452.
        humaneval_tasks: the first N HumanEval tasks of the code methods, 0 for all 164 (Appendix F.1).
        seeds: repetitions of every question and task.
        experiment: the run log's name; the method and question, not the notebook, key the calls.
        results: the results folder the run is logged to (None: the project's ``results/``); the tables write
            their units there.
        progress: draw the progress bar.
        parallel: runs at once (None: the model's concurrency, else 8).
        chat: the model to call instead of building one from ``model`` and ``llm_mode`` (tests pass a stub).
        on_sandbox: told how generated code is isolated, before the first call, when a code method runs (None:
            nobody).
        selection: the rule ``ours_matching`` uses among stable coalitions (§5.1; None: the ICLR draft's default).
    """
    rule = check_selection(selection, "iclr")
    questions, tasks = _items(methods, aqua_questions, mmlu_questions, humaneval_tasks)
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
            return await _one_code(chat, method, item, seed, cache)
        return await _one(chat, method, item, seed, selection)

    try:
        with logging_to(log):
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
