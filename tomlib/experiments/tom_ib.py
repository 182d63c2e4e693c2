"""The tom_ib paper's experiment (``tom-internal-beliefs-asp.txt`` §4): configurations × models × trials in the
city simulation, the heuristic team and the exact optimum beside them, Fig. 5 as bootstrapped medians with
95% confidence intervals, and the counters of invalid actions, invalid translations and inconsistencies."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any, get_args

import numpy as np
import pandas as pd

from tomlib.agents.bdi import (
    CONFIGS,
    MAX_TRIES,
    OBSERVATIONS,
    TRANSLATION_ATTEMPTS,
    VERIFICATIONS,
    BDIAgent,
    Counters,
    Observation,
    TeamMemory,
    Verification,
)
from tomlib.agents.city import HeuristicTeam, run_heuristic
from tomlib.asp import Verdict, optimal_plan
from tomlib.envs.city import AGENTS, City, CityParams
from tomlib.experiments._checks import check_models, check_names, check_whole
from tomlib.experiments._cost import Estimate, price
from tomlib.experiments._units import write_units_with_truth
from tomlib.llm import ChatModel, source_of
from tomlib.recording import record
from tomlib.trace import RunLog, logging_to

PAPER_ID = "tom_ib"
COUNTERS = tuple(f.name for f in fields(Counters))  # invalid_actions, invalid_translations, inconsistencies, ...
READINGS = ("dynamics", "verification", "observation", "temperature")  # the run's readings, a column each


def bootstrap_median(values: Sequence[float], *, resamples: int = 10_000, seed: int = 0) -> tuple[float, float, float]:
    """Median and the 95% percentile-bootstrap interval of the median (Fig. 5's error bars)."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        raise ValueError("no values to bootstrap")
    rng = np.random.default_rng(seed)
    medians = np.median(rng.choice(data, size=(resamples, data.size), replace=True), axis=1)
    return float(np.median(data)), float(np.percentile(medians, 2.5)), float(np.percentile(medians, 97.5))


@dataclass
class Trial:
    """One simulation run of an LLM team."""

    model: str
    configuration: str
    trial: int
    final_health: float
    counters: Counters


async def run_trial(
    city: City,
    chat: ChatModel,
    config: str,
    trial: int,
    *,
    experiment: str = f"{PAPER_ID}.fig5",
    temperature: float = 0.7,
    verification: Verification = "authors",
    observation: Observation = "partial",
) -> Trial:
    """Play one simulation (§4.1: up to 7 turns per agent) with the three BDI agents of §3.2 under ``config``; the
    city's states, every agent's reasoning and the score are recorded to the run log in force.

    Args:
        city: the city simulation (§3.1) with its rules.
        chat: the model every agent asks.
        config: one of the four configurations of §4.1 (Base, ToM, IB, ToM+IB).
        trial: the trial's number, its episode in the run log.
        experiment: the experiment named in the agents' sample keys (Fig. 5's run by default).
        temperature: the agents' sampling temperature (the paper prints none; 0.7 is ours).
        verification: how the internal beliefs are checked (§3.3): the authors' self-consistency, or ours.
        observation: what an agent sees of the city: ``partial`` (its district and messages) or ``full``.
    """
    agents = {
        a: BDIAgent(a, chat, config, temperature=temperature, verification=verification, observation=observation)
        for a in AGENTS
    }
    memory, counters = TeamMemory(), Counters()
    site = {"experiment": experiment, "condition": config, "trial": trial}
    state = city.reset()
    at: dict[str, Any] = {"condition": config, "episode": trial}
    edges = [list(e) for e in (*city.params.edges, *city.params.extra_edges)]
    first = {"levels": state.levels, "health": state.health, "positions": state.position, "edges": edges}
    record("env_state", {**first, "agents": list(AGENTS)}, step=0, **at)
    while not city.is_over(state):
        agent = city.current_agent(state)
        step = state.round * len(AGENTS) + state.turn

        def emit(kind: str, payload: dict[str, Any], _agent: str = agent, _step: int = step) -> None:
            record(kind, payload, step=_step, agent=_agent, **at)

        action = await agents[agent].turn(city, state, memory, counters, site, emit)
        state = city.apply(state, agent, action)
        seen = {"levels": state.levels, "health": state.health, "positions": state.position, "carry": state.carry}
        record("env_state", seen, step=step + 1, **at)
    final = city.final_health(state)
    record("score", {"final_health": final, "health": state.health, **asdict(counters)}, **at)
    return Trial(chat.name, config, trial, final, counters)


@dataclass
class Fig5:
    """Fig. 5 and the counters in the results-contract form, per-trial rows (model, configuration, the readings,
    trial, final health, counters), references, the run id."""

    table: pd.DataFrame
    counters: pd.DataFrame
    trials: pd.DataFrame
    references: pd.DataFrame
    run_id: str | None


def trial_units(trials: pd.DataFrame) -> pd.DataFrame:
    """The per-trial rows as units (``tomlib.claims.write_units``): one row per trial and metric (``final_health``
    and every counter), the trial being the unit the paper sampled. Conditions: model, configuration, its ``tom``
    and ``ib`` halves (so a claim can compare IB with no IB within the same ToM setting), and the readings. The
    heuristic team and the optimum are one deterministic run each, not sampled units, so they are left out."""
    if trials.empty:
        return pd.DataFrame()
    conditions = ["model", "configuration", "tom", "ib", *READINGS]
    frame = trials.assign(
        tom=trials["configuration"].map(lambda c: CONFIGS[c][0]),
        ib=trials["configuration"].map(lambda c: CONFIGS[c][1]),
        _row=range(len(trials)),
    )
    long = frame.melt(
        id_vars=["_row", *conditions, "trial"],
        value_vars=["final_health", *COUNTERS],
        var_name="metric",
        value_name="value",
    )
    long = long.sort_values("_row", kind="stable", ignore_index=True).drop(columns="_row")  # a trial's rows together
    long.insert(0, "table_id", "fig5")
    long.insert(0, "paper_id", PAPER_ID)
    long["source"] = long["model"].map(source_of)
    return long


def references(params: CityParams | None = None) -> pd.DataFrame:
    """The heuristic team and the exact optimum (no LLM), Fig. 5's reference lines: final mean health and how long
    the solver took.

    Args:
        params: the city's rules (§3.1; :class:`CityParams`), the authors' by default.
    """
    city = City(params)
    heuristic = run_heuristic(city, HeuristicTeam())
    plan = optimal_plan(city.params)
    return pd.DataFrame(
        [
            {
                "configuration": "heuristic team",
                "final_health": heuristic.mean_health,
                "seconds": None,
                "proven_optimal": None,
            },
            {
                "configuration": "ASP optimum",
                "final_health": plan.mean_health,
                "seconds": round(plan.solve_seconds, 3),
                "proven_optimal": plan.proven_optimal,
            },
        ]
    )


def check_parameters(
    *, model: Any, llm_mode: str, configs: Any, trials: Any, dynamics: Any, verification: Any, observation: Any
) -> None:
    """Notebook 06's parameters, before any work; a wrong one fails here, in one line naming it.

    Args:
        model: comma-separated configured model names, or "" for the references only.
        llm_mode: replay, record or live.
        configs: the configurations of §4.1 (Base, ToM, IB, ToM+IB).
        trials: simulations per model and configuration, a whole number of at least 1.
        dynamics: the city's rule set (§3.1; :class:`CityParams`).
        verification: how internal beliefs are checked (§3.3).
        observation: what an agent sees of the city.
    """
    check_whole("trials", trials, 1)
    if not isinstance(model, str):
        raise TypeError(f'parameter model must be comma-separated names from configs/models.yaml or ""; got {model!r}')
    if model.strip():
        check_models(model, llm_mode)
    check_names("configs", configs, list(CONFIGS))
    for name, value, known in (
        ("dynamics", dynamics, get_args(CityParams.model_fields["dynamics"].annotation)),
        ("verification", verification, VERIFICATIONS),
        ("observation", observation, OBSERVATIONS),
    ):
        if value not in known:
            raise ValueError(f"parameter {name} must be {' or '.join(known)}; got {value!r}")


TOKENS_PER_CALL = (2500, 450)  # our guess: the prompt carries every response and note so far (about 1,000-4,000)


def calls(
    configs: Sequence[str],
    trials: int,
    params: CityParams | None = None,
    *,
    tries: int = MAX_TRIES,
    translations: int = TRANSLATION_ATTEMPTS,
) -> int:
    """Model calls of ``trials`` simulations per configuration when every turn takes ``tries`` tries and, with IB,
    every try ``translations`` translation attempts."""
    turns = (params or CityParams()).rounds * len(AGENTS)
    return trials * turns * tries * sum(1 + (translations if CONFIGS[c][1] else 0) for c in configs)


def estimate(model: str, configs: Sequence[str], trials: int, params: CityParams | None = None) -> Estimate:
    """Calls, tokens and USD of ``trials`` simulations per configuration from scratch: an upper bound, every turn
    using all its tries and, with IB, every translation attempt."""
    return price(model, calls(configs, trials, params), TOKENS_PER_CALL)


def announce(
    models: Sequence[str], configs: Sequence[str], trials: int, llm_mode: str, params: CityParams | None = None
) -> None:
    """Print each model's estimate before live work (replayed calls cost nothing, so replay prints none)."""
    if llm_mode != "replay":
        fewest = calls(configs, trials, params, tries=1, translations=1)  # every turn right at its first try
        for name in models:
            estimate(name, configs, trials, params).announce(
                name, f"an upper bound: every turn using all {MAX_TRIES} tries; {fewest:,} if every try succeeds"
            )


async def fig5(
    *,
    models: Sequence[str] = ("local",),
    configs: Sequence[str] = tuple(CONFIGS),
    trials: int = 2,
    llm_mode: str = "replay",
    temperature: float = 0.7,
    params: CityParams | None = None,
    verification: Verification = "authors",
    observation: Observation = "partial",
    results: str | None = None,
    progress: bool = True,
    chats: dict[str, ChatModel] | None = None,
) -> Fig5:
    """Fig. 5 (§4.1-4.2): bootstrapped medians of the final health, with 95% intervals, of ``trials`` simulations per
    (model, configuration), beside the heuristic and optimum rows under the same rules (``params``). The per-trial
    outcomes go to ``results/units/tom_ib.fig5.csv`` (:func:`trial_units`), replacing earlier rows of the models run.

    Args:
        models: configured model names (§4.1 tested five); empty: the heuristic and optimum rows only.
        configs: the configurations of §4.1 to run (Base, ToM, IB, ToM+IB), all by default.
        trials: simulations per model and configuration (§4.1: "multiple trials"; 2 keeps a first run short).
        llm_mode: replay the committed transcripts, record, or call the model live.
        temperature: the agents' sampling temperature (the paper prints none; 0.7 is ours).
        params: the city's rules (§3.1; :class:`CityParams`), the authors' by default.
        verification: how the internal beliefs are checked (§3.3): the authors' self-consistency, or ours.
        observation: what an agent sees of the city: ``partial`` (its district and messages) or ``full``.
        results: the results folder (default ``results/``).
        progress: show a progress bar.
        chats: ready models by name, used instead of building ``models`` from the configuration (tests).
    """
    from tqdm.auto import tqdm

    _check_configs(configs)
    city = City(params)
    ref = references(city.params)
    rows = _reference_rows(ref)
    trial_rows: list[Trial] = []
    run_id = None
    if models:
        announce([m for m in models if m not in (chats or {})], configs, trials, llm_mode, city.params)
        meta = _run_meta(models, trials, city.params, verification, observation)
        log = RunLog(f"{PAPER_ID}.fig5", results=results, meta=meta)
        run_id = log.run_id
        bar = tqdm(total=len(models) * len(configs) * trials, desc="tom_ib.fig5", disable=not progress)
        try:
            for name in models:
                chat = (chats or {}).get(name) or ChatModel.from_name(name, mode=llm_mode)  # type: ignore[arg-type]
                log.observe(chat)
                for config in configs:

                    async def one(t: int, config: str = config, chat: ChatModel = chat) -> Trial:
                        got = await run_trial(
                            city,
                            chat,
                            config,
                            t,
                            temperature=temperature,
                            verification=verification,
                            observation=observation,
                        )
                        bar.update(1)
                        return got

                    with logging_to(log):
                        trial_rows += await asyncio.gather(*(one(t) for t in range(trials)))
        finally:
            bar.close()
            log.close()
    per_trial = _per_trial(trial_rows, city.params, verification, observation, temperature)
    if not per_trial.empty:
        write_units_with_truth(trial_units(per_trial), results)
    medians, counter_rows = _medians_and_counters(per_trial)
    table, counters = _contract(rows + medians, "fig5"), _contract(counter_rows, "counters")
    return Fig5(table=table, counters=counters, trials=per_trial, references=ref, run_id=run_id)


def _check_configs(configs: Sequence[str]) -> None:
    """Only §4.1's configurations (:data:`CONFIGS`)."""
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        raise ValueError(f"unknown configuration(s) {unknown}; use {list(CONFIGS)}")


def _reference_rows(ref: pd.DataFrame) -> list[dict[str, Any]]:
    """The heuristic team's and the exact optimum's final health (:func:`references`) as Fig. 5's rows."""
    return [
        {
            "model": "none",
            "configuration": r.configuration,
            "metric": "final_health",
            "value": r.final_health,
            "source": "formal",
        }
        for r in ref.itertuples()
    ]


def _run_meta(
    models: Sequence[str], trials: int, params: CityParams, verification: str, observation: str
) -> dict[str, Any]:
    """The run log's description of a Fig. 5 run, with ``reading``: the rules that differ from ours
    (``data/readings/tom_ib.csv``), else ``default``."""
    meta: dict[str, Any] = {
        "models": list(models),
        "trials": trials,
        "dynamics": params.dynamics,
        "verification": verification,
        "observation": observation,
    }
    ours = {"dynamics": "authors", "verification": "authors", "observation": "partial"}  # data/readings/tom_ib.csv
    meta["reading"] = ", ".join(f"{k}={meta[k]}" for k, v in ours.items() if meta[k] != v) or "default"
    return meta


def _per_trial(
    trials: Sequence[Trial], params: CityParams, verification: str, observation: str, temperature: float
) -> pd.DataFrame:
    """One row per trial: model, configuration, the run's readings (:data:`READINGS`), trial, final health and the
    counters."""
    readings = {
        "dynamics": params.dynamics,
        "verification": verification,
        "observation": observation,
        "temperature": temperature,
    }
    return pd.DataFrame(
        [
            {
                "model": t.model,
                "configuration": t.configuration,
                **readings,
                "trial": t.trial,
                "final_health": t.final_health,
                **asdict(t.counters),
            }
            for t in trials
        ]
    )


def _medians_and_counters(per_trial: pd.DataFrame) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per model and configuration, Fig. 5's bars (§4.2: the bootstrapped median final health, its 95% interval and
    the number of trials), and each counter's mean per trial (invalid actions, translations, inconsistencies, ...)."""
    rows: list[dict[str, Any]] = []
    counter_rows: list[dict[str, Any]] = []
    if per_trial.empty:
        return rows, counter_rows
    for (model, config), part in per_trial.groupby(["model", "configuration"], sort=False):
        median, lo, hi = bootstrap_median(part["final_health"].tolist())
        base = {"model": model, "configuration": config, "source": source_of(model)}
        rows += [
            {**base, "metric": m, "value": v}
            for m, v in (("median_final_health", median), ("ci_low", lo), ("ci_high", hi), ("trials", len(part)))
        ]
        for counter in COUNTERS:
            counter_rows.append({**base, "metric": f"{counter}_per_trial", "value": float(part[counter].mean())})
    return rows, counter_rows


