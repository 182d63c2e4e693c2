"""Notebook 07: the coalition paper's matching mechanism on its own, with no LLM (source ``formal``).

The worked example is the iterative-programming team of §3 and Appendix A: a project manager (PM) with ToM beliefs
about four engineers, who are ToM-0 (no beliefs). Appendix A prints the PM's scores for two engineers
(Engineer1 0.7, Engineer2 0.9); the scores for Engineer3 and Engineer4 are ours, chosen to make the example
instructive, and are labelled so wherever they appear.
"""

from __future__ import annotations

import dataclasses
import functools
import html
import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from tomlib.claims import write_units
from tomlib.coalition import (
    BLOCKING_READINGS,
    DEFAULT_SELECTION,
    TRUST,
    Algorithm1Run,
    AlignmentInstance,
    CoalitionStructure,
    check_appendix_g,
    choose,
    find_blocking,
    ftm,
    make_instance,
    random_instance,
    run_algorithm1,
    solve_coalitions,
    solve_many,
    solve_pairs,
    value,
)
from tomlib.experiments._checks import check_whole
from tomlib.trace import RunLog, logging_to

PAPER_ID = "coalition"
TEAM = ("PM", "Engineer1", "Engineer2", "Engineer3", "Engineer4")
APPENDIX_A = {"Engineer1": 0.7, "Engineer2": 0.9}
"""The PM's alignment scores printed in Appendix A (both drafts)."""
OURS = {"Engineer3": 0.2, "Engineer4": -0.4}
"""Illustrative scores for the two engineers Appendix A does not show (ours, not the paper's)."""


def check_parameters(*, rounds: int, trials: int, selection_draws: int, min_size: int) -> None:
    """Notebook 07's counts before any work (ε and the sizes are checked by :func:`tomlib.coalition.make_instance`,
    with the paper's reading of each).

    Args:
        rounds: rounds of Algorithm 1 on drifting scores, at least 1 (coalition lifetime, §6.2).
        trials: random instances per size for the Appendix G check and the comparisons, at least 1.
        selection_draws: random score draws per team for the rules that choose among stable outcomes, at least 1.
        min_size: the smallest coalition; 0 is ⌈N/2⌉ (the ICLR draft's |μ(i)| ≥ n - 1 setting).
    """
    for name, count in {"rounds": rounds, "trials": trials, "selection_draws": selection_draws}.items():
        check_whole(name, count, 1)
    check_whole("min_size", min_size, 0)


def worked_instance(
    *,
    epsilon: float = 0.25,
    lam: float = 1.0,
    ability: dict[str, float] | None = None,
    min_size: int | None = None,
    ability_sign: str = "intent",
    scores: dict[str, float] | None = None,
) -> AlignmentInstance:
    """The PM and four ToM-0 engineers of §3 and Appendix A (Engineer3 and Engineer4's scores are ours).

    Args:
        epsilon: ε, the misalignment φ = (1 - s)/2 up to which a belief is trusted (φ ≤ ε; 0.25 trusts scores of 0.5
            and above).
        lam: λ, the weight of ability in the preferences (§5.2).
        ability: each engineer's ability α (§5.2); None: no abilities.
        min_size: the smallest coalition; None: ⌈n/2⌉.
        ability_sign: ``intent`` (abler agents preferred, the text's intent) or ``printed`` (§5.2's formula as
            printed).
        scores: the PM's scores of engineers, overriding Appendix A's and ours.
    """
    row = {**APPENDIX_A, **OURS, **(scores or {})}
    return make_instance(
        {"PM": row},
        names=list(TEAM),
        epsilon=epsilon,
        lam=lam,
        ability=ability or {},
        min_size=min_size,
        ability_sign=ability_sign,  # type: ignore[arg-type]
    )


def score_table(inst: AlignmentInstance) -> pd.DataFrame:
    """Raw scores, misalignment φ = (1 - s)/2 and trust (φ ≤ ε) of every belief, with where each score is from.

    Args:
        inst: the instance whose beliefs are listed (:func:`worked_instance` in notebook 07).
    """
    rows = []
    for i in range(inst.n):
        if not inst.has_beliefs[i]:
            continue
        for j in range(inst.n):
            if i == j:
                continue
            name = inst.names[j]
            source = "paper (Appendix A)" if name in APPENDIX_A and inst.names[i] == "PM" else "ours"
            rows.append(
                {
                    "believer": inst.names[i],
                    "about": name,
                    "score s": float(inst.scores[i, j]),
                    "misalignment φ": round(float(inst.phi[i, j]), 3),
                    "trusted (φ ≤ ε)": inst.trusted(i, j),
                    "ability α": inst.ability[j],
                    "score from": source,
                }
            )
    return pd.DataFrame(rows)


