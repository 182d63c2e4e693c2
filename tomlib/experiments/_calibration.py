"""The claims engine end to end on the simulated model: an experiment run live against a sim that declares an effect
per condition, its units judged as any run's are.

One claim per paper that the sim can declare a truth for (:data:`CASES`; its model, where it names one, left out: the
sim stands in), run through the paper's experiment under a declared null and a declared effect. Each replication is
a block of units per condition. The declared competence sets the effect; its size in the claim's metric is measured
on all the blocks pooled and given to the engine's planner, which says what the "supported" rate should be. The
coalition paper has no case yet.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from tomlib.claims import Claim, load_claims
from tomlib.claims._calibrate import design
from tomlib.claims._verdict import power_at, verdicts
from tomlib.paths import configs_dir, environ


@contextmanager
def scratch_setup(spec: object, name: str) -> Iterator[None]:
    """A SimServer registered as model ``name`` in a copy of the configs, with results and store in a temporary
    folder: nothing of the caller's results, store or configs is touched; the environment is restored after."""
    from tomlib.sim import SimServer

    with tempfile.TemporaryDirectory(prefix="tomlib-calibration-") as tmp:
        configs = Path(tmp) / "configs"
        shutil.copytree(configs_dir(), configs)
        scratch = {
            "TOMLIB_CONFIGS": str(configs),
            "TOMLIB_RESULTS": f"{tmp}/results",
            "TOMLIB_STORE": f"{tmp}/store.sqlite",
        }
        with environ(scratch), SimServer(spec) as srv:  # type: ignore[arg-type]
            with open(configs / "models.yaml", "a") as fh:
                fh.write(srv.model_entry(name))
            yield


@dataclass(frozen=True)
class Case:
    """One claim run end to end: the sim's declared competence under the null and under the effect, how a block of
    units is run, and the claim's groups as the run labels them."""

    claim_id: str
    null: dict[str, object]  # SimSpec fields
    effect: dict[str, object]
    a: str
    b: str
    select: str = ""


CASES = {
    "tom_ib": Case(
        "tom_ib.gpt35_tomib_helps",
        null={"city_idle": {"Base": 0.3, "ToM+IB": 0.3}},
        effect={"city_idle": {"Base": 0.3, "ToM+IB": 0.2}},
        a="configuration == 'ToM+IB'",
        b="configuration == 'Base'",
    ),
    "adaptive_tom": Case(
        "adaptive_tom.alignment_matters_point",
        null={"tom_error": 0.5},  # two actions, each a coin flip: no pair can coordinate better than another
        effect={"tom_error": 0.2},
        a="alignment == 'aligned'",
        b="alignment == 'misaligned'",
        select="task == 'memory_1'",
    ),
}
"""ToM+IB: its city agents idle (NONE instead of their policy's action) with a declared probability per
configuration. adaptive_tom: its matrix-game agents take another action than their order's with probability
``tom_error``; at 0.5 in a two-action game every action is a coin flip, so aligned pairs do no better than misaligned
ones."""

AT_PAIRS = (("ToM-1", "ToM-0"), ("ToM-1", "ToM-1"))  # one aligned pair, one misaligned


def run_block(paper: str, spec: dict[str, object], units: int, seed: int) -> pd.DataFrame:
    """``units`` units per condition of the case's experiment on a sim declared by ``spec``: its units rows."""
    from tomlib.claims import read_units
    from tomlib.experiments import adaptive_tom, tom_ib
    from tomlib.sim import SimSpec

    name = "calibration"
    with scratch_setup(SimSpec(name=name, seed=seed, **spec), name):  # type: ignore[arg-type]
        if paper == "tom_ib":
            run = tom_ib.fig5(models=[name], configs=["Base", "ToM+IB"], trials=units, llm_mode="auto", progress=False)
            table, metric, unit = "tom_ib.fig5", "final_health", "trial"
        else:
            run = adaptive_tom.table1(
                model=name, llm_mode="auto", tasks=["memory_1"], pairs=list(AT_PAIRS), episodes=units, progress=False
            )
            table, metric, unit = "adaptive_tom.table1", "point", "episode"
        asyncio.run(run)  # type: ignore[arg-type]
        rows = read_units()[table]
    rows = rows[(rows["metric"] == metric) & (rows["source"] == f"sim:{name}")].reset_index(drop=True)
    return rows.assign(metric="y", _unit=rows[unit].astype(int))


def the_claim(paper: str = "tom_ib") -> Claim:
    """The case's claim as the calibration judges it: its test and unit structure, its groups, no model selected."""
    case = CASES[paper]
    claim = next(c for c in load_claims(paper) if c.claim_id == case.claim_id)
    return design(claim).model_copy(update={"a": case.a, "b": case.b, "select": case.select})


@dataclass
class EndToEnd:
    claim_id: str
    reps: int
    per_block: int
    false_rate: float
    supported_rate: float
    power: float
    effect: float
    sd: float


def end_to_end(paper: str = "tom_ib", reps: int = 100, per_block: int = 5, seed: int = 0) -> EndToEnd:
    """``reps`` blocks of ``per_block`` units per condition under the declared null and the declared effect; the
    planner is given the effect and spread of all the effect's blocks pooled."""
    case, c = CASES[paper], the_claim(paper)
    decided = {}
    pooled = pd.DataFrame()
    for truth, spec in (("null", case.null), ("effect", case.effect)):
        frame = run_block(paper, spec, reps * per_block, seed)
        frame["rep"] = frame["_unit"] // per_block
        decided[truth] = [
            verdicts("cal", [c], {"calibration": block}).iloc[0]["verdict"] for _, block in frame.groupby("rep")
        ]
        pooled = frame
    picked = pooled.query(c.select) if c.select else pooled
    a, b = picked.query(c.a)["value"], picked.query(c.b)["value"]
    effect, sd = float(a.mean() - b.mean()), float(((a.var() + b.var()) / 2) ** 0.5)
    n_units = len(picked) // reps
    power = power_at(c.model_copy(update={"paper_effect": effect, "paper_effect_sd": sd}), n_units, sd) or 0.0
    false = sum(v in ("supported", "contradicted") for v in decided["null"]) / reps
    supported = sum(v == "supported" for v in decided["effect"]) / reps
    return EndToEnd(case.claim_id, reps, per_block, false, supported, power, effect, sd)
