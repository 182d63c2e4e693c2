"""Seaborn figures for paper-vs-ours comparisons."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from tomlib.paths import results_dir

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def plot_compare(side: pd.DataFrame, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """Ours against the paper, one point per cell, coloured by source; the diagonal is perfect agreement."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    data = side.dropna(subset=["paper", "ours"])
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 5))
    if data.empty:
        ax.text(0.5, 0.5, "no cell has both a paper and a reproduced value", ha="center", va="center")
        ax.set_axis_off()
        return ax
    sns.scatterplot(data=data, x="paper", y="ours", hue="source", style="metric", ax=ax, s=45, alpha=0.8)
    lo = float(min(data["paper"].min(), data["ours"].min()))
    hi = float(max(data["paper"].max(), data["ours"].max()))
    pad = 0.05 * (hi - lo or 1.0)
    ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="grey", lw=1, ls="--", zorder=0)
    ax.set_xlabel("paper")
    ax.set_ylabel("ours")
    if title:
        ax.set_title(title)
    return ax


def save_figure(fig: Figure, name: str, results: str | os.PathLike[str] | None = None) -> Path:
    """Save ``fig`` as ``results/figures/<name>.png`` (name like ``adaptive_tom.fig3``) and return the path."""
    if not name or "/" in name or name.endswith(".png"):
        raise ValueError(f"figure name must be a bare name like 'adaptive_tom.fig3', got {name!r}")
    out = results_dir(results) / "figures" / f"{name}.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120, bbox_inches="tight")
    return out
