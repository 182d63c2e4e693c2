"""The reasoning tables under the readings the paper leaves open (``coalition-matching-iclr-draft.txt`` §6.5,
Appendix F): the importance readings (Appendix F.1), the rule that picks ours' team among stable coalitions (§5.1), and
how a letter is read from a reply; all from the recorded runs, no new calls."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from tomlib.experiments._selection import random_instances, recorded_instances, selection_shares
from tomlib.experiments.coalition_programming import model_label
from tomlib.experiments.coalition_reasoning._metrics import importance_frame
from tomlib.experiments.coalition_reasoning._presets import ZERO_CREDIT
from tomlib.experiments.coalition_reasoning._run import ReasoningRuns
from tomlib.reasoning import IMPORTANCE_SCALES


def importance_readings(runs: Sequence[ReasoningRuns], benchmark: str) -> pd.DataFrame:
    """Each role's importance under every pair of the readings (:data:`IMPORTANCE_SCALES` x :data:`ZERO_CREDIT`),
    and each method's sum over roles: how much they move the cells (per-task with "drop": every sum is 1).

    Args:
        runs: each model's outcomes (:func:`run_reasoning`); the DyLAN methods carry importance (Appendix F.1).
        benchmark: ``mmlu`` (Table 8) or ``humaneval`` (Table 7).
    """
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


def team_by_rule(runs: Sequence[ReasoningRuns], *, results: str | None = None, draws: int = 1000) -> pd.DataFrame:
    """Ours (+matching), round 1: the share (%) of questions in which each rule makes each coalition the team, on
    the scores the runs recorded (no new calls) and on uniform random scores. Under ``fewest-outside`` the team is
    mostly all three agents, so the team answer is mostly a plain majority vote.

    Args:
        runs: each model's outcomes (:func:`run_reasoning`) with ``ours_matching`` (§6.5).
        results: the results folder the runs were logged to (None: the project's ``results/``).
        draws: uniform random score draws for the reference column.
    """
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


def extraction_counts(runs: Sequence[ReasoningRuns], results: str | None = None) -> pd.DataFrame:
    """How the letter was read from every agent reply (``tomlib.choices``), per model and method: a reply naming
    several letters is ``ambiguous`` and one naming none is ``no answer found``; neither is guessed.

    Args:
        runs: each model's outcomes (:func:`run_reasoning`) on AQuA-RAT and MMLU (§6.5).
        results: the results folder the runs were logged to (None: the project's ``results/``).
    """
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
