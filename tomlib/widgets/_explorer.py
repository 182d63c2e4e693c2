"""ipywidgets over run logs: a step-by-step trace explorer and a per-condition outcome summary.

Selecting an episode and moving through its steps happens in the browser (``jslink`` to ``Stack`` widgets), so an
executed notebook exported to HTML with its widget state stays browsable without a kernel for every episode already
drawn. Changing run, condition or agent needs Python; episodes not yet drawn are drawn when first selected
in a live kernel. Nothing is drawn before it is asked for, except the first ``prerender`` episodes of a condition.
"""

from __future__ import annotations

import html
import io
from collections.abc import Iterable, Sequence
from typing import Any

import ipywidgets as W
import pandas as pd
from ipywidgets.widgets.widget_string import HTMLStyle

from tomlib.errors import UsageError, did_you_mean
from tomlib.images import small_png
from tomlib.widgets._html import STYLE, step_html
from tomlib.widgets._trace import EpisodeRef, Trace, refs_of

ALL_AGENTS = "all agents"
UNITS = {"point": "points", "time": "steps", "health": "health"}
SHOWN = 8
"""Conditions named at most in the error for one the runs do not hold."""
NOT_DRAWN = (
    "<div style='padding:8px;color:#777'>This episode is not in this page: only the first {n} of this condition are. "
    "In a running kernel it is drawn when selected; <code>{command}</code> writes a page with all {total}.</div>"
)


NEEDS_KERNEL = "tomlib-needs-kernel"  # CSS class of controls that do nothing without a kernel
STATIC_ONLY = "tomlib-static-only"  # CSS class of what only a page without a kernel shows (what it does not hold)
FALLBACK = "tomlib-fallback"  # CSS class of the plain-HTML step shown where the widgets cannot be drawn
STATIC_PAGE_CSS = f"<style>.{NEEDS_KERNEL}{{display:none !important}}.{STATIC_ONLY}{{display:block !important}}</style>"
"""What a page without a kernel (an exported notebook, a ``tomlib view`` page) puts in its head: the controls that
need Python go, and the note of what the page does not hold, with the command that writes it, shows."""
VIEW = ".venv/bin/tomlib view"


def view_command(run: str, condition: str | None = None, episodes: int | None = None) -> str:
    """The ``tomlib view`` command that writes a page of ``run`` opened on ``condition`` with ``episodes`` drawn."""
    import shlex

    words = [VIEW, shlex.quote(run)]
    if condition is not None:
        words += ["--condition", shlex.quote(condition)]
    if episodes is not None:
        words += ["--episodes", str(episodes)]
    return " ".join(words)


def _as_trace(runs: Trace | pd.DataFrame | Iterable[Any] | None, results: str | None) -> Trace:
    if isinstance(runs, Trace):
        return runs
    if isinstance(runs, pd.DataFrame):
        return Trace(runs)
    return Trace.from_runs(runs, results=results)


class EpisodePane(W.VBox):
    """One episode: play button and step slider, linked in the browser to a stack of pre-drawn steps."""

    def __init__(self, trace: Trace, ref: EpisodeRef, agents: list[str] | None = None):
        self.ref = ref
        self.step_numbers = trace.steps(ref) or [0]
        # one layout and one style for every page: each widget of its own would save ~1.5 KB of defaults per step
        # in the notebook's widget state (and again in its HTML)
        look = {"layout": W.Layout(), "style": HTMLStyle()}
        pages = [W.HTML(step_html(trace.step(ref, s, agents), style=False), **look) for s in self.step_numbers]
        labels = [str(i + 1) for i in range(len(pages))]  # steps counted from 1, as in each page's header
        self.play = W.Play(value=0, min=0, max=len(pages) - 1, interval=700, description="play")
        self.slider = W.SelectionSlider(options=labels, index=0, description="step", continuous_update=True)
        self.pages = W.Stack(pages, selected_index=0)
        W.jslink((self.play, "value"), (self.slider, "index"))
        W.jslink((self.slider, "index"), (self.pages, "selected_index"))
        self.slider.observe(self._sync, "index")  # keeps the Python side right where jslink does not reach
        # the steps' style once for the pane, not once a step (~0.7 KB each in the widget state)
        super().__init__([W.HTML(STYLE, **look), W.HBox([self.play, self.slider]), self.pages])

    def _sync(self, change: dict[str, Any]) -> None:
        self.pages.selected_index = change["new"]
        self.play.value = change["new"]

    @property
    def shown(self) -> str:
        """The HTML of the step on screen, with its style."""
        return STYLE + self.pages.children[self.pages.selected_index or 0].value


