"""The reasoning tables as grids and figures (``coalition-matching-iclr-draft.txt`` §6.5: Tables 5 and 9's accuracy;
Appendix F.1: Tables 7 and 8's Agent Importance Score), ours beside the paper's values."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd


def wide_accuracy(table: pd.DataFrame) -> pd.DataFrame:
    """Accuracy (%) per method and model by task: ours with its 95% interval, and the paper's.

    Args:
        table: :func:`table5`'s (§6.5) or :func:`table9`'s (Appendix F.2) rows.
    """
    t = table[table["metric"] == "accuracy_pct"].copy()
    lo = table[table["metric"] == "accuracy_pct_ci_low"].set_index(["task", "model", "method"])["value"]
    hi = table[table["metric"] == "accuracy_pct_ci_high"].set_index(["task", "model", "method"])["value"]
    t = t.set_index(["task", "model", "method"])
    t["ours"] = [f"{v:.1f} [{lo[i]:.0f}-{hi[i]:.0f}]" for i, v in t["value"].items()]
    t["paper"] = t["paper_value"].map(lambda v: "" if pd.isna(v) else f"{v:.2f}")
    return t[["ours", "paper"]].unstack("task")


def importance_wide(table: pd.DataFrame) -> pd.DataFrame:
    """Importance per role (rows) without / with 2-ToM, ours and the paper's, and the relative change (%); a cell we
    did not run says "not run", one the paper does not print "not printed".

    Args:
        table: :func:`table7`'s or :func:`table8`'s rows (Appendix F.1).
    """
    t = table[table["metric"].isin(["importance_score", "importance_score_pct_change"])].copy()
    keys = [c for c in ("task", "role") if c in t.columns]
    t["column"] = t["method"] + np.where(t["metric"] == "importance_score", "", " % change")
    ours = t.pivot_table(index=keys, columns="column", values="value", aggfunc="first", dropna=False)
    paper = t.pivot_table(index=keys, columns="column", values="paper_value", aggfunc="first", dropna=False)

    def said(frame: pd.DataFrame, missing: str) -> pd.DataFrame:  # words, not NaN, for an empty cell
        return frame.round(3).astype(object).where(frame.notna(), missing)

    return pd.concat({"ours": said(ours, "not run"), "paper": said(paper, "not printed")}, axis=1)


def plot_importance(table: pd.DataFrame, benchmark: str) -> Any:
    """Bars of each role's importance without and with 2-ToM: ours (solid) beside the paper's (hatched).

    Args:
        table: :func:`table7`'s or :func:`table8`'s rows (Appendix F.1).
        benchmark: ``humaneval`` (Table 7) or ``mmlu`` (Table 8, one panel per subject).
    """
    import matplotlib.pyplot as plt

    t = table[(table["metric"] == "importance_score") & (table["benchmark"] == benchmark)]
    groups = sorted(t["task"].unique()) if "task" in t.columns else [None]
    fig, axes = plt.subplots(1, len(groups), figsize=(4.2 * len(groups), 3.4), squeeze=False, sharey=True)
    for ax, g in zip(axes[0], groups, strict=True):
        part = t if g is None else t[t["task"] == g]
        roles = list(dict.fromkeys(part["role"]))
        x = np.arange(len(roles))
        for j, (method, color) in enumerate((("dylan", "#4c72b0"), ("dylan_w_2tom", "#c44e52"))):
            m = part[part["method"] == method].set_index("role").reindex(roles)
            ax.bar(x + (j - 1) * 0.4 + 0.2 - 0.1, m["value"], 0.2, color=color, label=f"{method} (ours)")
            ax.bar(
                x + (j - 1) * 0.4 + 0.2 + 0.1,
                m["paper_value"],
                0.2,
                color=color,
                alpha=0.45,
                hatch="//",
                label=f"{method} (paper)",
            )
        ax.set_xticks(x, roles, rotation=45, ha="right", fontsize=8)
        ax.set_title(g or benchmark, fontsize=9)
    axes[0][0].set_ylabel("Agent Importance Score")
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    return fig
