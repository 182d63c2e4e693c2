"""The claims engine end to end on the simulated model: an experiment run live against a sim that declares an effect
per condition, its units judged as any run's are.

ToM+IB's claim that ToM with internal beliefs beats the base agents (``tom_ib.gpt35_tomib_helps``, its model left
out: the sim stands in) is run through Fig. 5's experiment on a sim whose city agents idle (do nothing instead of
their policy's action) with a declared probability per configuration: the same for both under the null, less often
with ToM+IB under the effect. Each replication is a block of ``trials`` trials per configuration. The effect and the
spread that the engine's planner is given are those of all the blocks pooled (the declared idling sets the effect;
its size in final health is measured, not assumed); the paper prints no number for this claim.
"""

from __future__ import annotations

import asyncio
import os
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
from tomlib.paths import configs_dir

CLAIM = "tom_ib.gpt35_tomib_helps"
NULL_IDLE = {"Base": 0.3, "ToM+IB": 0.3}
EFFECT_IDLE = {"Base": 0.3, "ToM+IB": 0.2}


@contextmanager
def scratch_setup(spec: object, name: str) -> Iterator[None]:
    """A SimServer registered as model ``name`` in a copy of the configs, with results and store in a temporary
    folder: nothing of the caller's results, store or configs is touched; the environment is restored after."""
    from tomlib.sim import SimServer

    keys = ("TOMLIB_CONFIGS", "TOMLIB_RESULTS", "TOMLIB_STORE")
    saved = {k: os.environ.get(k) for k in keys}
    with tempfile.TemporaryDirectory(prefix="tomlib-calibration-") as tmp:
        configs = Path(tmp) / "configs"
        shutil.copytree(configs_dir(), configs)
        os.environ.update(
            TOMLIB_CONFIGS=str(configs), TOMLIB_RESULTS=str(Path(tmp) / "results"), TOMLIB_STORE=f"{tmp}/store.sqlite"
        )
        try:
            with SimServer(spec) as srv:  # type: ignore[arg-type]
                with open(configs / "models.yaml", "a") as fh:
                    fh.write(srv.model_entry(name))
                yield
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


def city_trials(idle: dict[str, float], trials: int, seed: int) -> pd.DataFrame:
    """Final health per trial of the Base and ToM+IB teams on a sim that idles as declared (``trials`` each)."""
    from tomlib.claims import read_units
    from tomlib.experiments import tom_ib
    from tomlib.sim import SimSpec

    name = "calibration"
    with scratch_setup(SimSpec(name=name, seed=seed, city_idle=idle), name):
        asyncio.run(
            tom_ib.fig5(models=[name], configs=["Base", "ToM+IB"], trials=trials, llm_mode="auto", progress=False)
        )
        units = read_units()["tom_ib.fig5"]
    rows = units[(units["metric"] == "final_health") & (units["source"] == f"sim:{name}")]
    return rows.reset_index(drop=True)


def the_claim() -> Claim:
    """The claim as the calibration judges it: its groups (ToM+IB against Base), no model selected."""
    claim = next(c for c in load_claims("tom_ib") if c.claim_id == CLAIM)
    return design(claim).model_copy(update={"a": claim.a, "b": claim.b})


@dataclass
class EndToEnd:
    claim_id: str
    reps: int
    trials: int
    false_rate: float
    supported_rate: float
    power: float
    effect: float
    sd: float


def end_to_end(reps: int = 100, trials: int = 5, seed: int = 0) -> EndToEnd:
    """``reps`` replications of ``trials`` trials per configuration under the declared null and the declared effect."""
    c = the_claim()
    rates = {}
    pooled = None
    for truth, idle in (("null", NULL_IDLE), ("effect", EFFECT_IDLE)):
        frame = city_trials(idle, reps * trials, seed).assign(metric="y")
        frame["rep"] = frame["trial"].astype(int) // trials
        decided = [verdicts("cal", [c], {"calibration": block}).iloc[0]["verdict"] for _, block in frame.groupby("rep")]
        rates[truth] = decided
        if truth == "effect":
            pooled = frame
    assert pooled is not None
    a = pooled.loc[pooled["configuration"] == "ToM+IB", "value"]
    b = pooled.loc[pooled["configuration"] == "Base", "value"]
    effect, sd = float(a.mean() - b.mean()), float(((a.var() + b.var()) / 2) ** 0.5)
    power = power_at(c.model_copy(update={"paper_effect": effect, "paper_effect_sd": sd}), 2 * trials, sd) or 0.0
    false = sum(v in ("supported", "contradicted") for v in rates["null"]) / reps
    supported = sum(v == "supported" for v in rates["effect"]) / reps
    return EndToEnd(CLAIM, reps, trials, false, supported, power, effect, sd)