class TraceExplorer(W.VBox):
    """Browse any experiment's episodes step by step (run → condition → episode → agent → step).

    ``runs``: a :class:`Trace`, a frame from :func:`tomlib.trace.load_runs`, run ids, or experiment results with a
    ``run_id`` (e.g. what :func:`tomlib.experiments.adaptive_tom.table1` returns); ``None`` loads every run. It opens
    on the first of ``conditions`` that a run holds (in the first run holding it), else on the first run's first
    condition; only the episodes it opens on are drawn.
    """

    def __init__(
        self,
        runs: Trace | pd.DataFrame | Iterable[Any] | None = None,
        *,
        results: str | None = None,
        prerender: int = 3,
        conditions: Sequence[str] = (),
    ):
        source = runs if runs is None or isinstance(runs, Trace | pd.DataFrame) else list(runs)  # reloadable
        self._load = None if isinstance(source, Trace | pd.DataFrame) else (lambda: _as_trace(source, results))
        self.trace = _as_trace(source, results)
        self.prerender = max(int(prerender), 0)
        self.panes: dict[int, EpisodePane] = {}
        self._refs: list[EpisodeRef] = []
        self._quiet = False
        listed = self.trace.runs()
        self._run_ids = [str(r) for r in listed["run_id"]]
        self.start = self.first_ref(conditions)
        self.run = W.Dropdown(
            options=list(zip(listed["label"], listed["run_id"], strict=True)),
            description="run",
            layout=W.Layout(width="420px"),
        )
        if self.start is not None:
            self.run.value = self.start.run_id  # before anything observes it: no other run's episodes are drawn
        self.condition = W.Dropdown(description="condition", layout=W.Layout(width="420px"))
        self.episode = W.Dropdown(description="episode", layout=W.Layout(width="420px"))
        self.agent = W.Dropdown(options=[ALL_AGENTS], description="agent")
        self.episodes = W.Stack([])
        self.status = W.HTML()
        self.not_here = W.HTML(layout=W.Layout(display="none"))  # shown by a page without a kernel only
        self.not_here.add_class(STATIC_ONLY)
        for control in (self.run, self.condition, self.agent):  # choosing one draws in Python: a page cannot
            control.add_class(NEEDS_KERNEL)
        W.jslink((self.episode, "index"), (self.episodes, "selected_index"))
        self.run.observe(lambda _: self._quiet or self._on_run(), "value")
        self.condition.observe(lambda _: self._quiet or self._on_condition(), "value")
        self.agent.observe(lambda _: self._quiet or self._on_condition(keep_episode=True), "value")
        self.episode.observe(self._on_episode, "index")
        self.reload_button = W.Button(
            description="reload logs", tooltip="read the run logs again (a live run keeps appending)", icon="refresh"
        )
        self.reload_button.on_click(lambda _: self.reload())
        self.reload_button.add_class(NEEDS_KERNEL)  # an exported page hides it: there is no kernel to reload with
        self.reload_button.layout.display = None if self._load else "none"
        controls = W.VBox(
            [W.HBox([self.run, self.agent, self.reload_button]), self.condition, self.not_here, self.episode]
        )
        super().__init__([controls, self.status, self.episodes])
        if len(listed):
            self._on_run(None if self.start is None else self.start.condition)
        else:
            self.status.value = "<b>No run logs found.</b> Run an experiment first; its events land in results/runs/."

    def reload(self) -> None:
        """Read the logs again (a run still going adds events and episodes), keeping the selection where it can."""
        if self._load is None:
            return
        run, condition, episode = self.run.value, self.condition.value, self.episode.index
        self.trace = self._load()
        runs = self.trace.runs()
        self._run_ids = [str(r) for r in runs["run_id"]]
        self._quiet = True
        self.run.options = list(zip(runs["label"], runs["run_id"], strict=True))
        self._quiet = False
        if run in set(runs["run_id"]):
            self._quiet = True
            self.run.value = run
            self.condition.options = self.trace.conditions(run)
            self.condition.value = condition if condition in self.condition.options else self.condition.options[0]
            self._quiet = False
            self._on_condition()
            if episode is not None and episode < len(self._refs):
                self.episode.index = episode
        elif len(runs):
            self._on_run()

    def first_ref(self, conditions: Sequence[str]) -> EpisodeRef | None:
        """The first episode of the first of ``conditions`` any run holds, in the first run holding it."""
        runs = list(self.trace.runs()["run_id"])  # a groupby over every episode: once, not once a condition
        for cond in conditions:
            for run in runs:
                if refs := self.trace.refs(run, cond):
                    return refs[0]
        return None

    # ---- selection -------------------------------------------------------------------------------------------
    def _on_run(self, condition: str | None = None) -> None:
        conditions = self.trace.conditions(self.run.value)
        self._quiet = True
        self.condition.options = conditions
        self.condition.value = condition if condition in conditions else conditions[0] if conditions else None
        self.agent.value = ALL_AGENTS
        self._quiet = False
        self._on_condition()

    def _on_condition(self, keep_episode: bool = False) -> None:
        if self.condition.value is None:
            return
        keep = (self.episode.index or 0) if keep_episode else 0
        eps = self.trace.episodes(self.run.value, self.condition.value)
        self._refs = refs_of(eps)
        agents = self.trace.agents(self._refs[0]) if self._refs else []
        if list(self.agent.options) != [ALL_AGENTS, *agents]:
            chosen = self.agent.value if self.agent.value in agents else ALL_AGENTS
            self._quiet = True
            self.agent.options = [ALL_AGENTS, *agents]
            self.agent.value = chosen
            self._quiet = False
        self.panes = {}
        # one placeholder widget shared by every undrawn episode: a run of thousands of episodes opens without
        # building thousands of widgets (a Stack may hold the same child more than once)
        children: list[W.Widget] = [self._pane(i) for i in range(min(self.prerender, len(self._refs)))]
        run, condition, total = str(self.run.value), str(self.condition.value), len(self._refs)
        if total > self.prerender:  # made only when used: a widget made is saved with the notebook
            command = html.escape(view_command(run, condition, total))
            children += [W.HTML(NOT_DRAWN.format(n=self.prerender, command=command, total=total))] * (
                total - self.prerender
            )
        self.not_here.value = self._not_here(run, condition)
        self.episodes.children = children
        self.episode.options = [
            (
                f"episode {r.episode} · {r.score:g} {UNITS.get(r.metric, r.metric or '')}"
                if pd.notna(r.score)
                else f"episode {r.episode}",
                i,
            )
            for i, r in enumerate(eps.itertuples(index=False))
        ]
        index = min(keep, len(self._refs) - 1) if self._refs else None
        self.episode.index = index
        self.episodes.selected_index = index
        self._draw(index)
        self.status.value = (
            f"<span style='color:#555'>{len(self._refs)} episode(s) · {len(self.trace):,} events loaded · "
            f"run {html.escape(str(self.run.value))}</span>"  # a run id is what its log says
        )

    def _not_here(self, run: str, condition: str) -> str:
        """What a page without a kernel says of itself: the run and condition it holds, and the command that writes a
        page of another condition (or run), since its dropdowns would do nothing there."""
        others = [c for c in self.condition.options if c != condition]
        runs = [r for r in self._run_ids if r != run]
        said = (
            f"This page holds run <code>{html.escape(run)}</code>, condition <b>{html.escape(condition)}</b>"
            f" ({min(self.prerender, len(self._refs))} of its {len(self._refs)} episodes drawn)."
        )
        if others:
            listed = ", ".join(html.escape(c) for c in others[:SHOWN])
            listed += f", … ({len(others)} in all)" if len(others) > SHOWN else ""
            command = html.escape(view_command(run, "NAME"))
            said += f" Its other conditions are not in it ({listed}): <code>{command}</code> writes a page of one."
        if runs:
            said += f" Other runs: <code>{html.escape(view_command('RUN'))}</code> (<code>tomlib runs list</code>)."
        return f"<div style='color:#555;padding:4px 0'>{said}</div>"

    def _on_episode(self, change: dict[str, Any]) -> None:
        self.episodes.selected_index = change["new"]
        self._draw(change["new"])

    def _agents(self) -> list[str] | None:
        return None if self.agent.value in (None, ALL_AGENTS) else [self.agent.value]

    def _pane(self, i: int) -> EpisodePane:
        if i not in self.panes:
            self.panes[i] = EpisodePane(self.trace, self._refs[i], self._agents())
        return self.panes[i]

    def _draw(self, i: int | None) -> None:
        if i is None or i in self.panes:
            return
        children = list(self.episodes.children)
        children[i] = self._pane(i)
        self.episodes.children = children

    # ---- driving it from code (the summary view, tests) -------------------------------------------------------
    def show(self, ref: EpisodeRef, step: int | None = None) -> None:
        """Open ``ref`` (and optionally one of its steps, by position)."""
        self.run.value = ref.run_id
        self.condition.value = ref.condition
        i = self._refs.index(ref)
        self.episode.index = i
        if step is not None:
            self.panes[i].slider.index = step

    @property
    def current(self) -> EpisodePane | None:
        """The episode on screen (None when nothing is selected)."""
        i = self.episode.index
        return None if i is None else self.panes.get(i)


