"""Per-unit outcomes beside the aggregated tables: ``results/units/<paper_id>.<table_id>.csv``.

Long form, one row per independently sampled unit (an episode, a task, a question, a debate, a trial) and metric:
``paper_id, table_id, <condition columns…>, <unit columns…>, metric, value, source``. The claims engine tests the
papers' claims on these rows. A condition's rows are replaced by its newest run; other conditions and sources stay,
so the formal run and an LLM run of one table sit side by side.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from tomlib.claims._registry import PAPERS
from tomlib.errors import TomlibError
from tomlib.paths import ENV_UNITS_MANIFEST, results_dir, write_atomic
from tomlib.redact import redact_text

HEAD = ["paper_id", "table_id"]
UNIT_TAIL = ["metric", "value", "source"]
EXPECTED = "expected"
"""An optional last column: the value a simulated model's declared competence implies for the row (``tomlib.sim``),
from which a claim's declared truth is computed; empty for every other source. Never part of a condition."""
SOURCE_RE = re.compile(r"^(formal|(llm|sim):[A-Za-z0-9._\-/:@]+)(\+ppo:selfplay)?$")  # the results contract's sources


class UnitsFileError(TomlibError, ValueError):
    """A units table that cannot be parsed, or lacks a column every units table has."""


def units_dir(results: str | os.PathLike[str] | None = None) -> Path:
    """The units tables' folder, ``<results>/units/``.

    Args:
        results: the results folder (default ``results/``).
    """
    return results_dir(results) / "units"


UNIT_COLUMNS = (
    "episode",
    "trial",
    "round",
    "seed",
    "step",
    "task_id",
    "question_id",
    "question",
    "debate",
    "instance",
    "steps",
    "blocking_at_start",
)
"""Columns that name a unit, or describe one, rather than a condition (``write_units`` replaces whole conditions,
never part of one): Appendix G's instances carry whether a coalition could block at the start and the steps their
dynamics took."""


def write_units(
    frame: pd.DataFrame, results: str | os.PathLike[str] | None = None, unit_columns: Sequence[str] = UNIT_COLUMNS
) -> list[Path]:
    """Write per-unit rows (one file per ``paper_id.table_id``). A condition (a source and the values of every column
    that is not a unit column) that the new rows hold replaces its earlier rows whole; other conditions stay, so a
    rerun under another reading (``dynamics="paper"``) adds its rows beside the default's.

    Args:
        frame: the rows, with ``paper_id``, ``table_id``, ``metric``, ``value`` and ``source`` columns.
        results: the results folder (default ``results/``).
        unit_columns: the columns that name or describe a unit, not a condition (:data:`UNIT_COLUMNS`).
    """
    missing = [c for c in HEAD + UNIT_TAIL if c not in frame.columns]
    if missing:
        raise ValueError(f"units rows need columns {HEAD + UNIT_TAIL}; missing {missing}")
    bad = sorted({s for s in frame["source"].astype(str) if not SOURCE_RE.match(s)})
    if bad or not set(frame["paper_id"]) <= set(PAPERS):
        raise ValueError(f"units rows with unknown sources {bad} or papers {sorted(set(frame['paper_id']))}")
    folder = units_dir(results)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for (paper, table), rows in frame.groupby(["paper_id", "table_id"], sort=False):
        rows = rows.astype(str)
        _note_written(f"{paper}.{table}", rows["source"])
        path = folder / f"{paper}.{table}.csv"
        if path.exists():
            old = _parsed(path, path.read_bytes(), dtype=str)
            key = [
                c for c in rows.columns if c in old.columns and c not in {*unit_columns, "metric", "value", EXPECTED}
            ]
            fresh = set(map(tuple, rows[key].to_numpy()))
            old = old[[tuple(r) not in fresh for r in old[key].to_numpy()]]
            rows = pd.concat([old, rows], ignore_index=True).fillna("")
        tail = [*UNIT_TAIL, *([EXPECTED] if EXPECTED in rows.columns else [])]
        middle = [c for c in rows.columns if c not in HEAD + tail]
        write_atomic(path, redact_text(rows[[*HEAD, *middle, *tail]].to_csv(index=False)))
        written.append(path)
    return written


def _note_written(name: str, sources: pd.Series) -> None:
    """Tell the runner which sources this run wrote into the units table ``name`` (:data:`ENV_UNITS_MANIFEST`)."""
    manifest = os.environ.get(ENV_UNITS_MANIFEST)
    if manifest:
        with open(manifest, "a", encoding="utf-8") as fh:
            fh.write("".join(f"{name}\t{source}\n" for source in sorted(set(sources))))


def read_units(
    results: str | os.PathLike[str] | None = None, digests: dict[str, str] | None = None
) -> dict[str, pd.DataFrame]:
    """Every units table under ``results/units/``, by ``<paper_id>.<table_id>``; values numeric where they parse.
    ``digests``, if given, receives the SHA-256 of the bytes each table was parsed from.

    Args:
        results: the results folder (default ``results/``).
        digests: filled with each table's SHA-256, by its name (what a judgement ahead is keyed by); None, not.
    """
    out = {}
    for path in sorted(units_dir(results).glob("*.csv")):
        raw = path.read_bytes()
        if digests is not None:
            digests[path.stem] = hashlib.sha256(raw).hexdigest()
        frame = _parsed(path, raw, low_memory=False)
        frame["value"] = pd.to_numeric(frame["value"], errors="coerce")
        if EXPECTED in frame.columns:
            frame[EXPECTED] = pd.to_numeric(frame[EXPECTED], errors="coerce")
        out[path.stem] = frame
    return out


def _parsed(path: Path, raw: bytes, **options: object) -> pd.DataFrame:
    """The units table ``path`` held ``raw``; :class:`UnitsFileError` naming the file, what is wrong and the fix when
    it is not CSV or lacks one of the columns every units table has."""
    fix = f"Move it out of {path.parent} (the notebook that writes {path.stem} then writes it anew)."
    try:
        frame = pd.read_csv(io.BytesIO(raw), keep_default_na=False, **options)  # type: ignore[call-overload]
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        why = " ".join(str(exc).split())
        raise UnitsFileError(f"{path} cannot be read as a units table ({why}). {fix}") from None
    missing = [c for c in HEAD + UNIT_TAIL if c not in frame.columns]
    if missing:
        raise UnitsFileError(
            f"{path} lacks the column{'s' if len(missing) > 1 else ''} {', '.join(missing)} that every units table has "
            f"({', '.join(HEAD + UNIT_TAIL)}). {fix}"
        )
    bad = sorted({str(src) for src in frame["source"] if not SOURCE_RE.match(str(src))})
    if bad:  # a source name reaches the report's prose and links: only the results contract's names are read
        shown = ", ".join(repr(b[:60]) for b in bad[:3])
        raise UnitsFileError(
            f"{path} names source{'s' if len(bad) > 1 else ''} {shown} outside the results contract (formal, "
            f"llm:<model>, sim:<name>, optionally +ppo:selfplay). {fix}"
        )
    return frame