def preference_table(inst: AlignmentInstance, agent: str = "PM", top: int = 8) -> pd.DataFrame:
    """Agent's preference over the coalitions it could be in (eq. 2 with §5.2): lowest B' first.

    Args:
        inst: the alignment instance (scores, abilities, λ, the minimum size).
        agent: whose preference (by name).
        top: how many coalitions to show.
    """
    i = inst.index(agent)
    others = [j for j in range(inst.n) if j != i]
    rows = []
    for k in range(inst.min_size - 1, len(others) + 1):
        for mates in itertools.combinations(others, k):
            c = tuple(sorted((i, *mates)))
            v = value(inst, i, c)
            rows.append({"coalition": "{" + ", ".join(inst.names[x] for x in c) + "}", "B'": float(v or 0), "_v": v})
    df = pd.DataFrame(rows).sort_values(["_v", "coalition"]).drop(columns="_v").head(top).reset_index(drop=True)
    df.index += 1
    return df


@dataclass
class MechanismView:
    """Everything the interactive cell shows for one setting of ε, λ, abilities and the minimum size."""

    inst: AlignmentInstance
    structure: CoalitionStructure | None
    team: tuple[int, ...]
    grand_blocking: tuple[int, ...] | None
    pairs: str
    ftm: dict[str, float]
    signal: list[str]
    chosen_how: str = ""  # which of several stable structures is shown, and by which rule

    def html(self) -> str:
        names = self.inst.names

        def group(c: Sequence[int]) -> str:
            return "{" + ", ".join(names[i] for i in c) + "}"

        stable = self.structure.label(names) if self.structure else "none exists (proved by exhaustive search)"
        if self.chosen_how:
            stable += f" ({self.chosen_how})"
        team = group(self.team) if self.team else "—"
        grand = (
            f"blocked by {group(self.grand_blocking)}"
            if self.grand_blocking
            else "stable (nobody can block it: engineers without beliefs are indifferent)"
        )
        ftms = ", ".join(f"{k}: {v:.2f}" for k, v in self.ftm.items())
        signal = ", ".join(self.signal) or "none: every partner of the team is trusted"
        rows = [
            ("Stable coalition structure (ICLR, eq. 2)", stable),
            ("Team selected (Algorithm 1)", team),
            ("Everyone in one team", grand),
            ("Stable pairs (NeurIPS, eq. 3)", self.pairs),
            ("FTM (§6.2)", ftms),
            ("Re-match signal after this round", signal),
        ]
        body = "".join(
            f"<tr><th style='text-align:left'>{html.escape(a)}</th><td>{html.escape(b)}</td></tr>" for a, b in rows
        )
        return f"<table>{body}</table>"


def mechanism_view(inst: AlignmentInstance, seed: int = 0) -> MechanismView:
    """Solve both drafts' mechanisms for ``inst`` and describe the outcome each plays under its draft's default rule
    for choosing among stable outcomes (``selection``: ICLR best-aligned, NeurIPS uniform; ties and the uniform draw
    seeded by ``seed``), as Algorithm 1 and the teams of notebooks 08-14 play it.

    Args:
        inst: the instance both mechanisms solve.
        seed: seeds the ties and the NeurIPS draft's uniform draw among stable pairs.
    """
    rng = random.Random(seed)
    chosen, total = choose(inst, "iclr", DEFAULT_SELECTION["iclr"], rng)
    structure = chosen.structure if chosen is not None else None
    team = chosen.team if chosen is not None else ()
    grand = find_blocking(inst, CoalitionStructure.of([range(inst.n)], inst.n))
    played, n_pairs = choose(inst, "neurips", DEFAULT_SELECTION["neurips"], rng)
    pair_text = (
        f"{played.label(inst.names)} (one of {n_pairs} stable matchings, drawn uniformly: the NeurIPS default)"
        if played is not None
        else "none exists"
    )
    if structure is not None and total > 1:
        structure_text = f"one of {total} stable structures, the best aligned (the ICLR default)"
    else:
        structure_text = ""
    signal = [
        f"{inst.names[i]} → {inst.names[j]} (φ = {inst.phi[i, j]:.2f})"
        for i in team or ()
        for j in team or ()
        if i != j and inst.has_beliefs[i] and not inst.trusted(i, j)
    ]
    return MechanismView(
        inst,
        structure,
        tuple(team or ()),
        grand,
        pair_text,
        {inst.names[i]: ftm(inst, i) for i in range(inst.n) if inst.has_beliefs[i]},
        signal,
        structure_text,
    )


