"""The reasoning tables' units (``results/units/coalition.<table_id>.csv``; ``coalition-matching-iclr-draft.txt``
§6.5, Appendix F): one row per method, question (``qid``), seed and metric: ``correct`` (0/1) per question; Tables 7
and 8 add ``importance`` per role under every pair of readings (columns ``importance_scale`` and ``zero_credit``: a
question without credit has rows only under ``as-zero``), with the methods named as the aggregated tables name them
(``dylan``, ``dylan_w_2tom``) and Table 8's subject in ``task``.
"""

from __future__ import annotations

import pandas as pd

from tomlib.experiments.coalition_programming import long_units, model_label, write_long_units
from tomlib.experiments.coalition_reasoning._metrics import outcome_frame, question_importance
from tomlib.experiments.coalition_reasoning._presets import CODE_METHODS, PAPER_METHOD, TASK_OF, ZERO_CREDIT
from tomlib.experiments.coalition_reasoning._run import ReasoningRuns
from tomlib.reasoning import IMPORTANCE_SCALES

UNIT_COLUMNS = ["qid", "seed"]


def correct_units(f: pd.DataFrame, table_id: str) -> pd.DataFrame:
    """Table 5's or 9's units (:func:`outcome_frame`'s rows ``f``): ``correct`` (0/1) per method, question and seed."""
    cols = ["model", "task", "subject", "method", "selection", *UNIT_COLUMNS]
    return long_units(f, table_id, cols, {"correct": "correct"})


def write_dylan_units(runs: ReasoningRuns, table_id: str) -> None:
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