def summary_frame(trace: Trace, run_id: str | None = None) -> pd.DataFrame:
    """Outcomes per episode with their condition, for the summary plot."""
    return trace.episodes(run_id).dropna(subset=["score"])


def summary_figure(df: pd.DataFrame, title: str = "") -> Any:
    """Per-condition distribution of episode outcomes (a jittered strip, black tick at the mean), one panel per
    metric so points and times never share an axis. Plain matplotlib, one scatter per panel: a run of thousands of
    episodes draws in a fraction of a second."""
    import matplotlib.pyplot as plt
    import numpy as np

    metrics = list(dict.fromkeys(df["metric"].fillna("score")))
    sizes = [df.loc[df["metric"].fillna("score") == m, "condition"].nunique() for m in metrics]
    fig, axes = plt.subplots(
        len(metrics),
        1,
        figsize=(8, max(2.5, 0.3 * sum(sizes) + 1.2 * len(metrics))),
        height_ratios=[n + 2 for n in sizes],
        squeeze=False,
    )
    palette = plt.get_cmap("tab10").colors
    rng = np.random.default_rng(0)  # the same jitter every time the page is drawn
    for ax, metric in zip(axes[:, 0], metrics, strict=True):
        sub = df[df["metric"].fillna("score") == metric]
        conditions = list(dict.fromkeys(sub["condition"]))
        place = {c: i for i, c in enumerate(conditions)}
        per = int(sub["condition"].value_counts().max())
        if per > 60 and sub["score"].nunique() <= 12:
            # hundreds of episodes on a few outcomes (pass rates, points): one disc per outcome, its area the count
            counts = sub.groupby(["condition", "score"], sort=False).size().reset_index(name="n")
            y = counts["condition"].map(place).to_numpy()
            ax.scatter(
                counts["score"], y, s=600 * counts["n"] / per, c=[palette[i % len(palette)] for i in y], alpha=0.6
            )
            for xv, yv, n in zip(counts["score"], y, counts["n"], strict=True):
                ax.annotate(str(n), (xv, yv), xytext=(0, 9), textcoords="offset points", ha="center", fontsize=7)
        else:
            size, alpha = max(4.0, 22 * min(1.0, 40 / per)), max(0.25, min(0.7, 25 / per))
            row = sub["condition"].map(place).to_numpy()
            jitter = row + rng.uniform(-0.3, 0.3, len(row))
            colors = [palette[i % len(palette)] for i in row]
            ax.scatter(sub["score"], jitter, s=size, c=colors, alpha=alpha, linewidths=0)
        means = sub.groupby("condition", sort=False)["score"].mean().reindex(conditions)
        ax.scatter(means.to_numpy(), np.arange(len(conditions)), marker="|", s=320, c="black", linewidths=2)
        ax.set_yticks(np.arange(len(conditions)), conditions)
        ax.set_ylim(len(conditions) - 0.5, -0.5)
        ax.set_xlabel(f"episode outcome ({UNITS.get(metric, metric)})")
    axes[0, 0].set_title(title)
    fig.tight_layout()
    return fig


