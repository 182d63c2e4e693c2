"""The results contract and the papers' reference tables.

Every reproduced table is a long-form CSV ``results/tables/<paper_id>.<table_id>.csv`` with columns
``paper_id, table_id, <condition columns…>, metric, value, source, paper_value`` (plus an optional
``note``). ``source`` says where each number comes from: ``paper``, ``formal``, ``llm:<model>`` or ``sim:<model>``,
with ``+ppo:selfplay`` appended when the PPO stand-in for the adaptive-ToM paper's PBT partner played in the cell.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd

from tomlib.paths import ENV_TABLES_MANIFEST, data_dir, results_dir, results_for_writing, write_atomic

PAPER_IDS = ("coalition", "adaptive_tom", "tom_ib")
HEAD = ["paper_id", "table_id"]
TAIL = ["metric", "value", "source", "paper_value"]
OPTIONAL = ["note"]
PAPER_ONLY = ["draft_table"]
SOURCE_RE = re.compile(r"^(paper|formal|(llm|sim):[A-Za-z0-9._\-/:@]+)(\+ppo:selfplay)?$")
"""A source, and ``+ppo:selfplay`` when the PPO stand-in for PBT played in the cell's episodes."""
_ID_RE = re.compile(r"^[a-z0-9_]+$")


class ResultsContractError(ValueError):
    """A results table that does not follow the contract; the message lists every problem."""


def paper_tables_dir() -> Path:
    return data_dir() / "paper_tables"


def paper_table_index(paper_id: str | None = None) -> pd.DataFrame:
    """Captions, sections and transcription notes of every transcribed table.

    Args:
        paper_id: one paper's tables; None for every paper's.
    """
    files = sorted(paper_tables_dir().glob(f"{paper_id or '*'}.index.csv"))
    if not files:
        return pd.DataFrame(
            columns=["paper_id", "table_id", "draft", "draft_table", "caption", "section", "n_values", "notes"]
        )
    return pd.concat([pd.read_csv(f, dtype=str, keep_default_na=False) for f in files], ignore_index=True)


def paper_table(paper_id: str, table_id: str, *, draft: str | None = None) -> pd.DataFrame:
    """A transcribed paper table (source ``paper``); ``draft`` selects one draft of the coalition paper.

    Args:
        paper_id: the paper.
        table_id: the table as the paper numbers it (``table1``, ``fig5``).
        draft: one draft of the coalition paper (``iclr``, ``neurips``); None keeps every draft's rows.
    """
    path = paper_tables_dir() / f"{paper_id}.{table_id}.csv"
    if not path.exists():
        known = sorted(p.name.split(".")[1] for p in paper_tables_dir().glob(f"{paper_id}.*.csv"))
        known = [k for k in known if k != "index"]
        raise FileNotFoundError(
            f"No transcribed table {paper_id}.{table_id} in {paper_tables_dir()}; "
            f"transcribed tables of '{paper_id}': {', '.join(known) or '(none)'}."
        )
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    df["value"] = pd.to_numeric(df["value"])
    if draft is not None:
        df = df[df["draft"] == draft].reset_index(drop=True)
    return df


def condition_columns(df: pd.DataFrame) -> list[str]:
    """The columns that name a condition (everything but the fixed head, tail and notes).

    Args:
        df: a results or paper table.
    """
    fixed = set(HEAD + TAIL + OPTIONAL + PAPER_ONLY)
    return [c for c in df.columns if c not in fixed]


def validate_results(df: pd.DataFrame, *, where: str = "results table") -> None:
    """Raise ResultsContractError listing every way ``df`` breaks the results contract.

    Args:
        df: the rows to check.
        where: what they are, for the message.
    """
    problems = []
    missing = [c for c in HEAD + TAIL if c not in df.columns]
    if missing:
        problems.append(f"missing column(s) {missing}")
    else:
        if list(df.columns[:2]) != HEAD:
            problems.append("the first columns must be paper_id, table_id")
        bad_paper = sorted(set(df["paper_id"]) - set(PAPER_IDS))
        if bad_paper:
            problems.append(f"unknown paper_id(s) {bad_paper}; use one of {PAPER_IDS}")
        bad_ids = sorted({t for t in df["table_id"].astype(str) if not _ID_RE.match(t)})
        if bad_ids:
            problems.append(f"table_id must be lowercase like 'table1' or 'fig5'; got {bad_ids}")
        bad_src = sorted({s for s in df["source"].astype(str) if not SOURCE_RE.match(s)})
        if bad_src:
            problems.append(
                f"source must be 'paper', 'formal', 'llm:<model>' or 'sim:<model>' (optionally + '+ppo:selfplay'); "
                f"got {bad_src}"
            )
        values = pd.to_numeric(df["value"], errors="coerce")
        notes = df["note"].fillna("").astype(str) if "note" in df.columns else pd.Series("", index=df.index)
        unexplained = values.isna() & (notes == "")
        if unexplained.any():
            problems.append(f"{int(unexplained.sum())} row(s) have no numeric value and no note saying why")
        keys = [*condition_columns(df), "metric", "source"]
        dup = df.duplicated(subset=["paper_id", "table_id", *keys], keep=False)
        if dup.any():
            problems.append(f"{int(dup.sum())} rows repeat the same conditions, metric and source")
    if problems:
        raise ResultsContractError(f"{where} breaks the results contract: " + "; ".join(problems))


