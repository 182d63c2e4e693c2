"""A power plan before any call: per claim, the units that reach the target power at the paper's effect, the spread
that figure assumes and where it came from, and the calls and cost of the notebooks that sample them.

The units of analysis and the design (pairs, strata, clusters) are the claims engine's own
(:mod:`tomlib.claims._verdict`); so is the power solver. How many units a notebook's size parameters yield is read
from a *pilot*: an earlier run's units and the parameters its executed notebooks ran with (by default ``results/``,
which ``./reproduce.sh`` fills). The plan scales those parameters in proportion. The spread is, in this order: the
paper's SD where it prints one; a recorded run of the planned model; a run of the simulated model; else an assumed
one (the paper's effect taken as half an SD), each named. Verdicts are Holm-corrected within a paper, so the plan
holds each claim to Holm's strictest step, ``alpha / m`` over the ``m`` claims the planned tables bear on.
"""

from __future__ import annotations

import ast
import json
import math
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from tomlib.claims import (
    ACROSS_MODELS,
    PAPERS,
    Claim,
    across_models,
    declared_sd,
    judge_claim,
    load_claims,
    paper_distance,
    power_at,
    read_units,
    units_for,
    units_for_power,
)
from tomlib.claims import Estimate as Design
from tomlib.errors import UsageError
from tomlib.experiments import Estimate, price
from tomlib.planning._costs import CAPS, NOTEBOOK_OF, NOTEBOOKS, _split, resolve

KNOB_WEIGHT = {"mmlu_questions": 4}
"""Datasets a size parameter draws from at once (``mmlu_questions`` takes that many of each of four subjects)."""
NEAR = 0.05
"""A claim whose units stop at a ceiling is still run when its power there is at most this far below the target;
further below, it is named undecidable and its notebooks are not run for it."""
LIST_PARAMS = ("llm_tasks", "llm_agents", "configs")
"""Parameters that choose which conditions a notebook plays: a plan runs the union of what its pilots ran."""


RUN = ("planned", "capped")
"""The statuses whose claims the planned profile runs."""


@dataclass
class Pilot:
    """Where a claim's structure was read: the units of one source in one results folder, at known parameters."""

    folder: Path
    source: str
    n_units: int
    params: dict[str, dict[str, Any]]  # notebook stem -> the parameters it ran with
    est: Design = field(repr=False)  # the claim's estimate on these units: its design (pairs, clusters) for power


@dataclass
class ClaimPlan:
    """One claim's line of the plan."""

    claim: Claim
    status: str  # planned | capped | undecidable | decided without calls | not for this model | no effect | no pilot
    why: str = ""
    units: int | None = None  # units of analysis for the target power
    pilot: Pilot | None = None
    sd: float | None = None
    sd_from: str = ""
    params: dict[str, dict[str, int]] = field(default_factory=dict)  # stem -> size parameters
    estimate: Estimate | None = None
    power_reached: float | None = None  # below the target when the dataset runs out first


@dataclass
class Plan:
    model: str
    power: float
    alpha: float
    family: dict[str, int]  # paper -> claims in the Holm family the plan's tables bear on
    claims: list[ClaimPlan]
    notebooks: dict[str, dict[str, Any]]  # stem -> the planned profile's parameters
    estimates: dict[str, Estimate]  # stem -> the notebook's calls at the plan
    full: dict[str, Estimate]  # stem -> the notebook's calls in the full profile, with this model

    @property
    def total(self) -> Estimate:
        return sum(self.estimates.values(), Estimate(0, 0, 0, 0.0))

    @property
    def full_total(self) -> Estimate:
        return sum(self.full.values(), Estimate(0, 0, 0, 0.0))


def check_model(model: str) -> None:
    """Refuse a model the plan cannot price: unknown, or needing a key without prices in ``configs/models.yaml``."""
    if price(model, 1, (1, 1)).usd is None:
        raise UsageError(
            f"{model} has no prices in configs/models.yaml, so no plan can say what it costs; add "
            "price_per_1k_input and price_per_1k_output to its entry (`.venv/bin/tomlib models` lists the priced ones)."
        )


def select_claims(spec: str) -> list[Claim]:
    """``coalition`` (a paper), ``coalition.tom2_best_pass1`` (a claim), or several, comma-separated."""
    wanted = [s.strip() for s in spec.split(",") if s.strip()]
    if not wanted:
        raise UsageError(f"--claims names no paper or claim; give one of {', '.join(PAPERS)} or claim ids.")
    from tomlib.errors import did_you_mean

    out: list[Claim] = []
    for item in wanted:
        paper = item.split(".", 1)[0]
        if paper not in PAPERS:
            raise UsageError(
                f"--claims: {item!r} is not of a paper{did_you_mean(paper, PAPERS)}; the papers are "
                f"{', '.join(PAPERS)}."
            )
        claims = load_claims(paper)
        if item == paper:
            out += claims
            continue
        hit = [c for c in claims if c.claim_id == item]
        if not hit:
            raise UsageError(f"--claims: no claim {item!r}{did_you_mean(item, [c.claim_id for c in claims])}.")
        out += hit
    return list({c.claim_id: c for c in out}.values())


