"""A rerun clears what it no longer produces.

A notebook that ran to its end replaces its tables whole, but its units tables keep every source and condition
written before (so a formal run and an LLM run sit side by side), ``results/waves.json`` keeps the record of a run
that stopped when decided, and a table it wrote once stays when it no longer writes it. Left there, REPORT and
``claims.csv`` go on judging rows no executed notebook made: after a ``sim`` run into the series' folder and the
series again, ``claims.csv`` kept 5 ``sim:sim`` verdicts and REPORT said 09 was "decided after 120 of 160 planned
units". So once a notebook succeeds, :func:`clear_stale` removes from its results folder

- the rows of each units table it wrote whose source it did not write this time, unless another notebook's stamp
  says that notebook writes that source there (01's tie curve writes Table 4's formal units beside 04's);
- the units tables and tables its previous stamp names and this run did not write, unless another notebook's stamp
  names them too;
- its record in ``waves.json`` (a run in waves writes its records again after its last wave).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tomlib.paths import write_atomic

WAVES_FILE = "waves.json"  # tomlib.planning._waves.WAVES_FILE, named here so the runner imports no claims for it
ANY = "*"
"""A source another notebook may write: its stamp predates the units it names (any source of those tables is its)."""


def units_written(lines: Iterable[str]) -> dict[str, list[str]]:
    """``<units table>\\t<source>`` lines (a task's units manifest) as table → sources."""
    out: dict[str, set[str]] = {}
    for line in lines:
        name, _, source = line.partition("\t")
        if name and source:
            out.setdefault(name, set()).add(source)
    return {name: sorted(sources) for name, sources in sorted(out.items())}


def _others(results: Path, notebook: str) -> tuple[dict[str, set[str]], set[str]]:
    """What the other notebooks' stamps in ``results`` say they write: units table → sources (:data:`ANY` for a stamp
    that names tables only), and tables."""
    units: dict[str, set[str]] = {}
    tables: set[str] = set()
    for path in (results / "notebooks").glob("*.stamp.json"):
        if path.name == f"{notebook}.stamp.json":
            continue
        try:
            stamp = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        named = [str(t) for t in stamp.get("tables") or []]
        tables.update(named)
        said = stamp.get("units")
        if isinstance(said, dict):
            for name, sources in said.items():
                units.setdefault(str(name), set()).update(map(str, sources))
        else:
            for name in named:
                units.setdefault(name, set()).add(ANY)
    return units, tables


def clear_stale(
    results: Path, notebook: str, tables: Iterable[str], units: dict[str, list[str]], previous: dict[str, Any]
) -> list[str]:
    """Remove from ``results`` what ``notebook`` no longer produces, now that it ran to its end having written
    ``tables`` and ``units`` (units table → sources), over what its ``previous`` stamp said; returns what went, one
    entry a file (for the run's output)."""
    import pandas as pd

    others_units, others_tables = _others(results, notebook)
    gone: list[str] = []
    for name, sources in units.items():
        path = results / "units" / f"{name}.csv"
        theirs = others_units.get(name, set())
        if ANY in theirs or not path.exists():
            continue
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        if "source" not in frame.columns:
            continue
        stale = ~frame["source"].isin({*sources, *theirs})
        if stale.any():
            old = sorted(set(frame.loc[stale, "source"]))
            write_atomic(path, frame[~stale].to_csv(index=False))
            gone.append(f"units/{name}.csv: the rows of {', '.join(old)}")
    before_units = previous.get("units") if isinstance(previous.get("units"), dict) else {}
    for name in sorted(set(before_units) - set(units) - set(others_units)):
        path = results / "units" / f"{name}.csv"
        if path.exists():
            path.unlink()
            gone.append(f"units/{name}.csv")
    for name in sorted(set(map(str, previous.get("tables") or [])) - set(tables) - others_tables):
        for path in (results / "tables" / f"{name}.csv", results / "tables" / f"{name}.run.json"):
            if path.exists():
                path.unlink()
                gone.append(f"tables/{path.name}")
    waves = results / WAVES_FILE
    if waves.exists():
        try:
            records = json.loads(waves.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            records = None
        if isinstance(records, dict) and notebook in records:
            del records[notebook]
            if any(not k.startswith("_") for k in records):
                write_atomic(waves, json.dumps(records, indent=1))
            else:
                os.unlink(waves)
            gone.append(f"{WAVES_FILE}: {notebook}'s record")
    return gone