class SummaryView(W.VBox):
    """Outcomes per condition for the explorer's current run (every episode a point); choosing an episode in the
    list opens it in the explorer."""

    def __init__(self, explorer: TraceExplorer):
        self.explorer = explorer
        self.frame = pd.DataFrame()
        self.plot = W.Output()
        self.select = W.Select(options=[], value=None, description="open", layout=W.Layout(width="460px"))
        self.select.observe(self._open, "value")
        hint = W.HTML("<span style='color:#555'>Pick an episode to open it in the explorer below.</span>")
        for control in (hint, self.select):  # opening one draws it in Python: a page without a kernel cannot
            control.add_class(NEEDS_KERNEL)
        super().__init__([self.plot, hint, self.select])
        explorer.run.observe(lambda _: self.draw(), "value")
        self.draw()

    def draw(self) -> None:
        """Plot and list the episodes of the explorer's current run."""
        import matplotlib.pyplot as plt

        run = self.explorer.run.value
        if run is None:
            return
        self.frame = summary_frame(self.explorer.trace, run).sort_values(
            ["condition", "score", "episode"], kind="stable"
        )
        self.plot.outputs = ()
        if len(self.frame):
            runs = self.explorer.trace.runs()
            fig = summary_figure(self.frame, dict(zip(runs["run_id"], runs["label"], strict=True))[run])
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=90)
            plt.close(fig)
            png = {"image/png": _b64(small_png(buf.getvalue(), colors=64))}  # a third of its full-colour size
            self.plot.outputs = ({"output_type": "display_data", "data": png, "metadata": {}},)
        rows = self.frame.itertuples(index=False)
        self.select.options = [
            (f"{r.condition} · ep {r.episode} · {r.score:g}", ref)
            for r, ref in zip(rows, refs_of(self.frame), strict=True)
        ]
        self.select.rows = min(12, max(len(self.frame), 1))

    def _open(self, change: dict[str, Any]) -> None:
        if change["new"] is not None:
            self.explorer.show(change["new"])


