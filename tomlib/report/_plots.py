"""Seaborn figures for paper-vs-ours comparisons."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from tomlib.images import save_png
from tomlib.paths import results_for_writing

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.legend import Legend
    from matplotlib.text import Text
    from matplotlib.transforms import Bbox


def plot_compare(side: pd.DataFrame, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """Ours against the paper, one point per cell, coloured by source; the diagonal is perfect agreement.

    Args:
        side: a :func:`tomlib.report.compare` frame (``paper``, ``ours``, ``source``, ``metric``).
        ax: the axes to draw on; None draws a new 5×5 figure.
        title: the axes' title, if any.
    """
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


def _shown(text: Text) -> bool:
    return bool(text.get_visible() and text.get_text().strip() and text.get_alpha() != 0)


def _tick_labels(ax: Axes) -> list[Text]:
    """The tick labels an axes draws: those of ticks inside its view (matplotlib keeps labels of others around)."""
    out: list[Text] = []
    for axis in (ax.xaxis, ax.yaxis):
        if not axis.get_visible():
            continue
        lo, hi = sorted(axis.get_view_interval())
        span = (hi - lo) * 1e-9
        for ticks, locs in (
            (axis.get_major_ticks, axis.get_majorticklocs()),
            (axis.get_minor_ticks, axis.get_minorticklocs()),
        ):
            for tick, loc in zip(ticks(len(locs)), locs, strict=False):
                if lo - span <= loc <= hi + span and tick.get_visible():
                    out += [t for t in (tick.label1, tick.label2) if t.get_visible()]
    return [t for t in out if _shown(t)]


def _texts(fig: Figure) -> list[tuple[str, Text]]:
    """Every text a legend could hide, named: the figure's titles and texts, each axes' titles, axis labels, tick
    labels and annotations (a legend's own texts are its own)."""
    out: list[tuple[str, Text]] = [("suptitle", t) for t in (fig._suptitle, fig._supxlabel, fig._supylabel) if t]
    out += [("figure text", t) for t in fig.texts if all(t is not s for _, s in out)]
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        out += [(f"axes {i} title", t) for t in (ax.title, ax._left_title, ax._right_title)]
        out += [(f"axes {i} label", t) for t in (ax.xaxis.label, ax.yaxis.label)]
        out += [(f"axes {i} tick label", t) for t in _tick_labels(ax)]
        out += [(f"axes {i} text", t) for t in ax.texts]
    return [(what, t) for what, t in out if _shown(t)]


def _data_under(ax: Axes, box: Bbox) -> list[str]:
    """What of ``ax``'s data ``box`` (display pixels) lies on: a line's segments or markers, a bar or patch, a
    scatter point. Shaded bands and images are not counted (a legend over them hides nothing that is read)."""
    from matplotlib.collections import PathCollection

    found = []
    for line in ax.lines:
        if not line.get_visible():
            continue
        path = line.get_transform().transform_path(line.get_path())
        if line.get_linestyle() in ("None", "", " "):
            hit = any(box.contains(x, y) for x, y in path.vertices)
        else:
            hit = path.intersects_bbox(box, filled=False)
        if hit:
            found.append(f"line {line.get_label()!r}")
    for patch in ax.patches:
        extent = patch.get_window_extent()
        if patch.get_visible() and extent.width >= 0.5 and extent.height >= 0.5 and box.overlaps(extent):
            found.append(f"{type(patch).__name__.lower()} {patch.get_label()!r}")
    for coll in ax.collections:
        if isinstance(coll, PathCollection) and coll.get_visible() and len(coll.get_offsets()):
            points = coll.get_offset_transform().transform(coll.get_offsets())
            if any(box.contains(x, y) for x, y in points):
                found.append(f"points {coll.get_label()!r}")
    return found


def _legends(fig: Figure) -> list[Legend]:
    from matplotlib.legend import Legend

    return [leg for leg in fig.findobj(Legend) if leg.get_visible()]


def _covers(fig: Figure) -> list[tuple[int, str]]:
    """(legend number, what it covers) for every overlap in ``fig`` as drawn (not drawn when it has no legend)."""
    legends = _legends(fig)
    if not legends:
        return []
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    boxes = [(leg, leg.get_window_extent(renderer)) for leg in legends]
    texts = [(what, t, t.get_window_extent(renderer)) for what, t in _texts(fig)]
    found: list[tuple[int, str]] = []
    for n, (leg, box) in enumerate(boxes):
        inner = box.padded(-1.0)  # touching is not covering
        own = leg.axes.get_position().bounds if leg.axes is not None else None
        found += [(n, f"{what} {t.get_text()!r}") for what, t, extent in texts if inner.overlaps(extent)]
        found += [(n, f"legend {m}") for m, (_, other) in enumerate(boxes) if m != n and inner.overlaps(other)]
        for i, ax in enumerate(fig.axes):
            if not (ax.get_visible() and ax.axison):
                continue
            if ax.get_position().bounds != own:  # not its own axes (nor their twins): any of it
                if inner.overlaps(ax.get_window_extent(renderer)):
                    found.append((n, f"the plotting area of axes {i}"))
            else:  # its own: their data
                found += [(n, f"axes {i} {what}") for what in _data_under(ax, inner)]
    return found


def legend_overlaps(fig: Figure) -> list[str]:
    """What each legend of ``fig`` covers as drawn: a title, an axis or tick label, a text, another legend, its own
    axes' data (lines, bars, points), or another axes' plotting area (a figure's legend: any axes'). Empty when it
    covers nothing.

    Args:
        fig: the figure, drawn as it stands.
    """
    return _described(fig, _covers(fig))


def _described(fig: Figure, covers: list[tuple[int, str]]) -> list[str]:
    legends = _legends(fig)
    return [
        f"legend {n} ({', '.join(t.get_text() for t in legends[n].get_texts()[:3])}) covers {what}"
        for n, what in covers
    ]


def _below_everything(fig: Figure, leg: Legend) -> None:
    """Hang ``leg`` from the figure, centred under every axes, text and other legend (``bbox_inches="tight"``, as
    :func:`save_figure` saves, makes room for it)."""
    renderer = fig.canvas.get_renderer()
    boxes = [ax.get_tightbbox(renderer) for ax in fig.axes if ax.get_visible()]
    boxes += [t.get_window_extent(renderer) for _, t in _texts(fig)]
    boxes += [other.get_window_extent(renderer) for other in _legends(fig) if other is not leg]
    bottom = min((b.y0 for b in boxes if b is not None), default=0.0)
    leg.set_bbox_to_anchor((0.5, (bottom - 6) / fig.bbox.height), transform=fig.transFigure)
    leg.set_loc("upper center")


def _best(fig: Figure, leg: Legend) -> None:
    """Inside its own axes, where matplotlib finds the least of their data under it."""
    leg.set_bbox_to_anchor(None)
    leg.set_loc("best")


def _beside(fig: Figure, leg: Legend) -> None:
    """Outside ``leg``'s own axes, on their right, top-aligned."""
    leg.set_bbox_to_anchor((1.02, 1.0), transform=leg.axes.transAxes)
    leg.set_loc("upper left")


def tidy_legends(fig: Figure) -> list[str]:
    """Move each legend that covers something (:func:`legend_overlaps`) to where it covers nothing: an axes' legend
    to the best place inside its axes, else outside them on the right, else (like a figure's legend) under the whole
    figure. Returns what still overlaps: nothing, unless the figure has no room anywhere.

    Args:
        fig: the figure whose legends are moved (in place).
    """
    found: list[tuple[int, str]] | None = None  # what the legends cover as the figure stands (a draw each time)
    for n, leg in enumerate(_legends(fig)):
        moves = ([_best, _beside] if leg.axes is not None else []) + [_below_everything]
        for move in moves:
            found = _covers(fig) if found is None else found
            if not any(k == n for k, _ in found):
                break
            move(fig, leg)
            found = None
    return _described(fig, _covers(fig) if found is None else found)


def save_figure(fig: Figure, name: str, results: str | os.PathLike[str] | None = None) -> Path:
    """Save ``fig`` as ``results/figures/<name>.png`` (name like ``adaptive_tom.fig3``) and return the path. A legend
    that covers a title, a label or data is moved off it first (:func:`tidy_legends`), in the notebook's figure too.

    Args:
        fig: the figure (its legends may move, in the notebook's figure too).
        name: ``<paper_id>.<figure_id>`` with no ``/`` and no ``.png``; REPORT shows it under the table of that
            name, or under the paper when no table claims it.
        results: the results folder; None for the configured one.
    """
    if not name or "/" in name or name.endswith(".png"):
        raise ValueError(f"figure name must be a bare name like 'adaptive_tom.fig3', got {name!r}")
    out = results_for_writing(results) / "figures" / f"{name}.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    tidy_legends(fig)
    save_png(fig, out, dpi=120, bbox_inches="tight")  # with a palette: the same picture at about a third
    return out
