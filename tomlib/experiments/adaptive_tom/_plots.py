"""The adaptive-ToM notebooks' figures."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from tomlib.experiments.adaptive_tom._setup import (
    load_task,
)


def plot_tie_sensitivity(frame: pd.DataFrame) -> Any:
    """Each cell against ε (log-spaced axis from 0), the paper's value as a marker of the same colour at the right.

    Args:
        frame: :func:`tie_sensitivity`'s cells.
    """
    import matplotlib.pyplot as plt

    tables = list(dict.fromkeys(frame["table"]))
    fig, axes = plt.subplots(1, len(tables), figsize=(5.6 * len(tables), 3.6), squeeze=False)
    for ax, name in zip(axes[0], tables, strict=True):
        part = frame[frame["table"] == name]
        for i, (cell, rows) in enumerate(part.groupby("cell", sort=False)):
            color = f"C{i}"
            ax.plot(rows["epsilon"], rows["value"], marker="o", ms=3, color=color, label=cell)
            ax.scatter([1.08], [rows["paper_value"].iloc[0]], marker="D", color=color, clip_on=False, zorder=3)
        ax.set_xscale("symlog", linthresh=0.025, linscale=0.5)
        ticks = [0, 0.025, 0.05, 0.1, 0.2, 0.5, 1]
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        ax.minorticks_off()
        ax.set_xlim(0, 1.15)
        ax.set_xlabel("ε, the chance a tie is drawn independently (0: shared, 1: independent)", fontsize=8)
        ax.set_ylabel("points")
        ax.set_title(f"{name} (◆ the paper)", fontsize=9)
        ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig


def plot_prefer_sensitivity(frame: pd.DataFrame) -> Any:
    """Each task's cells (Tables 1-3) under each preference among equally good moves (bars), the paper's value marked
    (◆); one panel per task.

    Args:
        frame: :func:`prefer_sensitivity`'s cells.
    """
    import matplotlib.pyplot as plt
    import numpy as np

    part = frame[frame["table"].isin(["table1", "table2", "table3"])]
    tasks = list(dict.fromkeys(part["task"]))
    if not tasks:  # a run of the matrix games only: no move is a step toward anything
        fig, ax = plt.subplots(figsize=(6.0, 1.2))
        ax.text(0.5, 0.5, "no grid or kitchen task in this run: nothing for a preference to decide", ha="center")
        ax.set_axis_off()
        return fig
    prefers = list(dict.fromkeys(part["prefer"]))
    widest = max((part[part["task"] == t]["cell"].nunique() for t in tasks), default=1)
    fig, axes = plt.subplots(len(tasks), 1, figsize=(max(6.0, 0.45 * widest + 2), 3.4 * len(tasks)), squeeze=False)
    for ax, task in zip(axes[:, 0], tasks, strict=True):
        mine = part[part["task"] == task]
        cells = list(dict.fromkeys(mine["cell"]))
        x = np.arange(len(cells))
        width = 0.8 / max(1, len(prefers))
        for i, prefer in enumerate(prefers):
            vals = mine[mine["prefer"] == prefer].set_index("cell")["value"].reindex(cells)
            ax.bar(x + (i - (len(prefers) - 1) / 2) * width, vals, width, label=f"prefer={prefer}")
        paper = mine.groupby("cell", sort=False)["paper"].first().reindex(cells)
        ax.scatter(x, paper, marker="D", color="black", zorder=3, label="the paper")
        ax.set_xticks(x, cells, rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("time (steps) ↓")
        ax.set_title(f"{task}: formal cells under each preference among equally good moves", fontsize=9)
        ax.legend(fontsize=7, ncols=len(prefers) + 1, loc="upper left")
    fig.tight_layout()
    return fig


LAYOUT_CELLS: dict[str, tuple[str, str]] = {
    "#": ("#4a4a4a", ""),
    "X": ("#8d6e63", "counter"),
    ".": ("#f5f5f5", ""),
    " ": ("#f5f5f5", ""),
    "1": ("#bbdefb", "1"),
    "2": ("#ffcdd2", "2"),
    "a": ("#e3f2fd", "goal 1"),
    "b": ("#ffebee", "goal 2"),
    "P": ("#ffb74d", "pot"),
    "O": ("#fff176", "onion"),
    "D": ("#cfd8dc", "dish"),
    "S": ("#a5d6a7", "serve"),
}
"""How each map character is drawn: colour and label (walls, floor, players 1/2 and their goals, kitchen parts)."""


def plot_layouts(tasks: Sequence[str] = ("game1", "game2", "overcooked")) -> Any:
    """The start state of each task's map as a picture: our layouts (the paper's Fig. 2 is not in its text).

    Args:
        tasks: the tasks drawn (§4.1's grid worlds and Overcooked by default).
    """
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgb

    fig, axes = plt.subplots(1, len(tasks), figsize=(3.2 * len(tasks), 3.0), squeeze=False)
    for ax, task in zip(axes[0], tasks, strict=True):
        game = load_task(task)
        rows = game.render(game.reset(0)).splitlines()
        width = max(len(r) for r in rows)
        rows = [r.ljust(width) for r in rows]
        ax.imshow([[to_rgb(LAYOUT_CELLS.get(ch, ("#ffffff", ""))[0]) for ch in r] for r in rows])
        for y, r in enumerate(rows):
            for x, ch in enumerate(r):
                label = LAYOUT_CELLS.get(ch, ("", ch))[1]
                if label:
                    big = label in ("1", "2")
                    ax.text(
                        x, y, label, ha="center", va="center", fontsize=12 if big else 6, weight="bold" if big else None
                    )
        ax.set_xticks(range(width))
        ax.set_yticks(range(len(rows)))
        ax.tick_params(labelsize=6, length=0)
        ax.set_title(task, fontsize=9)
    fig.suptitle("Our layouts at the start of an episode (1, 2: the players)", fontsize=9)
    fig.tight_layout()
    return fig


def plot_pairs(table: pd.DataFrame, source: str, *, title: str = "") -> Any:
    """One heatmap per task: player 1 × player 2, coloured by our mean, annotated "ours (paper)".

    Args:
        table: a fixed-order table (:func:`table1`, :func:`table4`; §5.1, §6.2).
        source: the rows drawn (``formal`` or ``llm:<model>``).
        title: the figure's title (default none).
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    df = table[(table["source"] == source) & ~table["metric"].str.endswith("_sd")]
    tasks = [t for t in dict.fromkeys(df["task"]) if df[df["task"] == t]["value"].notna().any()]
    if not tasks:
        raise ValueError(f"no reproduced cells for source {source!r}")
    fig, axes = plt.subplots(1, len(tasks), figsize=(3.4 * len(tasks), 3.2), squeeze=False)
    for ax, task in zip(axes[0], tasks, strict=True):
        part = df[df["task"] == task]
        ours = part.pivot(index="player1", columns="player2", values="value")
        paper = part.pivot(index="player1", columns="player2", values="paper_value").reindex_like(ours)
        notes = ours.map(lambda v: f"{v:.1f}") + paper.map(lambda v: "" if pd.isna(v) else f"\n({v:.1f})")
        higher = part["metric"].iloc[0] == "point"
        cmap = "viridis" if higher else "viridis_r"
        sns.heatmap(ours, annot=notes, fmt="", cmap=cmap, cbar=False, ax=ax, vmin=0, vmax=75 if higher else None)
        ax.set_title(f"{task} ({'points ↑' if higher else 'time ↓'})")
        ax.set_xlabel("player 2")
        ax.set_ylabel("player 1")
    fig.suptitle(title or f"{source}: ours (paper in parentheses)")
    fig.tight_layout()
    return fig


def plot_fig3(table: pd.DataFrame) -> Any:
    """Normalized expert weights P^(k) over steps, one panel per task and partner (the paper's Fig. 3).

    Args:
        table: :func:`fig3`'s table (§5.3).
    """
    import seaborn as sns
    from matplotlib.ticker import MaxNLocator

    experts = sorted(table["expert"].unique())
    grid = sns.relplot(
        data=table,
        x="step",
        y="value",
        hue="expert",
        hue_order=experts,
        # experts with equal weights overlap: a width, a dash pattern and a marker per expert keep every line seen
        style="expert",
        size="expert",
        sizes={e: 4.5 - 3.0 * i / max(1, len(experts) - 1) for i, e in enumerate(experts)},  # first drawn widest
        dashes=True,
        markers=True,
        col="player2",
        row="task",
        kind="line",
        height=2.6,
        aspect=1.4,
        alpha=0.85,
        facet_kws={"sharex": False},
    )
    for ax in grid.axes.flat:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # steps are whole
    grid.set_axis_labels("step", "normalized expert weight")
    grid.set_titles("{row_name}: A-ToM (Hedge) with {col_name}")
    return grid.figure


def plot_fig3_episode(frame: pd.DataFrame) -> Any:
    """One panel per partner: P^(0), P^(1), P^(2) over one episode's steps, a star at the first update.

    Args:
        frame: :func:`fig3_episode`'s weights of one episode.
    """
    import matplotlib.pyplot as plt

    partners = list(dict.fromkeys(frame["player2"]))
    fig, axes = plt.subplots(1, len(partners), figsize=(5.2 * len(partners), 3.2), squeeze=False, sharey=True)
    for ax, partner in zip(axes[0], partners, strict=True):
        part = frame[frame["player2"] == partner]
        for i, (expert, rows) in enumerate(part.groupby("expert", sort=True)):
            ax.plot(rows["step"], rows["value"], color=f"C{i}", lw=2.2 - 0.5 * i, label=f"P({expert})")
            moved = rows["first_update"].iloc[0]
            if pd.notna(moved):
                hit = rows[rows["step"].isin([moved, moved + 1])]
                ax.scatter(hit["step"], hit["value"], marker="*", s=90, color=f"C{i}", zorder=3)
        ax.set_title(
            f"{part['task'].iloc[0]}, episode {part['episode'].iloc[0]}: A-ToM (Hedge) with {partner}", fontsize=9
        )
        ax.set_xlabel("step")
        ax.set_ylim(-0.03, 1.03)
    axes[0][0].set_ylabel("normalized expert weight")
    axes[0][-1].legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_atom(table: pd.DataFrame, source: str) -> Any:
    """Table 2 as bars: ours next to the paper for every A-ToM pairing, one panel per algorithm and task.

    Args:
        table: :func:`table2`'s table (§5.2).
        source: the rows drawn (``formal`` or ``llm:<model>``).
    """
    import seaborn as sns

    df = table[(table["source"] == source) & ~table["metric"].str.endswith("_sd")].dropna(subset=["value"])
    if df.empty:
        raise ValueError(f"no reproduced cells for source {source!r}")
    df = df.assign(pair=df["player1"] + " vs " + df["player2"])
    long = pd.concat(
        [df.assign(who="ours", score=df["value"]), df.assign(who="paper", score=df["paper_value"])], ignore_index=True
    )
    grid = sns.catplot(
        data=long,
        x="score",
        y="pair",
        hue="who",
        col="task",
        row="algorithm",
        kind="bar",
        height=2.8,
        aspect=1.1,
        sharex=False,
        palette={"ours": "#4c72b0", "paper": "#c0c0c0"},
    )
    grid.set_titles("{row_name} · {col_name}")
    grid.set_axis_labels("points ↑ / time ↓", "")
    return grid.figure