def _b64(data: bytes) -> str:
    import base64

    return base64.b64encode(data).decode()


def explore(
    runs: Trace | pd.DataFrame | Iterable[Any] | None = None,
    *,
    results: str | None = None,
    prerender: int = 3,
    condition: str | None = None,
    prefer: Sequence[str] = (),
) -> ExplorerBox:
    """The summary and the explorer together, as every experiment notebook ends.

    Args:
        runs: the runs to show: a :class:`Trace`, a frame from :func:`tomlib.trace.load_runs`, run ids, or
            experiment results with a ``run_id``; None: every run under ``results``.
        results: the results folder the run logs are read from; None: the default one.
        prerender: episodes of the opening condition drawn in advance, so an exported page without a kernel shows
            them (widget state grows with these, not with the log).
        condition: open the first run that has this condition, at it; an error when no run has it.
        prefer: conditions to open on if they ran, in order; when none did (a notebook run with other ``tasks``),
            the explorer opens on its first episode.
    """
    explorer = TraceExplorer(
        runs, results=results, prerender=prerender, conditions=prefer if condition is None else (condition,)
    )
    if condition is not None and explorer.start is None:
        held = sorted(set(explorer.trace.episodes()["condition"]))
        part = [c for c in held if condition in c]  # `--condition overcooked`: the ones of that task
        named = part or held
        listed = ", ".join(named[:SHOWN]) + (f", … ({len(named)} in all)" if len(named) > SHOWN else "")
        raise UsageError(
            f"no episodes of condition {condition!r} in these runs{did_you_mean(condition, held)}; "
            + (f"those with {condition!r} in their name: {listed}" if part else f"they hold: {listed or 'none'}")
        )
    return ExplorerBox(explorer)


class ExplorerBox(W.VBox):
    """The summary above the explorer. Its display data also carries the step on screen as plain HTML, which a
    front end without the widget renderer shows instead (and an exported page shows when its scripts fail)."""

    def __init__(self, explorer: TraceExplorer):
        self.explorer = explorer
        super().__init__([SummaryView(explorer), explorer])

    def fallback_html(self) -> str:
        pane = self.explorer.current
        where = f"{self.explorer.run.value} · {self.explorer.condition.value}"
        body = pane.shown if pane is not None else self.explorer.status.value
        return (
            f"<div class='{FALLBACK}'><p style='color:#777'>The interactive explorer could not be drawn here (its "
            "widget scripts did not load), so this is its first step as plain HTML. <code>.venv/bin/tomlib view "
            f"{html.escape(str(self.explorer.run.value))}</code> writes a self-contained page of the whole run."
            f"</p><p><b>{html.escape(where)}</b></p>{body}</div>"
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        data = super()._repr_mimebundle_(**kwargs)
        if data is not None:
            data["text/html"] = self.fallback_html()
        return data