def _contract(rows: list[dict[str, Any]], table_id: str) -> pd.DataFrame:
    """``rows`` in the results-contract form: ``paper_id``, ``table_id`` first, ``paper_value`` NaN (the paper prints
    no numbers); no rows, an empty frame."""
    frame = pd.DataFrame(rows)
    if not frame.empty:
        frame.insert(0, "table_id", table_id)
        frame.insert(0, "paper_id", PAPER_ID)
        frame["paper_value"] = float("nan")
    return frame


def plot_fig5(table: pd.DataFrame) -> Any:
    """Fig. 5 (§4.2): bars of the median final health per model and configuration with 95% CI whiskers; the
    heuristic team and the exact optimum as horizontal lines.

    Args:
        table: :attr:`Fig5.table` of a :func:`fig5` run.
    """
    import matplotlib.pyplot as plt

    llm = table[table["source"].str.startswith("llm:")].pivot_table(
        index=["model", "configuration"], columns="metric", values="value", sort=False
    )
    fig, ax = plt.subplots(figsize=(max(5, 1.3 * len(llm) + 2), 4))
    if not llm.empty:
        labels = [f"{m}\n{c}" for m, c in llm.index]
        x = np.arange(len(llm))
        med = llm["median_final_health"].to_numpy()
        err = np.vstack([med - llm["ci_low"].to_numpy(), llm["ci_high"].to_numpy() - med])
        ax.bar(x, med, yerr=err, capsize=4, color="#4c72b0")
        ax.set_xticks(x, labels)
    refs = table[table["source"] == "formal"]
    for r, style in zip(refs.itertuples(), ("--", ":"), strict=False):
        ax.axhline(r.value, ls=style, color="grey", label=f"{r.configuration}: {r.value:.1f}")
    ax.set_ylim(0, 105)
    ax.set_ylabel("final mean health (median, 95% CI)")
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title("tom_ib Fig. 5 (shape only: the paper prints no numbers)")
    fig.tight_layout()
    return fig


