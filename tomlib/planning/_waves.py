"""Runs that stop once their claims are decided (``python -m tomlib run --stop-when-decided``).

A notebook with size parameters (tasks, episodes, trials, debates, questions) runs in ``waves`` equal steps up to
the sizes its profile gives. After each wave, every claim it serves is judged on the units so far with an
anytime-valid confidence sequence (:mod:`tomlib.claims._sequential`), at ``alpha`` split evenly over the claims the
run serves for a paper (Bonferroni, which any stopping time keeps). Once every claim it serves is decided, the
notebook stops. A wave reruns the notebook at the larger sizes: each dataset is taken from its start, so the calls of
earlier waves replay from the response store and only the new units are paid for. A run stopped by its budget, or
one rerun with larger sizes, resumes the same way. What each notebook decided and what it did not spend is written
to ``results/waves.json``, which REPORT shows.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tomlib.claims import (
    Claim,
    ClaimDataError,
    across_models,
    groups,
    holds_groups,
    load_claims,
    read_units,
    require_confseq,
    sequential_verdict,
    units_for,
)
from tomlib.experiments import Estimate
from tomlib.planning._costs import NOTEBOOKS, resolve
from tomlib.planning._plan import KNOB_WEIGHT, family_sizes, select_claims

WAVES_FILE = "waves.json"
METHOD = (
    "anytime-valid asymptotic confidence sequences (Waudby-Smith, Arbour, Sinha, Kennedy and Ramdas, 2024) on the "
    "two-sided normal-mixture boundary of Howard, Ramdas, McAuliffe and Sekhon (2021), from their confseq package; "
    "alpha split evenly over the claims a notebook waits for"
)


@dataclass
class WaveRecord:
    """One notebook run in waves: its planned and reached sizes, each claim's verdict, what it did not spend."""

    notebook: str
    planned: dict[str, int]
    ran: dict[str, int]
    waves_run: int
    waves: int
    decided: dict[str, str] = field(default_factory=dict)  # claim id -> verdict (at the last wave)
    stopped_early: bool = False
    calls_not_spent: int = 0
    usd_not_spent: float | None = 0.0
    status: str = "ok"

    @property
    def units(self) -> tuple[int, int]:
        weight = {k: KNOB_WEIGHT.get(k, 1) for k in self.planned}
        return sum(weight[k] * v for k, v in self.ran.items()), sum(weight[k] * v for k, v in self.planned.items())

    def line(self) -> str:
        done, planned = self.units
        sizes = ", ".join(f"{k} {self.ran[k]} of {v}" for k, v in self.planned.items())
        if self.status != "ok":
            return f"{self.notebook}: stopped at wave {self.waves_run} of {self.waves} ({self.status}; {sizes})"
        open_ = [c for c, v in self.decided.items() if v == "inconclusive"]
        usd = "" if self.usd_not_spent is None else f" and ${self.usd_not_spent:,.2f}"
        if self.stopped_early:
            return (
                f"{self.notebook}: decided after {done} of {planned} planned units ({sizes}); "
                f"{self.calls_not_spent:,} calls{usd} not spent"
            )
        if not self.decided:
            return f"{self.notebook}: ran every wave ({sizes}); it serves no claim this run can judge"
        if not open_:
            return f"{self.notebook}: decided at its last wave, all {planned} planned units ({sizes})"
        return f"{self.notebook}: ran all {planned} planned units ({sizes}); not decided: {', '.join(open_)}"


def served(stem: str) -> list[Claim]:
    """The claims whose units this notebook writes, that a single model's run can judge."""
    tables = set(NOTEBOOKS[stem].tables)
    papers = {t.split(".", 1)[0] for t in tables}
    return [
        c
        for p in sorted(papers)
        for c in load_claims(p)
        if c.test != "all" and not across_models(c) and tables & set(c.tables)
    ]


def judge_served(
    claims: Sequence[Claim], results: Path, sources: Sequence[str], alpha: dict[str, float], scale: float
) -> dict[str, str]:
    """Each claim's sequential verdict per source (``claim`` or ``claim@source`` with several); claims a source has
    no units for are left out (they do not hold a notebook back). ``scale``: planned over reached units, so each
    sequence is tightest near the planned end."""
    stacked = units_for(claims, read_units(results))
    out: dict[str, str] = {}
    for c in claims:
        table = stacked.get(c.units)
        for source in sources if table is not None else ():
            try:
                frame = groups(c, table[table["source"] == source])
            except ClaimDataError:  # its queries need columns this source's rows lack: not this run's to judge
                continue
            if not holds_groups(c, frame):
                continue
            n_now = max(len(frame), 2)
            verdict, _ = sequential_verdict(c, frame, alpha[c.claim_id.split(".", 1)[0]], int(n_now * scale))
            out[c.claim_id if len(sources) == 1 else f"{c.claim_id}@{source}"] = verdict
    return out


