"""The claims engine end to end on the simulated model: an experiment run live against a sim that declares an effect
per condition, its units judged as any run's are.

One claim per paper that the sim can declare a truth for (:data:`CASES`; its model, where it names one, left out: the
sim stands in), run through the paper's experiment under a declared null and a declared effect. Each replication is
a block of units per condition. The declared competence sets the effect; its size and spread in the claim's metric,
on the claim's unit of analysis, are measured block by block and given to the engine's planner, which says what the
"supported" rate should be.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tomlib.claims import Claim, design, estimate, groups, load_claims, power_at, verdicts
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
    per_block: int = 5  # units a condition in one replication


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
    "coalition": Case(
        "coalition.matching_raises_ftm_humaneval",
        null={"p_follow": 0.5},
        effect={"p_follow": 0.5, "follow_by_pm": {"ToM-1+matching": 0.95}},
        a="matching == 'matching'",
        b="matching == 'no_matching'",
        select="round in [1, 5]",
        per_block=10,  # pairs: an exact sign-flip test of 5 pairs can never reach p < 0.05 two-sided
    ),
}
"""ToM+IB: its city agents idle (NONE instead of their policy's action) with a declared probability per
configuration. adaptive_tom: its matrix-game agents take another action than their order's with probability
``tom_error``; at 0.5 in a two-action game every action is a coin flip, so aligned pairs do no better than misaligned
ones. coalition: engineers follow a ToM-1 PM's instruction with ``p_follow``, and one from a PM leading a coalition
(matching, from round 2) with ``follow_by_pm``; the PM trusts those who followed, so FTM over all engineers rises with
matching only where the declared rates differ. A block is one seed of ``per_block`` HumanEval tasks, each run with and
without matching (the claim's pairs)."""

AT_PAIRS = (("ToM-1", "ToM-0"), ("ToM-1", "ToM-1"))  # one aligned pair, one misaligned


def run_block(paper: str, spec: dict[str, object], units: int, seed: int, per_block: int = 5) -> pd.DataFrame:
    """``units`` units per condition of the case's experiment on a sim declared by ``spec``: its units rows, with
    ``_unit`` numbering the units so that ``_unit // per_block`` is the block (coalition: ``units // per_block``
    seeds of ``per_block`` tasks)."""
    from tomlib.claims import read_units
    from tomlib.experiments import adaptive_tom, tom_ib
    from tomlib.experiments import coalition_programming as cp
    from tomlib.programming import TeamConfig
    from tomlib.sim import SimSpec

    name = "calibration"
    with scratch_setup(SimSpec(name=name, seed=seed, **spec), name):  # type: ignore[arg-type]
        if paper == "coalition":
            configs = [TeamConfig(pm_tom=1, matching=False), TeamConfig(pm_tom=1, matching=True)]
            runs = asyncio.run(
                cp.run_programming(
                    configs,
                    model=name,
                    llm_mode="auto",
                    benchmarks=["humaneval"],
                    humaneval_tasks=per_block,
                    seeds=max(1, units // per_block),
                    progress=False,
                    on_sandbox=None,
                )
            )
            cp.table2(runs)
            rows = read_units()["coalition.table2"]
            rows = rows[(rows["metric"] == "ftm") & (rows["source"] == f"sim:{name}")].reset_index(drop=True)
            task = {t: i for i, t in enumerate(dict.fromkeys(rows["task_id"]))}
            return rows.assign(metric="y", _unit=rows["seed"].astype(int) * per_block + rows["task_id"].map(task))
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


def end_to_end(paper: str = "tom_ib", reps: int = 100, per_block: int | None = None, seed: int = 0) -> EndToEnd:
    """``reps`` blocks of ``per_block`` units per condition under the declared null and the declared effect; the
    planner is given the effect's mean and its spread (root mean square of the blocks' SDs) on the claim's unit."""
    case, c = CASES[paper], the_claim(paper)
    per_block = per_block or case.per_block
    decided = {}
    blocks: list[pd.DataFrame] = []
    for truth, spec in (("null", case.null), ("effect", case.effect)):
        frame = run_block(paper, spec, reps * per_block, seed, per_block)
        frame["rep"] = frame["_unit"] // per_block
        blocks = [block for _, block in frame.groupby("rep")]
        decided[truth] = [verdicts("cal", [c], {"calibration": block}).iloc[0]["verdict"] for block in blocks]
    # the effect's size and spread on the claim's own unit of analysis (pairs, strata...), block by block
    ests = [estimate(c, groups(c, block)) for block in blocks]
    effect = float(np.mean([e.effect for e in ests]))
    sd = float(np.sqrt(np.mean([e.sd**2 for e in ests if e.sd is not None])))
    n_units = int(np.median([e.n_units for e in ests]))
    power = power_at(c.model_copy(update={"paper_effect": effect, "paper_effect_sd": sd}), n_units, sd) or 0.0
    false = sum(v in ("supported", "contradicted") for v in decided["null"]) / reps
    supported = sum(v == "supported" for v in decided["effect"]) / reps
    return EndToEnd(case.claim_id, reps, per_block, false, supported, power, effect, sd)
