"""What each notebook's LLM run samples and costs: the units tables it writes, the parameters that set how many units
it samples (and the most each can be), and its calls at given parameters from the experiment's own estimator."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tomlib.experiments import Estimate


def _split(value: Any) -> list[str]:
    from tomlib.agents import split_specs  # an agent's import path may hold commas in its parentheses

    return split_specs(str(value))


def _adaptive(table: str) -> Callable[[str, Mapping[str, Any]], Estimate]:
    """adaptive_tom's estimator over the LLM cells notebook 01-05 plays (its ``llm_tasks`` / ``llm_agents``)."""

    def cost(model: str, p: Mapping[str, Any]) -> Estimate:
        from tomlib.experiments import adaptive_tom as at
        from tomlib.experiments.adaptive_tom import estimate, pair_cells, table2_pairs

        tasks = _split(p.get("llm_tasks", ""))
        if table == "table3":
            agents = _split(p.get("llm_agents", ""))
            cells = [((a, b), "overcooked") for a in agents for b in agents if a != b]
            return estimate(model, cells, int(p["llm_episodes"]), at.TASKS)
        if table == "table2":
            cells = [
                ((at.ATOM[g] if a == "A-ToM" else a, at.ATOM[g] if b == "A-ToM" else b), t)
                for t in tasks
                for g, a, b in table2_pairs()
            ]
            return estimate(model, cells, int(p["llm_episodes"]), at.TASKS)
        if table == "fig3":
            cells = [((at.ATOM["Hedge"], q), t) for t in tasks for q in ("ToM-0", "ToM-1")]
            return estimate(model, cells, int(p["llm_episodes"]), at.TASKS)
        catalogue = at.THREE_ACTION_TASKS if table == "table4" else at.TASKS
        cells = [(players, t) for _, players, t in pair_cells(tasks, at.TABLE1_PAIRS)]
        return estimate(model, cells, int(p["llm_episodes"]), catalogue)

    return cost


def _tom_ib(model: str, p: Mapping[str, Any]) -> Estimate:
    from tomlib.experiments import tom_ib

    return tom_ib.estimate(model, _split(p.get("configs", "Base,ToM,IB,ToM+IB")), int(p["trials"]))


def _programming(configs: str) -> Callable[[str, Mapping[str, Any]], Estimate]:
    def cost(model: str, p: Mapping[str, Any]) -> Estimate:
        from tomlib.experiments import coalition_programming as cp

        n = resolve(p, "humaneval_tasks") + resolve(p, "mbpp_tasks")
        return cp.estimate(model, getattr(cp, configs)(), n, int(p.get("seeds", 1)))

    return cost


def _debate(model: str, p: Mapping[str, Any]) -> Estimate:
    from tomlib.experiments import coalition_debate as cd

    parts = cd.estimate(model, str(p.get("judge") or model), int(p["debates"]))
    return sum(parts.values(), Estimate(0, 0, 0, 0.0))


def _reasoning(model: str, p: Mapping[str, Any]) -> Estimate:
    from tomlib.experiments import coalition_reasoning as cr

    n = len(cr.load_questions(int(p["aqua_questions"]), int(p["mmlu_questions"])))
    return cr.estimate(model, cr.METHODS, n, 0, int(p.get("seeds", 1)))


def _table7(model: str, p: Mapping[str, Any]) -> Estimate:
    from tomlib.experiments import coalition_reasoning as cr

    return cr.estimate(model, cr.CODE_METHODS, 0, resolve(p, "humaneval_tasks"), int(p.get("seeds", 1)))


@dataclass(frozen=True)
class Scaled:
    """One notebook's LLM run: the units tables it writes, its size parameters (name -> the most it can be, None
    for no limit), the parameter that names its model, and its calls at given parameters."""

    stem: str
    tables: tuple[str, ...]
    knobs: tuple[str, ...]
    cost: Callable[[str, Mapping[str, Any]], Estimate]
    model_param: str = "model"


CAPS: dict[str, int] = {"humaneval_tasks": 164, "mbpp_tasks": 500, "aqua_questions": 254, "mmlu_questions": 131}
"""The most a size parameter can be, where "0 means all": HumanEval; MBPP's and AQuA-RAT's test splits; the largest
of the four MMLU subjects' test splits (so ``mmlu_questions`` at this value takes every subject whole). Episodes,
trials and debates have no limit."""
PROGRAMMING = ("humaneval_tasks", "mbpp_tasks")

NOTEBOOKS: dict[str, Scaled] = {
    s.stem: s
    for s in (
        Scaled(
            "01_adaptive_tom_table1",
            ("adaptive_tom.table1", "adaptive_tom.table1_orders"),
            ("llm_episodes",),
            _adaptive("table1"),
        ),
        Scaled(
            "02_adaptive_tom_table2",
            ("adaptive_tom.table2", "adaptive_tom.table2_orders"),
            ("llm_episodes",),
            _adaptive("table2"),
        ),
        Scaled(
            "03_adaptive_tom_table3",
            ("adaptive_tom.table3", "adaptive_tom.weights", "adaptive_tom.table3_orders"),
            ("llm_episodes",),
            _adaptive("table3"),
        ),
        Scaled(
            "04_adaptive_tom_table4",
            ("adaptive_tom.table4", "adaptive_tom.table4_orders"),
            ("llm_episodes",),
            _adaptive("table4"),
        ),
        Scaled(
            "05_adaptive_tom_fig3",
            ("adaptive_tom.fig3", "adaptive_tom.fig3_weights"),
            ("llm_episodes",),
            _adaptive("fig3"),
        ),
        Scaled("06_tom_ib_fig5", ("tom_ib.fig5",), ("trials",), _tom_ib),
        Scaled(
            "08_coalition_table1",
            ("coalition.table1",),
            PROGRAMMING,
            _programming("table1_configs"),
            "models",
        ),
        Scaled(
            "09_coalition_table2_fig2",
            ("coalition.table2", "coalition.table6"),
            PROGRAMMING,
            _programming("table2_configs"),
            "models",
        ),
        Scaled(
            "10_coalition_table3",
            ("coalition.table3",),
            PROGRAMMING,
            _programming("table3_configs"),
            "models",
        ),
        Scaled(
            "11_coalition_tables10_12",
            ("coalition.table10", "coalition.table11", "coalition.table12"),
            PROGRAMMING,
            _programming("tables10_12_configs"),
            "models",
        ),
        Scaled("12_coalition_table4_debate", ("coalition.table4",), ("debates",), _debate),
        Scaled(
            "13_coalition_reasoning",
            ("coalition.table5", "coalition.table8", "coalition.table9"),
            ("aqua_questions", "mmlu_questions"),
            _reasoning,
            "models",
        ),
        Scaled("14_coalition_table7", ("coalition.table7",), ("humaneval_tasks",), _table7, "models"),
    )
}

NOTEBOOK_OF: dict[str, str] = {t: s.stem for s in NOTEBOOKS.values() for t in s.tables}
"""Units table (``<paper_id>.<table_id>``) -> the notebook whose LLM run writes it."""


def resolve(params: Mapping[str, Any], knob: str) -> int:
    """A size parameter's value with "0 means all" made explicit."""
    value = int(params[knob])
    return CAPS.get(knob, 0) if value == 0 else value
