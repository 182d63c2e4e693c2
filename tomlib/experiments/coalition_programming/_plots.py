"""The programming tables as grids and figures (``coalition-matching-iclr-draft.txt`` §6.3: Table 1, Fig. 2 with
its normalisation, and the FTM against §6.2's ε), ours beside the paper's values."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from tomlib.experiments.coalition_programming._presets import BENCHMARKS, PAPER_ID


def wide(table: pd.DataFrame, index: list[str], columns: list[str], metric: str) -> pd.DataFrame:
    """Our values of ``metric`` as a grid (e.g. benchmark × ToM order by model × round).

    Args:
        table: a table function's long form (e.g. :func:`table1`).
        index: the columns down the side.
        columns: the columns across the top.
        metric: the metric shown (e.g. ``ftm``, §6.2).
    """
    t = table[table["metric"] == metric]
    return t.pivot_table(index=index, columns=columns, values="value", aggfunc="first")


def paper_wide(
    table_id: str, index: list[str], columns: list[str], metric: str, *, draft: str | None = None
) -> pd.DataFrame:
    """The paper's values of ``metric`` in the same grid (one draft, or the first draft that printed the cell).

    Args:
        table_id: the paper's table (``table1``, ..., ``table12``).
        index: the columns down the side.
        columns: the columns across the top.
        metric: the metric shown (e.g. ``ftm``, §6.2).
        draft: ``iclr`` or ``neurips`` (None: the first draft that printed the cell).
    """
    from tomlib.report import paper_table

    t = paper_table(PAPER_ID, table_id, draft=draft)
    t = t[t["metric"] == metric]
    return t.pivot_table(index=index, columns=columns, values="value", aggfunc="first")


def plot_table1(table: pd.DataFrame) -> Any:
    """Table 1 (§6.3) as bars: FTM at round 1 and 5 for PM ToM 1 vs 2, ours (one bar group per model) beside the
    paper's five models.

    Args:
        table: :func:`table1`'s rows (any number of models).
    """
    import matplotlib.pyplot as plt

    from tomlib.report import paper_table

    paper = paper_table(PAPER_ID, "table1", draft="iclr")
    paper = paper[paper["metric"] == "ftm"].assign(source="paper")
    ours = table[table["metric"] == "ftm"].copy()
    both = pd.concat([ours, paper], ignore_index=True)
    both["value"] = pd.to_numeric(both["value"])
    both["who"] = both["model"] + np.where(both["source"] == "paper", " (paper)", " (ours)")
    fig, axes = plt.subplots(1, 2, figsize=(12, 3.8), sharey=True)
    for ax, bench in zip(axes, BENCHMARKS, strict=True):
        sub = both[both["benchmark"] == bench]
        labels = list(dict.fromkeys(sub["who"]))
        x = np.arange(len(labels))
        for j, (k, r) in enumerate([(1, 1), (1, 5), (2, 1), (2, 5)]):
            vals = [
                sub[
                    (sub["who"] == w) & (sub["tom_order"].astype(str) == str(k)) & (sub["round"].astype(str) == str(r))
                ]["value"].mean()
                for w in labels
            ]
            ax.bar(
                x + (j - 1.5) * 0.2,
                vals,
                0.2,
                label=f"k={k}, R={r}",
                color=("#90caf9", "#1565c0", "#ef9a9a", "#c62828")[j],
            )
        ax.set_xticks(x, labels, rotation=30, ha="right", fontsize=8)
        ax.set_title(bench)
        ax.set_ylabel("FTM (%)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper right", ncol=4, fontsize=8)
    fig.suptitle("Table 1: FTM of the PM, round 1 and 5, no matching")
    fig.tight_layout()
    return fig


def fig2_frame(table: pd.DataFrame, metric: str = "ftm") -> pd.DataFrame:
    """Fig. 2's normalisation (§6.3): every FTM divided by the same model's k = 1, round-1, no-matching FTM.

    Args:
        table: :func:`table2`'s rows, or the paper's.
        metric: the FTM measure normalised (:data:`FIG2_MEASURES`).
    """
    t = table[table["metric"] == metric].copy()
    t["value"] = pd.to_numeric(t["value"], errors="coerce")
    out = []
    for (_model, _tid, _source), part in t.groupby(["model", "table_id", "source"]):
        base = part[
            (part["tom_order"].astype(str) == "1")
            & (part["round"].astype(str) == "1")
            & (part["matching"] == "no_matching")
        ]
        b = float(base["value"].iloc[0]) if len(base) else float("nan")
        out.append(part.assign(normalized=part["value"] / b if b else float("nan"), baseline=b))
    return pd.concat(out, ignore_index=True) if out else t


FIG2_MEASURES = {
    "ftm": "FTM over all four engineers (§6.2's definition; no selection effect)",
    "ftm_team": "FTM over the PM's team (with matching, the coalition chosen from the same scores)",
}


def plot_fig2(table: pd.DataFrame, benchmark: str = "humaneval", metric: str = "ftm") -> Any:
    """Fig. 2: FTM over rounds normalised by each model's k = 1, round-1, no-matching FTM (§6.3); ours as lines
    over every round (``metric``: :data:`FIG2_MEASURES`, which share that baseline), the paper's models (Table 2 /
    6, rounds 1 and 5, its own measure) as thin segments.

    Args:
        table: :func:`table2`'s rows (Table 2 for HumanEval, Table 6 for MBPP).
        benchmark: ``humaneval`` (Fig. 2, Table 2) or ``mbpp`` (Appendix B, Table 6).
        metric: the FTM measure (:data:`FIG2_MEASURES`; §6.2's is ``ftm``).
    """
    import matplotlib.pyplot as plt

    from tomlib.report import paper_table

    if metric not in FIG2_MEASURES:
        raise ValueError(f"metric must be one of {', '.join(FIG2_MEASURES)}; got {metric!r}")
    table_id = "table2" if benchmark == "humaneval" else "table6"
    ours = fig2_frame(table[table["table_id"] == table_id], metric)
    paper = paper_table(PAPER_ID, table_id)
    paper = paper[paper["metric"] == "ftm"].drop_duplicates(["model", "matching", "tom_order", "round"])
    paper = fig2_frame(paper.assign(table_id=table_id, source="paper"))
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6), sharey=True)
    missing: set[str] = set()
    for ax, setting, title in zip(
        axes, ("no_matching", "matching"), ("(a) w.o. matching", "(b) w. stable matching"), strict=True
    ):
        for k, color in ((1, "#1565c0"), (2, "#c62828")):
            for _model, part in paper[
                (paper["matching"] == setting) & (paper["tom_order"].astype(str) == str(k))
            ].groupby("model"):
                part = part.sort_values("round", key=lambda r: r.astype(int))
                ax.plot(part["round"].astype(int), part["normalized"], color=color, alpha=0.25, lw=1)
            for (model, _source), part in ours[
                (ours["matching"] == setting) & (ours["tom_order"].astype(str) == str(k))
            ].groupby(["model", "source"]):
                part = part.sort_values("round", key=lambda r: r.astype(int))
                if not np.isfinite(part["normalized"].astype(float)).any():
                    missing.add(model)
                    continue
                ax.plot(
                    part["round"].astype(int),
                    part["normalized"],
                    color=color,
                    marker="o",
                    lw=2,
                    label=f"{k}-ToM, ours ({model})",
                )
        ax.axhline(1.0, color="#999", lw=0.8, ls=":")
        ax.set_title(title)
        ax.set_xlabel("round")
        ax.set_xticks(range(1, 6))
    axes[0].set_ylabel("FTM / FTM(k=1, round 1, no matching)")
    axes[0].plot([], [], color="#1565c0", alpha=0.35, label="1-ToM, the paper's models (rounds 1, 5)")
    axes[0].plot([], [], color="#c62828", alpha=0.35, label="2-ToM, the paper's models (rounds 1, 5)")
    axes[0].legend(fontsize=8)
    if missing:
        axes[0].text(
            0.02,
            0.03,
            f"ours ({', '.join(sorted(missing))}): the ToM-1, round-1, no-matching FTM is 0, so nothing\n"
            "can be divided by it; the raw FTM is in the table above",
            transform=axes[0].transAxes,
            fontsize=7,
            color="#555",
        )
    fig.suptitle(f"Fig. 2 ({benchmark}): cooperative trend, normalised per model. Ours: {FIG2_MEASURES[metric]}")
    fig.tight_layout()
    return fig


def plot_ftm_epsilon(frame: pd.DataFrame, benchmark: str = "humaneval") -> Any:
    """FTM against ε for PM ToM 1 and 2, with and without matching: the paper's measure (dashed) beside the
    selection-free ones; ε = 0.25 (ours) marked.

    Args:
        frame: :func:`ftm_vs_epsilon`'s rows.
        benchmark: ``humaneval`` or ``mbpp`` (§6.1).
    """
    import matplotlib.pyplot as plt

    f = frame[(frame["benchmark"] == benchmark) & (frame["eng_tom"] == 0)]
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6), sharey=True)
    for ax, setting in zip(axes, ("no_matching", "matching"), strict=True):
        for k, color in ((1, "#1565c0"), (2, "#c62828")):
            part = f[(f["matching"] == setting) & (f["pm_tom"] == k)].groupby("epsilon").mean(numeric_only=True)
            if part.empty:
                continue
            ax.plot(part.index, part["ftm"], color=color, lw=2, label=f"ToM-{k}: over all four (§6.2)")
            if setting == "matching":
                ax.plot(part.index, part["ftm_next"], color=color, lw=1.5, ls=":", label=f"ToM-{k}: team, next round")
                ax.plot(part.index, part["ftm_team"], color=color, lw=1, ls="--", label=f"ToM-{k}: team")
        ax.axvline(0.25, color="grey", lw=0.8)
        ax.text(0.255, 2, "ε = 0.25 (ours)", fontsize=7, color="grey")
        ax.set_title(f"{benchmark}: {setting.replace('_', ' ')}", fontsize=9)
        ax.set_xlabel("ε (trusted iff φ = (1 - s)/2 ≤ ε)")
        ax.set_ylim(0, 105)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("FTM (%)")
    fig.tight_layout()
    return fig