def named_models(claim: Claim) -> set[str]:
    """The models a claim's queries name (``model == 'gpt-4o'``): it is about those models only."""
    text = " ".join((claim.select, claim.a, claim.b, claim.c, claim.d))
    names: set[str] = set()
    for m in re.finditer(r"model\s*(==|in)\s*(\[[^\]]*\]|'[^']*')", text):
        names |= set(re.findall(r"'([^']*)'", m.group(2)))
    return names


def defaults(stem: str) -> dict[str, Any]:
    """The notebook's parameters as its parameters cell sets them."""
    from tomlib.runner import declared_parameters, notebooks_dir

    params: dict[str, Any] = {}
    for name, info in declared_parameters(notebooks_dir() / f"{stem}.ipynb").items():
        try:
            params[name] = ast.literal_eval(str(info.get("default")))
        except (ValueError, SyntaxError):
            params[name] = info.get("default")
    return params


def executed_params(folder: Path, stem: str) -> dict[str, Any] | None:
    """The parameters ``folder``'s executed copy of ``stem`` ran with (its defaults, then papermill's), or None."""
    ran = folder / "notebooks" / f"{stem}.ipynb"
    if not ran.exists():
        return None
    params = defaults(stem)
    meta = json.loads(ran.read_text(encoding="utf-8")).get("metadata", {}).get("papermill", {})
    params.update(meta.get("parameters") or {})
    return params


def _sources(scaled_param: str, params: dict[str, Any]) -> list[str]:
    from tomlib.llm import source_of

    return [source_of(m) for m in str(params.get(scaled_param) or "").split(",") if m.strip()]


def find_pilot(claim: Claim, folders: Sequence[Path], units: dict[Path, dict[str, pd.DataFrame]]) -> Pilot | None:
    """The first folder whose run of the claim's notebooks holds both its groups, with their parameters."""
    stems = list(dict.fromkeys(NOTEBOOK_OF[t] for t in claim.tables if t in NOTEBOOK_OF))
    if not stems:
        return None
    for folder in folders:
        params = {s: executed_params(folder, s) for s in stems}
        if any(p is None for p in params.values()):
            continue
        first = NOTEBOOKS[stems[0]]
        for source in _sources(first.model_param, params[stems[0]]):  # type: ignore[arg-type]
            judged = judge_claim(claim, units[folder], source)
            if judged is not None and judged.est.n_units > 0:
                return Pilot(folder, source, judged.est.n_units, params, judged.est)  # type: ignore[arg-type]
    return None


def spread(
    claim: Claim, model: str, folders: Sequence[Path], units: dict[Path, dict[str, pd.DataFrame]]
) -> tuple[float | None, float | None, str]:
    """(SD, base rate, where they came from): the paper's SD; else a run of ``model``; else a sim run; else the
    assumed SD of the engine's calibration (the paper's effect is half an SD). Rates plan with the comparison
    group's rate (0.5 when no run shows it); a one-group rate with its null."""
    from tomlib.llm import source_of

    rate = claim.test in ("rate", "rate_diff")
    if claim.test == "rate":
        return None, float(claim.null or 0.0), "the claim's null rate"
    if claim.paper_effect_sd and not rate:
        return float(claim.paper_effect_sd), None, "the paper's SDs"
    mine = source_of(model)
    for label, wanted in ((f"a recorded run of {model}", lambda s: s == mine), ("the sim", _is_sim)):
        for folder in folders:
            for source in sorted({s for f in units[folder].values() for s in f["source"].astype(str).unique()}):
                judged = judge_claim(claim, units[folder], source) if wanted(source) else None
                if judged is None or judged.est.n_units < 2:
                    continue
                where = f"{label}: {source}, {judged.est.n_units} units in {folder}"
                if rate and judged.base_rate is not None:
                    return None, judged.base_rate, where
                sd = judged.est.sd
                if not rate and sd and math.isfinite(sd) and sd > 0:
                    return sd, None, where
    if rate:
        return None, 0.5, "assumed: a comparison rate of 0.5 (no run of this model or the sim)"
    sd, _ = declared_sd(claim)
    return sd, None, "assumed: the paper's effect taken as half an SD (no SD printed, no run of this model or the sim)"