def mechanism_widget(inst: AlignmentInstance) -> Any:
    """Sliders for ε, λ, the minimum size and each engineer's score and ability; the outcome redraws live.

    Args:
        inst: the instance the sliders start from (:func:`worked_instance`).
    """
    import ipywidgets as w

    names = inst.names
    pm = inst.index("PM")
    eps = w.FloatSlider(value=inst.epsilon, min=0, max=1, step=0.05, description="ε")
    lam = w.FloatSlider(value=inst.lam, min=0, max=2, step=0.1, description="λ")
    size = w.IntSlider(value=inst.min_size, min=2, max=inst.n, description="min size")
    sign = w.ToggleButtons(options=["intent", "printed"], value=inst.ability_sign, description="ability sign")
    scores = {
        n: w.FloatSlider(value=float(inst.scores[pm, j]), min=-1, max=1, step=0.1, description=f"s {n}")
        for j, n in enumerate(names)
        if j != pm
    }
    abilities = {
        n: w.FloatSlider(value=inst.ability[j], min=0, max=1, step=0.1, description=f"α {n}")
        for j, n in enumerate(names)
        if j != pm
    }
    out = w.HTML()

    def redraw(_: Any = None) -> None:
        moved = inst.scores.copy()  # the given instance, with what the sliders set: its agents and other settings stay
        for j, n in enumerate(names):
            if n in scores:
                moved[pm, j] = scores[n].value
        current = dataclasses.replace(
            inst,
            scores=moved,
            ability=tuple(abilities[n].value if n in abilities else inst.ability[j] for j, n in enumerate(names)),
            epsilon=eps.value,
            lam=lam.value,
            min_size=size.value,
            ability_sign=sign.value,
        )
        out.value = mechanism_view(current).html()

    for ctrl in [eps, lam, size, sign, *scores.values(), *abilities.values()]:
        ctrl.observe(redraw, names="value")
    redraw()
    controls = w.VBox([eps, lam, size, sign, w.HBox([w.VBox(list(scores.values())), w.VBox(list(abilities.values()))])])
    return w.VBox([controls, out])


def drifting_rounds(rounds: int = 6, seed: int = 0, drift: float = 0.35) -> list[np.ndarray]:
    """The PM's scores over rounds: start from the worked example, then each engineer's score takes a random step
    (clipped to [-1, 1]) every round, as beliefs and actions drift apart or together."""
    rng = np.random.default_rng(seed)
    row = np.array([APPENDIX_A["Engineer1"], APPENDIX_A["Engineer2"], OURS["Engineer3"], OURS["Engineer4"]])
    out = []
    for r in range(rounds):
        if r:
            row = np.clip(row + rng.normal(0, drift, size=row.shape), -1, 1).round(2)
        m = np.full((len(TEAM), len(TEAM)), np.nan)
        m[0, 1:] = row
        out.append(m)
    return out


def algorithm1(
    rounds: int = 6, seed: int = 0, epsilon: float = 0.25, results: str | None = None
) -> tuple[dict[str, Algorithm1Run], str]:
    """Algorithm 1 (ICLR Alg. 1; NeurIPS §5) under both drafts on the same drifting scores; events in one run log.

    Args:
        rounds: rounds of drifting scores (:func:`drifting_rounds`).
        seed: the drift's seed.
        epsilon: the trust threshold ε.
        results: the results folder the run log goes to (default ``results/``).
    """
    scores = drifting_rounds(rounds, seed)
    base = worked_instance(epsilon=epsilon)
    runs = {}
    with (
        RunLog(f"{PAPER_ID}.mechanism", results=results, meta={"rounds": rounds, "seed": seed}) as log,
        logging_to(log),
    ):
        for mech in ("iclr", "neurips"):
            runs[mech] = run_algorithm1(base, scores, mechanism=mech, condition=mech, episode=0)  # type: ignore[arg-type]
        run_id = log.run_id
    return runs, run_id