def _key_frame(df: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    return df[cols].astype(str).apply(lambda s: s.str.strip())


def attach_paper_values(df: pd.DataFrame) -> pd.DataFrame:
    """Fill ``paper_value`` from the transcribed table, joining on the shared condition columns + metric.

    Args:
        df: reproduced rows; sim rows are never given a paper value.
    """
    out = df.copy()
    out["paper_value"] = np.nan
    for (paper_id, table_id), idx in out.groupby(["paper_id", "table_id"]).groups.items():
        try:
            ref = paper_table(str(paper_id), str(table_id))
        except FileNotFoundError:
            continue
        shared = [c for c in condition_columns(ref) if c in out.columns] + ["metric"]
        sub = out.loc[idx]
        left = _key_frame(sub, shared)
        right = _key_frame(ref, shared).assign(_paper=ref["value"].to_numpy())
        ambiguous = right.groupby(shared)["_paper"].nunique()
        ambiguous = ambiguous[ambiguous > 1]
        if len(ambiguous):
            extra = [c for c in condition_columns(ref) if c not in out.columns]
            raise ResultsContractError(
                f"{paper_id}.{table_id}: {len(ambiguous)} condition(s) match several paper values; add the "
                f"column(s) {extra} to the reproduced rows to say which one is meant."
            )
        right = right.drop_duplicates(subset=shared)
        merged = left.reset_index().merge(right, on=shared, how="left").set_index("index")
        out.loc[idx, "paper_value"] = merged["_paper"].to_numpy()
    out.loc[out["source"].astype(str).str.startswith("sim:"), "paper_value"] = np.nan  # never beside the paper
    return out


def order_columns(df: pd.DataFrame) -> pd.DataFrame:
    """Contract column order: head, conditions, tail, notes.

    Args:
        df: a results table.
    """
    extra = [c for c in OPTIONAL if c in df.columns]
    return df[HEAD + condition_columns(df) + TAIL + extra]


def _note_written(names: list[str]) -> None:
    """Tell the runner which tables this run wrote (apart from whether the notebook went on to complete)."""
    manifest = os.environ.get(ENV_TABLES_MANIFEST)
    if manifest and names:
        with open(manifest, "a", encoding="utf-8") as fh:
            fh.write("".join(f"{n}\n" for n in names))


def write_table(df: pd.DataFrame, results: str | os.PathLike[str] | None = None) -> list[Path]:
    """Write reproduced rows as ``results/tables/<paper_id>.<table_id>.csv`` (one file per table).

    Args:
        df: reproduced rows of one or more tables, in the results contract (``paper_value`` is filled when absent).
        results: the results folder; None for the configured one.
    """
    if "paper_value" not in df.columns:
        df = attach_paper_values(df.assign(paper_value=np.nan))
    validate_results(df)
    out_dir = results_for_writing(results) / "tables"
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for (paper_id, table_id), part in df.groupby(["paper_id", "table_id"], sort=True):
        path = out_dir / f"{paper_id}.{table_id}.csv"
        empty = [c for c in condition_columns(part) if part[c].isna().all()]
        write_atomic(path, order_columns(part.drop(columns=empty)).to_csv(index=False))
        paths.append(path)
    _note_written([p.name[: -len(".csv")] for p in paths])
    return paths


def read_results(results: str | os.PathLike[str] | None = None) -> dict[str, pd.DataFrame]:
    """Every results table, keyed ``<paper_id>.<table_id>``.

    Args:
        results: the results folder; None for the configured one.
    """
    out_dir = results_dir(results) / "tables"
    return {p.name[: -len(".csv")]: pd.read_csv(p) for p in sorted(out_dir.glob("*.*.csv"))}


def compare(reproduced: pd.DataFrame, table_id: str | None = None, paper_id: str | None = None) -> pd.DataFrame:
    """Side by side: conditions, metric, source, paper, ours, difference (ours − paper).

    Args:
        reproduced: rows in the results contract.
        table_id: keep one table's rows; None keeps all.
        paper_id: keep one paper's rows; None keeps all.
    """
    df = reproduced
    if table_id is not None:
        df = df[df["table_id"] == table_id]
    if paper_id is not None:
        df = df[df["paper_id"] == paper_id]
    if df.empty:
        raise ValueError(f"no reproduced rows for table {paper_id or '*'}.{table_id or '*'}")
    if "paper_value" not in df.columns or df["paper_value"].isna().all():
        df = attach_paper_values(df)
    conds = condition_columns(df)
    side = df[["paper_id", "table_id", *conds, "metric", "source"]].copy()
    side["paper"] = df["paper_value"].astype(float)
    side["ours"] = pd.to_numeric(df["value"], errors="coerce")
    side["difference"] = side["ours"] - side["paper"]
    if "note" in df.columns:
        side["note"] = df["note"].fillna("")
    return side.reset_index(drop=True)


def side_by_side(table: pd.DataFrame, *, digits: int = 2) -> pd.DataFrame:
    """A readable wide view: one row per cell, one column per source plus ``paper``, each "mean (sd)".

    Metrics ``m`` and ``m_sd`` are folded into one "m" cell; notes show instead of a missing value, and a source
    that did not run a cell shows "not run".

    Args:
        table: one table's rows in the results contract.
        digits: decimals shown (the papers print two).
    """
    df = table.copy()
    df["value"] = pd.to_numeric(df["value"], errors="coerce")
    is_sd = df["metric"].str.endswith("_sd")
    base = df[~is_sd].copy()
    sd = df[is_sd].copy()
    sd["metric"] = sd["metric"].str.removesuffix("_sd")
    conds = [c for c in condition_columns(df) if c not in ("episodes_at_step",)]
    keys = [*conds, "metric", "source"]
    merged = base.merge(sd[[*keys, "value", "paper_value"]], on=keys, how="left", suffixes=("", "_sd"))

    def fmt(mean: float, spread: float) -> str:
        if pd.isna(mean):
            return ""
        return f"{mean:.{digits}f}" + ("" if pd.isna(spread) else f" ({spread:.{digits}f})")

    notes = merged["note"] if "note" in merged.columns else pd.Series("", index=merged.index)
    merged["cell"] = [
        fmt(m, s) or (str(n).split(":")[0] if isinstance(n, str) and n else "")
        for m, s, n in zip(merged["value"], merged["value_sd"], notes.fillna(""), strict=True)
    ]
    merged["paper_cell"] = [fmt(m, s) for m, s in zip(merged["paper_value"], merged["paper_value_sd"], strict=True)]
    first = merged.drop_duplicates([*conds, "metric"]).set_index([*conds, "metric"])
    wide = merged.set_index([*conds, "metric", "source"])["cell"].unstack("source").reindex(first.index)
    wide = wide.fillna("not run")  # a source that has no row for this cell (a note says "not reproduced" instead)
    wide.insert(0, "paper", first["paper_cell"])
    wide.columns.name = None
    return wide


def with_paper_models(layout: pd.DataFrame, paper_id: str, table_id: str) -> tuple[pd.DataFrame, list[str]]:
    """Where no row of ours has a paper value because the paper ran other models than ours, the paper's values per
    its own model (``paper: GPT-4o``) beside ours, matched on every other condition; and the models so shown.

    Args:
        layout: a :func:`side_by_side` view, its index reset.
        paper_id: the paper.
        table_id: the table.
    """
    if "model" not in layout.columns or layout["paper"].astype(str).str.strip().ne("").any():
        return layout, []
    try:
        paper = paper_table(paper_id, table_id)
    except FileNotFoundError:
        return layout, []
    keys = [c for c in layout.columns if c in paper.columns and c not in ("model", "value", "source", "paper")]
    if "model" not in paper.columns or "metric" not in keys:
        return layout, []
    paper = paper.assign(**{k: paper[k].astype(str) for k in keys})
    wide = paper.drop_duplicates([*keys, "model"]).pivot(index=keys, columns="model", values="value")
    models = [m for m in dict.fromkeys(paper["model"]) if m]
    wide = wide[models].rename(columns=lambda m: f"paper: {m}").reset_index()
    out = (
        layout.drop(columns="paper").assign(**{k: layout[k].astype(str) for k in keys}).merge(wide, on=keys, how="left")
    )
    out[[f"paper: {m}" for m in models]] = out[[f"paper: {m}" for m in models]].map(
        lambda v: "" if pd.isna(v) else f"{v:.2f}"
    )
    return out, models
