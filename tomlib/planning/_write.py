"""A plan as the terminal shows it, and as a run profile that runs exactly it."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd
import yaml

from tomlib.errors import UsageError
from tomlib.paths import write_atomic
from tomlib.planning._plan import RUN, Plan


def _money(usd: float | None) -> str:
    return "no price" if usd is None else f"${usd:,.2f}"


def plan_table(plan: Plan) -> pd.DataFrame:
    """One row per claim: its status, units, spread and its source, the notebooks' sizes, calls and cost."""
    rows = []
    for line in plan.claims:
        sizes = "; ".join(
            f"{stem[:2]}: " + ", ".join(f"{k}={v}" for k, v in p.items()) for stem, p in line.params.items()
        )
        rows.append(
            {
                "claim": line.claim.claim_id,
                "status": line.status,
                "units": line.units,
                "sd": None if line.sd is None else round(line.sd, 3),
                "spread from": line.sd_from,
                "sizes": sizes,
                "calls": None if line.estimate is None else line.estimate.calls,
                "usd": None if line.estimate is None else line.estimate.usd,
                "power": None if line.power_reached is None else round(line.power_reached, 3),
                "why": line.why,
            }
        )
    return pd.DataFrame(rows)


def plan_lines(plan: Plan) -> list[str]:
    """What ``python -m tomlib plan`` prints."""
    steps = ", ".join(f"{p} {plan.alpha:g}/{m} = {plan.alpha / m:.4f}" for p, m in sorted(plan.family.items()))
    out = [
        f"Plan for {plan.model}: {plan.power:.0%} power at each paper's effect, two-sided alpha {plan.alpha:g} at "
        f"Holm's strictest step ({steps}).",
        "",
    ]
    table = plan_table(plan)
    done = table[table["status"].isin(["planned", "capped", "undecidable"])]
    for _, r in done.iterrows():
        est = f"{int(r['calls']):,} calls, {_money(r['usd'])}"
        spread = f"SD {r['sd']:g}, " if pd.notna(r["sd"]) else ""
        out.append(f"{r['claim']}: {int(r['units'])} units ({spread}from {r['spread from']})")
        out.append(f"    {r['sizes']}; {est} for this claim alone")
        if r["status"] == "capped":
            out.append(f"    run at its ceiling: {r['why']}; power there {r['power']:.0%}")
        if r["status"] == "undecidable":
            out.append(f"    NOT RUN, no affordable n decides it: {r['why']}; power there {r['power']:.0%}")
    rest = table[~table["status"].isin(["planned", "capped", "undecidable"])]
    if len(rest):
        out += ["", "Not planned:"]
        out += [f"  {r['claim']}: {r['status']} ({r['why']})" for _, r in rest.iterrows()]
        if (rest["status"] == "no pilot").any():
            out.append(
                "  A pilot shows how many units each size gives: run the claims' notebooks once at small sizes, e.g. "
                "on the simulated model (`.venv/bin/tomlib run --profile sim --results results/sim`), then plan with "
                "--pilot results/sim."
            )
    total, full = plan.total, plan.full_total
    out.append("")
    for stem, est in plan.estimates.items():
        sizes = ", ".join(f"{k}={v}" for k, v in plan.notebooks[stem].items())
        out.append(f"  {stem}: {sizes}: {est.calls:,} calls, {_money(est.usd)}")
    share = f" ({total.calls / full.calls:.1%} of its calls)" if full.calls else ""
    out.append(
        f"Total: {total.calls:,} calls, about {_money(total.usd)}; the full profile's notebooks of these claims "
        f"with {plan.model}: {full.calls:,} calls, about {_money(full.usd)}{share}."
    )
    return out


def profile_name(plan: Plan, spec: str) -> str:
    """``plan-<model>-<claims>``, in characters a file name keeps."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", f"plan-{plan.model}-{spec}")[:80].strip("-")


def write_profile(plan: Plan, path: str | os.PathLike[str], spec: str) -> Path:
    """A run profile (by default in ``.tomlib/profiles/``, where no stamp looks) that runs the plan's notebooks at
    its sizes and skips every other, with a budget of the plan's estimate plus a quarter (estimates are per-call
    guesses)."""
    from tomlib.runner import find_notebooks

    path = Path(path)
    every = [p.stem for p in find_notebooks()]
    usd = plan.total.usd
    body = {
        "description": (
            f"Written by `.venv/bin/tomlib plan --model {plan.model} --claims {spec} --power {plan.power:g} "
            f"--alpha {plan.alpha:g}`: the units that give each claim {plan.power:.0%} power at the paper's effect, "
            "and nothing else."
        ),
        "parameters": {"llm_mode": "auto"},
        "notebooks": {stem: dict(p) for stem, p in plan.notebooks.items()},
        "skip": [s for s in every if s not in plan.notebooks],
        "claims": [c.claim.claim_id for c in plan.claims if c.status in RUN],
    }
    if usd:
        body["budget"] = {"max_usd": round(usd * 1.25 + 0.005, 2)}
    text = yaml.safe_dump(body, sort_keys=False, width=110)
    cannot = f"Cannot write the plan's profile to {path}"
    if path.is_dir():
        raise UsageError(f"{cannot}: it is a folder. Name a file in it, e.g. --out {path / 'plan.yaml'}.")
    above = next((p for p in path.parents if p.exists() or p.is_symlink()), None)
    if above is not None and not above.is_dir():
        raise UsageError(f"{cannot}: {above} is a file, not a folder. Choose another --out FILE.")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text)
    except PermissionError as exc:  # named as the profile, not its temp file: the command line gives the ways out
        raise PermissionError(exc.errno, exc.strerror, str(path)) from None
    except OSError as exc:  # a read-only file system, a name too long...
        raise UsageError(f"{cannot} ({exc.strerror or exc}). Choose another --out FILE.") from None
    return path