def lifetime_table(runs: dict[str, Algorithm1Run]) -> pd.DataFrame:
    """Per draft: the rounds Algorithm 1 matched at, its re-matches and its coalitions' lifetimes (§6.2).

    Args:
        runs: Algorithm 1's record per mechanism, as :func:`algorithm1` returns them.
    """
    return pd.DataFrame(
        [
            {
                "mechanism": {"iclr": "ICLR (coalitions, adaptation round)", "neurips": "NeurIPS (pairs)"}[m],
                "matchings at rounds": ", ".join(map(str, r.matching_rounds)),
                "re-matches": r.rematches,
                "lifetimes": ", ".join(map(str, r.lifetimes())),
                "mean coalition lifetime": r.coalition_lifetime,
            }
            for m, r in runs.items()
        ]
    )


CLAIMS = {
    "stable_exists_rate": "Theorem G.2 implies a stable structure always exists (rate 1); the paper prints no rate",
    "dynamics_converged_rate": "Theorem G.1 claims the dynamics always converge (rate 1); the paper prints no rate",
    "dynamics_cycle_rate": "Theorem G.1's potential argument rules out any repeated structure (rate 0)",
    "blocking_at_start_rate": "instances where some coalition may block 'everyone outside': the rest test nothing "
    "(no paper value)",
    "mean_steps_when_blocked": "mean re-matchings of the dynamics on those instances (no paper value)",
}
PAPER_VALUES = {"stable_exists_rate": 1.0, "dynamics_converged_rate": 1.0, "dynamics_cycle_rate": 0.0}
"""What the theorems imply for each rate; the counts of what was tested have none."""