WORKED_BELIEFS = (
    "I am in d2",
    "I carry 100 FOOD",
    "d2 is connected to d4",
    "d1 is connected to d4",
    "I plan to supply 120 FOOD here",
)
WORKED_FACTS = (
    "at(food_agent,d2).",
    "carries(food_agent,food,100).",
    "connected(d2,d4).",
    "connected(d1,d4).",
    "plan(supply(food,120)).",
)


def worked_example(facts: Sequence[str] = WORKED_FACTS) -> list[dict[str, Any]]:
    """A verification walked through on beliefs written by us (not by a model; pass your own ``facts`` to try
    others): the food agent in d2 at the start of round 2. Each step verifies, shows the minimal core and its
    explanation, then drops the core's statements as a revising agent would, until the beliefs are consistent.

    Args:
        facts: ASP facts of the food agent's beliefs (§3.3's translation), :data:`WORKED_FACTS` by default.
    """
    from tomlib.asp import parse_facts, verify
    from tomlib.envs.city import Action

    city = City()
    state = city.apply(city.reset(), "FOOD_AGENT", Action("MOVE", "d2"))
    state = city.apply(state, "MEDICAL_AGENT", Action("NONE"))
    state = city.apply(state, "SECURITY_AGENT", Action("NONE"))
    facts = parse_facts(list(facts))
    steps = []
    for _ in range(len(facts) + 1):
        verdict = verify(city, state, "FOOD_AGENT", facts)
        steps.append({"facts": list(facts), "verdict": verdict})
        if verdict.consistent:
            break
        facts = [f for f in facts if f not in verdict.core]
    return steps


WORKED_PROGRAM = (
    "at(food_agent,d2).",
    "carries_nothing(food_agent).",
    "plans_supply(food_agent,d2).",
    "connected(d2,d4).",
    ":- carries_nothing(A), plans_supply(A,D).",
)


def worked_example_authors(statements: Sequence[str] = WORKED_PROGRAM) -> Verdict:
    """The authors' check on a program written by us (pass your own ``statements``): "I am in d2, I carry nothing,
    I plan to supply here, and whoever carries nothing cannot supply". The plan and the constraint clash; that the
    food agent in fact carries 100 is never looked at.

    Args:
        statements: an ASP program (facts and constraints; §3.3), :data:`WORKED_PROGRAM` by default.
    """
    from tomlib.asp import parse_program, self_consistent

    return self_consistent(parse_program(list(statements)))