def _stacked(units: dict[str, pd.DataFrame], claims: Sequence[Claim]) -> dict[str, pd.DataFrame]:
    """A folder's units, with the stacked tables of claims that read several (the engine's ``units_for``)."""
    return {**units, **units_for(claims, units)}


def _is_sim(source: str) -> bool:
    return source.startswith("sim:")


def plan_claim(
    claim: Claim,
    model: str,
    *,
    power: float,
    alpha: float,
    folders: Sequence[Path],
    units: dict[Path, dict[str, pd.DataFrame]],
    ceilings: dict[str, dict[str, int]],
) -> ClaimPlan:
    """One claim's units, parameters and calls (see the module's docstring for each choice); ``ceilings``: the most
    each notebook's size parameters may be (:func:`ceilings`)."""
    if claim.test == "all" or not any(t in NOTEBOOK_OF for t in claim.tables):
        return ClaimPlan(claim, "decided without calls", "a formal result: no model calls decide it")
    if across_models(claim):
        return ClaimPlan(
            claim, "not for this model", f"compares models ({', '.join(sorted(named_models(claim)))}), {ACROSS_MODELS}"
        )
    named = named_models(claim)
    if named and model not in named:
        return ClaimPlan(claim, "not for this model", f"about {', '.join(sorted(named))}: plan it with that model")
    distance = paper_distance(claim)
    if distance is None or distance <= 0:
        why = "the paper prints no effect to plan with" if distance is None else "at the paper's own effect it fails"
        return ClaimPlan(claim, "no effect", f"{why}: no n decides it")
    pilot = find_pilot(claim, folders, units)
    if pilot is None:
        where = ", ".join(str(f) for f in folders)
        return ClaimPlan(claim, "no pilot", f"no run in {where} shows its conditions at known sizes")
    sd, base, sd_from = spread(claim, model, folders, units)
    design = replace(pilot.est, sd=sd)
    need = units_for_power(claim, design, base, alpha=alpha, power=power)
    if need is None:
        return ClaimPlan(claim, "no effect", "no spread to plan with", pilot=pilot, sd=sd, sd_from=sd_from)
    params, reach = scale(pilot, need, ceilings)
    est = sum(
        (NOTEBOOKS[s].cost(model, planned(s, pilot.params[s], p)) for s, p in params.items()), Estimate(0, 0, 0, 0.0)
    )
    if reach < need:
        got = power_at(
            claim,
            reach,
            sd,
            base,
            rows_per_unit=design.rows_per_unit,
            design_effect=design.design_effect,
            alpha=alpha,
        )
        near = got is not None and got >= power - NEAR
        return ClaimPlan(
            claim,
            "capped" if near else "undecidable",
            f"needs {need} units; the most the plan allows gives about {reach}"
            + ("" if near else "; --max-scale raises the ceiling where the dataset has more"),
            need,
            pilot,
            sd,
            sd_from,
            params,
            est,
            got,
        )
    return ClaimPlan(claim, "planned", "", need, pilot, sd, sd_from, params, est, power)


def scale(pilot: Pilot, need: int, ceilings: dict[str, dict[str, int]]) -> tuple[dict[str, dict[str, int]], int]:
    """The pilot's sizes scaled by one factor until they give ``need`` units, each stopping at its ceiling (the
    others then grow further); with the units they give (units grow with the sizes as in the pilot, an MMLU
    question per subject counting four times)."""

    def at(factor: float) -> tuple[dict[str, dict[str, int]], int]:
        sizes = {
            stem: {
                k: min(max(1, math.ceil(resolve(ran, k) * factor)), ceilings[stem][k]) for k in NOTEBOOKS[stem].knobs
            }
            for stem, ran in pilot.params.items()
        }
        weight = {s: {k: KNOB_WEIGHT.get(k, 1) for k in NOTEBOOKS[s].knobs} for s in sizes}
        before = sum(weight[s][k] * resolve(pilot.params[s], k) for s in sizes for k in sizes[s])
        after = sum(weight[s][k] * v for s in sizes for k, v in sizes[s].items())
        return sizes, int(pilot.n_units * after / max(before, 1))

    factor = need / pilot.n_units
    sizes, got = at(factor)
    while got < need:
        more, got_more = at(factor * 1.05)
        if more == sizes:  # every size at its ceiling
            break
        factor, sizes, got = factor * 1.05, more, got_more
    return sizes, got