def appendix_g(
    trials: int = 100,
    seed: int = 0,
    results: str | None = None,
    blocking: Sequence[str] = tuple(BLOCKING_READINGS),
    trust: Sequence[float | None] = (TRUST, None),
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Appendix G on random instances: (results-contract table, per-instance frame), under each reading of what may
    block (:data:`tomlib.coalition._appendix_g.BLOCKING_READINGS`; the same instances for each) at the first share
    of trusted pairs in ``trust`` (:data:`tomlib.coalition._appendix_g.TRUST`, the default), and at each other share
    (None: uniform scores) under the first reading of ``blocking`` (G.2's, where it matters). The
    instances are also written as units (``results/units/coalition.appendix_g.csv``): ``converged``,
    ``stable_exists`` and ``no_cycle`` (no structure repeated along the dynamics), 0/1 per instance, with the readings
    in the columns ``blocking`` (G.2's, the default) and ``trust``, whether some coalition could block at the start
    (``blocking_at_start``: the claims are judged on those instances) and the dynamics' ``steps``; agents allowed
    outside every coalition (``everyone_in`` False) and ε = 0.25. The table adds, per reading, the share of instances
    with a blocking coalition at the start and the mean steps of the dynamics.

    Args:
        trials: random instances per reading.
        seed: the instances' seed.
        results: the results folder the units go to (default ``results/``).
        blocking: the readings of what may block to run (the first is the one the other shares use).
        trust: the shares of trusted pairs to draw instances at (None: uniform scores); the first is the default.
    """
    # the first share under every reading of what may block; the others under the first reading only (G.2's: the one
    # where a blocking coalition must be trusted throughout, so the only one the share of trusted pairs moves much)
    runs = [(trust[0], b) for b in blocking] + [(t, blocking[0]) for t in trust[1:]]
    checks = [c for t, b in runs for c in check_appendix_g(trials=trials, seed=seed, blocking=b, trust=t)]
    per = pd.DataFrame([c.row() for c in checks])
    per["no_cycle"] = per["cycle_length"].isna()
    _appendix_g_units(per, seed, results)
    rows = []
    for (shared, reading, n, m), part in per.groupby(["trust", "blocking", "n", "min_size"], sort=False):
        tested = part[part["blocking_at_start"]]
        stats = {
            "stable_exists_rate": part["stable_exists"].mean(),
            "dynamics_converged_rate": part["converged"].mean(),
            "dynamics_cycle_rate": part["cycle_length"].notna().mean(),
            "blocking_at_start_rate": part["blocking_at_start"].mean(),
            "mean_steps_when_blocked": tested["steps"].mean() if len(tested) else float("nan"),
        }
        for metric, v in stats.items():
            rows.append(
                {
                    "paper_id": PAPER_ID,
                    "table_id": "appendix_g",
                    "trust": shared,
                    "blocking": reading,
                    "n": int(n),
                    "min_size": int(m),
                    "metric": metric,
                    "value": round(float(v), 4),
                    "source": "formal",
                    "paper_value": PAPER_VALUES.get(metric),
                    "note": f"{CLAIMS[metric]}; {len(part)} random instances, trusted pairs: {shared}; what may "
                    f"block: {reading}",
                }
            )
    return pd.DataFrame(rows), per


def _appendix_g_units(per: pd.DataFrame, seed: int, results: str | None) -> None:
    if per.empty:
        return
    keys = ["n", "min_size", "trial"]
    about = ["blocking_at_start", "steps"]  # of the instance, not a condition (tomlib.claims UNIT_COLUMNS)
    long = per.melt(
        id_vars=[*keys, "blocking", "trust", *about],
        value_vars=["converged", "stable_exists", "no_cycle"],
        var_name="metric",
    )
    long["value"] = long["value"].astype(bool).astype(int)
    long = long.assign(paper_id=PAPER_ID, table_id="appendix_g", everyone_in=False, epsilon=0.25, seed=seed)
    cols = ["paper_id", "table_id", "blocking", "trust", "everyone_in", "epsilon", *keys, *about, "seed", "metric"]
    write_units(long[[*cols, "value"]].assign(source="formal"), results)


SCENARIOS = {
    "debate (NeurIPS pairs: a ToM-0, a ToM-1 and a ToM-2 debater)": (("ToM0", "ToM1", "ToM2"), ("ToM0",), "neurips", 2),
    "reasoning team (ICLR coalitions of ≥ 2: ToM-0, ToM-1, ToM-2)": (("ToM0", "ToM1", "ToM2"), ("ToM0",), "iclr", 2),
    "programming team (ICLR coalitions of ≥ 3: the PM's beliefs only)": (TEAM, TEAM[1:], "iclr", 3),
}
"""The three teams the LLM experiments match: agents, those without beliefs, the mechanism, the minimum size."""


def selection_views(draws: int = 500, seed: int = 0) -> dict[str, pd.DataFrame]:
    """For each team the LLM experiments match, the share (%) of uniform random score draws in which each rule of
    :data:`tomlib.coalition.SELECTIONS` makes each team cooperate (exact expectations per draw).

    Args:
        draws: uniform random score draws per team.
        seed: the draws' seed.
    """
    from tomlib.experiments._selection import random_instances, selection_shares

    out = {}
    for name, (agents, no_beliefs, mechanism, size) in SCENARIOS.items():
        inst = random_instances(agents, no_beliefs=no_beliefs, draws=draws, seed=seed, min_size=size)
        out[name] = selection_shares(inst, mechanism)  # type: ignore[arg-type]
    return out


def everyone_in_comparison(trials: int = 100, seed: int = 0, sizes: Sequence[int] = (4, 5, 6, 7)) -> pd.DataFrame:
    """How often no stable structure exists, per size n (min_size ⌈n/2⌉, uniform scores for everyone), when agents
    may stay outside a coalition (ours) and when every agent must be in one (the ICLR text read literally).

    Args:
        trials: random instances per size.
        seed: the instances' seed.
        sizes: the numbers of agents n to try.
    """
    rng = np.random.default_rng(seed)
    drawn = {n: [random_instance(rng, n) for _ in range(trials)] for n in sizes}
    jobs = [dataclasses.replace(i, everyone_in=literal) for n in sizes for i in drawn[n] for literal in (False, True)]
    solved = iter(solve_many(functools.partial(solve_coalitions, optimize=False), jobs))
    rows = []
    for n in sizes:
        none = {False: 0, True: 0}
        for _ in range(trials):
            for literal in none:
                none[literal] += not next(solved).stable_exists
        rows.append(
            {
                "n": n,
                "min_size": math.ceil(n / 2),
                "instances": trials,
                "no stable structure, outsiders allowed (ours) %": round(100 * none[False] / trials, 1),
                "no stable structure, everyone in a coalition (literal) %": round(100 * none[True] / trials, 1),
            }
        )
    return pd.DataFrame(rows).set_index("n")


def one_to_many_comparison(
    trials: int = 100, seed: int = 0, sizes: Sequence[int] = (3, 4, 5, 6), quotas: Sequence[int] = (1, 2, 3)
) -> pd.DataFrame:
    """The NeurIPS matching as pairs (quota 1) and as its one-to-many μ (quota q: up to q partners each; §4.2), on
    uniform random scores: how often a stable matching exists, and in the solvers' optimum (fewest unmatched, then
    the lowest total misalignment) how many agents are matched and with how many partners.

    Args:
        trials: random instances per size and quota.
        seed: the instances' seed.
        sizes: the numbers of agents n to try.
        quotas: the partner quotas q to try (1: pairs).
    """
    from tomlib.coalition import partners

    rng = np.random.default_rng(seed)
    drawn = {n: [random_instance(rng, n) for _ in range(trials)] for n in sizes}
    jobs = [dataclasses.replace(inst, quota=q) for n in sizes for q in quotas if q < n for inst in drawn[n]]
    solved = iter(solve_many(solve_pairs, jobs))
    rows = []
    for n in sizes:
        for q in (q for q in quotas if q < n):
            found, matched, degree = 0, [], []
            for _ in drawn[n]:
                sol = next(solved)
                if not sol.stable_exists or sol.pairs is None:
                    continue
                found += 1
                deg = [len(partners(sol.pairs, i)) for i in range(n)]
                matched.append(sum(d > 0 for d in deg))
                degree += [d for d in deg if d]
            rows.append(
                {
                    "n": n,
                    "quota": q,
                    "instances": trials,
                    "a stable matching exists %": round(100 * found / trials, 1),
                    "agents matched (mean)": round(float(np.mean(matched)), 2) if matched else float("nan"),
                    "partners per matched agent (mean)": round(float(np.mean(degree)), 2) if degree else float("nan"),
                }
            )
    return pd.DataFrame(rows).set_index(["n", "quota"])


C1_ROLES: dict[str, tuple[float, float]] = {"UI": (0.9, 0.3), "Backend": (0.5, 0.8), "Full-Stack": (0.6, 0.6)}
"""Appendix C.1's (frontend, backend) ability scores per engineering role (ICLR draft). The Backend engineers'
frontend score is garbled in the extraction (printed as "½"); we read it as 0.5."""
C1_NOT_GIVEN = (
    "what the 78% and the 65% measure (the task's tests or rubric)",
    "how many engineers of each role the team had",
    "how a role's two scores become the one α of §5.2 for a task",
    "the model, the rounds and the number of runs",
    "the Backend engineers' frontend score (garbled in the extraction)",
)
"""What Appendix C.1 does not give, so its 78% vs 65% cannot be reproduced (only the mechanism's side of it)."""


def c1_case_study(
    draws: int = 200, seed: int = 0, frontend_weights: Sequence[float] = (0.0, 0.25, 0.5, 0.75, 1.0), lam: float = 1.0
) -> pd.DataFrame:
    """Appendix C.1's roles under §5.2 (formal): a PM with uniform random alignment scores for a UI, a Backend and a
    Full-Stack engineer, each with α = w·frontend + (1 - w)·backend for a task whose frontend share is w (our
    scalarisation; the text gives none). Per w and ability term (none, λ·α as intended, as printed): the share (%)
    of draws in which each engineer is in the PM's team (the best-aligned stable coalition of ≥ 2, exact shares).

    Args:
        draws: uniform random score draws per frontend share.
        seed: the draws' seed.
        frontend_weights: the task's frontend shares w to try.
        lam: λ, the weight of the ability term (§5.2).
    """
    from tomlib.coalition import team_shares

    rng = np.random.default_rng(seed)
    roles = list(C1_ROLES)
    names = ["PM", *roles]
    scores = rng.uniform(-1, 1, (draws, len(roles))).round(2)
    variants = {"no ability term (λ = 0)": (0.0, "intent"), "λ·α, intended sign": (lam, "intent")}
    variants["λ·α, sign as printed"] = (lam, "printed")
    alphas = {w: {r: round(w * f + (1 - w) * b, 4) for r, (f, b) in C1_ROLES.items()} for w in frontend_weights}
    jobs = [
        make_instance(
            {"PM": dict(zip(roles, row, strict=True))},
            names=names,
            ability=alphas[w],
            lam=lam_v,
            ability_sign=sign,  # type: ignore[arg-type]
            min_size=2,
        )
        for w in frontend_weights
        for lam_v, sign in variants.values()
        for row in scores
    ]
    solved = iter(solve_many(functools.partial(team_shares, mechanism="iclr", selection="best-aligned"), jobs))
    rows = []
    for w in frontend_weights:
        alpha = alphas[w]
        for variant in variants:
            member = dict.fromkeys(roles, 0.0)
            for _ in scores:
                for team, p in next(solved).items():
                    for i in team:
                        if i:
                            member[names[i]] += p / draws
            rows.append(
                {
                    "frontend share w": w,
                    "α (UI / Backend / Full-Stack)": " / ".join(f"{alpha[r]:g}" for r in roles),
                    "ability term": variant,
                    **{f"{r} in team %": round(100 * member[r], 1) for r in roles},
                }
            )
    return pd.DataFrame(rows)
