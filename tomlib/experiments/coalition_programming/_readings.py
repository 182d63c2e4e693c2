"""The programming tables' FTM under the readings the paper leaves open (``coalition-matching-iclr-draft.txt`` §6.2's
threshold ε, Appendix A's alignment measure), recomputed from the recorded scores and actions: no new calls."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tomlib.experiments.coalition_programming._metrics import trusted_share
from tomlib.experiments.coalition_programming._presets import model_label
from tomlib.experiments.coalition_programming._run import Runs

EPSILONS = tuple(round(0.05 * i, 2) for i in range(1, 11))
"""ε from 0.05 to 0.5 (φ ≤ ε is trust: s ≥ 0.9 down to s ≥ 0); 0.25 is ours."""


def ftm_vs_epsilon(runs: Sequence[Runs], epsilons: Sequence[float] = EPSILONS) -> pd.DataFrame:
    """Mean FTM (%) per condition at every ε, from the scores the runs recorded, with the teams as they were chosen
    (so no new calls; a different ε would also have moved the re-match signals, which this does not replay).

    Args:
        runs: each model's episodes (:func:`run_programming`).
        epsilons: the thresholds ε of §6.2's trusted member (the paper gives none; ours is 0.25).
    """
    rows = []
    for run in runs:
        for ep in run.episodes:
            cfg, names = ep.config, ep.config.names()
            for rr, nxt in zip(ep.rounds, [*ep.rounds[1:], None], strict=True):
                base = {
                    "model": model_label(run.model),
                    "benchmark": ep.task.benchmark,
                    "matching": cfg.setting,
                    "pm_tom": cfg.pm_tom,
                    "eng_tom": cfg.eng_tom,
                }
                for e in epsilons:
                    rows.append(
                        {
                            **base,
                            "epsilon": e,
                            "ftm": 100 * trusted_share(rr.scores, names, e),
                            "ftm_team": 100 * trusted_share(rr.scores, rr.team, e),
                            "ftm_next": 100 * trusted_share(nxt.scores, rr.team, e) if nxt else float("nan"),
                        }
                    )
    f = pd.DataFrame(rows)
    if f.empty:
        return f
    keys = ["model", "benchmark", "matching", "pm_tom", "eng_tom", "epsilon"]
    return f.groupby(keys, as_index=False)[["ftm", "ftm_team", "ftm_next"]].mean().round(2)


def ftm_by_alignment(runs: Sequence[Runs], embedding: str = "tfidf") -> pd.DataFrame:
    """FTM over all engineers (%) per condition and round under two alignment measures of the same beliefs and
    actions: the PM's self-evaluation (Appendix A's prompt, as recorded) and Appendix A's cosine extension (the
    cosine of ``embedding`` vectors of the PM's belief and each engineer's action; no new calls), with the mean score
    of each and their correlation. A self-evaluated run's teams are kept: only the measure changes.

    Args:
        runs: each model's episodes (:func:`run_programming`).
        embedding: the vectors of Appendix A's cosine extension (``tomlib.coalition.cosine_alignment``).
    """
    from tomlib.coalition import cosine_alignment

    rows = []
    for run in runs:
        for ep in run.episodes:
            cfg, names = ep.config, ep.config.names()
            for rr in ep.rounds:
                cos = cosine_alignment([rr.belief] * len(rr.turns), [t.action for t in rr.turns], embedding=embedding)  # type: ignore[arg-type]
                by_cos = {t.name: float(v) for t, v in zip(rr.turns, cos, strict=True)}
                rows.append(
                    {
                        "model": model_label(run.model),
                        "benchmark": ep.task.benchmark,
                        "matching": cfg.setting,
                        "pm_tom": cfg.pm_tom,
                        "round": rr.round,
                        "ftm (self-evaluation)": 100 * trusted_share(rr.scores, names, cfg.epsilon),
                        f"ftm (cosine, {embedding})": 100 * trusted_share(by_cos, names, cfg.epsilon),
                        "mean score (self-evaluation)": float(np.mean([rr.scores[n] for n in names])),
                        f"mean score (cosine, {embedding})": float(np.mean(cos)),
                        "_pairs": [(rr.scores[n], by_cos[n]) for n in names],
                    }
                )
    f = pd.DataFrame(rows)
    if f.empty:
        return f
    keys = ["model", "benchmark", "matching", "pm_tom", "round"]
    out = f.groupby(keys, as_index=False).mean(numeric_only=True).round(2)

    def corr(pairs: pd.Series) -> float:
        xy = np.array([p for group in pairs for p in group], dtype=float)
        ok = len(xy) > 2 and xy[:, 0].std() > 0 and xy[:, 1].std() > 0
        return round(float(np.corrcoef(xy[:, 0], xy[:, 1])[0, 1]), 2) if ok else float("nan")

    out["score correlation"] = f.groupby(keys)["_pairs"].apply(corr).to_numpy()
    return out