def family_sizes(claims: Sequence[Claim], model: str, stems: set[str]) -> dict[str, int]:
    """Per paper, the claims with a p-value that the planned notebooks' tables produce for ``model`` (Holm's m)."""
    out: dict[str, int] = {}
    for paper in {c.claim_id.split(".", 1)[0] for c in claims}:
        count = 0
        for c in load_claims(paper):
            named = named_models(c)
            if c.test == "all" or across_models(c) or (named and model not in named):
                continue
            if any(NOTEBOOK_OF.get(t) in stems for t in c.tables):
                count += 1
        out[paper] = max(count, 1)
    return out


def make_plan(
    model: str,
    claims: Sequence[Claim],
    *,
    power: float = 0.8,
    alpha: float = 0.05,
    pilots: Sequence[str | os.PathLike[str]] = (),
    max_scale: float = 1.0,
) -> Plan:
    """The plan for ``claims`` with ``model`` (see the module's docstring). No size goes past ``max_scale`` times
    the full profile's (the papers' scale), nor past its dataset: a claim that needs more is "capped", with the
    power it reaches there."""
    from tomlib.paths import results_dir

    check_model(model)
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise UsageError(f"--alpha and --power must lie strictly between 0 and 1; got {alpha} and {power}.")
    if max_scale <= 0:
        raise UsageError(f"--max-scale must be above 0 (1 is the papers' own scale); got {max_scale}.")
    folders = [Path(p) for p in pilots] or [results_dir()]
    if missing := [str(f) for f in pilots if not Path(f).is_dir()]:
        raise UsageError(
            f"--pilot {', '.join(missing)}: no such folder. A pilot is a results folder of an earlier run "
            "(e.g. results/sim after `.venv/bin/tomlib run --profile sim --results results/sim`); check the spelling."
        )
    units = {f: _stacked(read_units(f), claims) for f in folders}
    stems = {NOTEBOOK_OF[t] for c in claims for t in c.tables if t in NOTEBOOK_OF}
    family = family_sizes(claims, model, stems)
    limits = ceilings(stems, max_scale)
    lines = [
        plan_claim(
            c,
            model,
            power=power,
            alpha=alpha / family.get(c.claim_id.split(".", 1)[0], 1),
            folders=folders,
            units=units,
            ceilings=limits,
        )
        for c in claims
    ]
    notebooks: dict[str, dict[str, Any]] = {}
    for line in lines:
        if line.pilot is None or not line.params or line.status not in RUN:
            continue
        for stem, sizes in line.params.items():
            book = notebooks.setdefault(stem, {NOTEBOOKS[stem].model_param: model})
            for knob, v in sizes.items():
                book[knob] = max(int(book.get(knob, 0)), v)
            for name in LIST_PARAMS:
                ran = line.pilot.params[stem].get(name)
                if ran:
                    have = _split(book.get(name, ""))  # an agent's import path keeps its commas
                    book[name] = ",".join(dict.fromkeys([*have, *_split(ran)]))
    estimates = {s: NOTEBOOKS[s].cost(model, {**defaults(s), **p}) for s, p in notebooks.items()}
    return Plan(model, power, alpha, family, lines, notebooks, estimates, full_profile(model, sorted(stems)))


def planned(stem: str, pilot: dict[str, Any], sizes: dict[str, int]) -> dict[str, Any]:
    """What a planned profile runs: the notebook's defaults (one seed: seeds add no units of analysis, which
    average their rounds and seeds), the conditions its pilot played, and the sizes."""
    return {**defaults(stem), **{k: pilot[k] for k in LIST_PARAMS if pilot.get(k)}, **sizes}


def full_params(stem: str) -> dict[str, Any]:
    """The notebook's parameters in the ``full`` profile (the papers' scale)."""
    from tomlib.runner import load_profile

    profile = load_profile("full")
    params = defaults(stem)
    params.update({k: v for k, v in profile.parameters.items() if k in params})
    params.update(profile.notebooks.get(stem, {}))
    return params


def ceilings(stems: Iterable[str], max_scale: float) -> dict[str, dict[str, int]]:
    """The most each size parameter may be: ``max_scale`` times the full profile's, and never past its dataset."""
    out: dict[str, dict[str, int]] = {}
    for stem in stems:
        full = full_params(stem)
        out[stem] = {}
        for knob in NOTEBOOKS[stem].knobs:
            top = max(1, math.floor(resolve(full, knob) * max_scale))
            out[stem][knob] = min(top, CAPS[knob]) if knob in CAPS else top
    return out


def full_profile(model: str, stems: Sequence[str]) -> dict[str, Estimate]:
    """Each notebook's calls in the ``full`` profile, run with ``model``."""
    out = {}
    for stem in stems:
        params = full_params(stem)
        if "judge" in params:
            params["judge"] = model
        out[stem] = NOTEBOOKS[stem].cost(model, params)
    return out