def run_in_waves(
    profile: Any,
    names: Sequence[str] = (),
    *,
    waves: int = 4,
    alpha: float = 0.05,
    claims: Sequence[str] = (),
    results: str | os.PathLike[str] | None = None,
    html: bool = True,
    **run: Any,
) -> tuple[list[Any], list[WaveRecord]]:
    """Run the series (or ``names``) under ``profile``; notebooks with size parameters in waves (see the module's
    docstring), the others once; ``claims``, when given, are the only claims a notebook waits for. Returns the
    runner's outcomes (the last wave's per notebook) and the records."""
    from tomlib.errors import UsageError
    from tomlib.llm import source_of
    from tomlib.runner import export_html, find_notebooks, parameters_for, results_for_run, run_notebooks

    if waves < 1:
        raise UsageError(f"--waves must be at least 1; got {waves}.")
    require_confseq()  # before any notebook runs: a missing build is one line, not a failure after the first wave
    if claims:
        known = {c.claim_id for c in (select_claims(",".join(sorted({i.split(".", 1)[0] for i in claims}))))}
        unknown = [c for c in claims if c not in known]
        if unknown:
            from tomlib.errors import did_you_mean

            raise UsageError(f"--claims: no claim {unknown[0]!r}{did_you_mean(unknown[0], known)}.")
    res = results_for_run(names, run.get("directory"), results)
    books = [nb for nb in find_notebooks(names, run.get("directory")) if names or nb.stem not in profile.skip]
    staged = [b for b in books if b.stem in NOTEBOOKS]
    rest = [b.stem for b in books if b.stem not in NOTEBOOKS]
    outcomes = list(run_notebooks(profile, rest, results=res, html=html, **run)) if rest else []
    records: list[WaveRecord] = []
    for book in staged:
        stem, spec = book.stem, NOTEBOOKS[book.stem]
        params = parameters_for(profile, book, res, run.get("overrides"))
        models = [m.strip() for m in str(params.get(spec.model_param) or "").split(",") if m.strip()]
        if not models:  # references only: no LLM units to wait for
            outcomes += run_notebooks(profile, [stem], results=res, html=html, **run)
            continue
        planned = {k: resolve(params, k) for k in spec.knobs}
        serves = [c for c in served(stem) if not claims or c.claim_id in claims]
        family = family_sizes(serves, models[0], {stem}) if serves else {}
        split = {p: alpha / m for p, m in family.items()}
        record = WaveRecord(stem, planned, {}, 0, waves)
        last = None
        for k in range(1, waves + 1):
            sizes = {knob: max(1, math.ceil(v * k / waves)) for knob, v in planned.items()}
            stage = profile.model_copy(
                update={"notebooks": {**profile.notebooks, stem: {**profile.notebooks.get(stem, {}), **sizes}}}
            )
            given = {k: v for k, v in (run.get("overrides") or {}).items() if k not in sizes}  # -p sets the plan
            last = run_notebooks(stage, [stem], results=res, html=False, **{**run, "overrides": given})[0]
            record.ran, record.waves_run = sizes, k
            if last.status not in ("ok", "skipped"):
                record.status = last.status
                break
            ratio = sum(planned.values()) / max(sum(sizes.values()), 1)
            record.decided = judge_served(serves, res, [source_of(m) for m in models], split, ratio)
            if k < waves and record.decided and all(v != "inconclusive" for v in record.decided.values()):
                record.stopped_early = True
                record.calls_not_spent, record.usd_not_spent = not_spent(spec, models, params, planned, sizes)
                break
        if last is not None:
            outcomes.append(last)
            if html and last.status == "ok":
                export_html(res / "notebooks" / book.name)
        records.append(record)
        print(record.line())
    write_records(records, res)
    return outcomes, records


def not_spent(
    spec: Any, models: Sequence[str], params: dict[str, Any], planned: dict[str, int], ran: dict[str, int]
) -> tuple[int, float | None]:
    """Calls and USD between the planned sizes and those reached, from the notebook's own estimator."""
    full: list[Estimate] = [spec.cost(m, {**params, **planned}) for m in models]
    done: list[Estimate] = [spec.cost(m, {**params, **ran}) for m in models]
    calls = sum(e.calls for e in full) - sum(e.calls for e in done)
    if any(e.usd is None for e in full + done):
        return calls, None
    return calls, sum(e.usd or 0.0 for e in full) - sum(e.usd or 0.0 for e in done)


def write_records(records: Sequence[WaveRecord], results: Path) -> Path:
    """``results/waves.json``: this run's records over those of notebooks it did not run."""
    path = results / WAVES_FILE
    old = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    old["_method"] = METHOD
    old.update({r.notebook: {**asdict(r), "line": r.line()} for r in records})
    path.write_text(json.dumps(old, indent=1), encoding="utf-8")
    return path


def read_records(results: str | os.PathLike[str]) -> list[WaveRecord]:
    path = Path(results) / WAVES_FILE
    if not path.exists():
        return []
    rows = [v for k, v in json.loads(path.read_text(encoding="utf-8")).items() if not k.startswith("_")]
    return [WaveRecord(**{k: v for k, v in row.items() if k != "line"}) for row in rows]
