"""Every figure REPORT shows, drawn as its notebook draws it (on small runs) and saved by ``save_figure``: no legend
covers a title, a label, a tick label, a text, another legend or another axes' plotting area.

Coalition Table 1's legend covered the figure's title; ``save_figure`` now moves a legend that covers anything
(``tidy_legends``). The names come from the notebooks' ``save_figure`` calls, so a new figure needs a builder here.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import matplotlib
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt

from tomlib.experiments import adaptive_tom as at
from tomlib.experiments import coalition_debate as cd
from tomlib.experiments import coalition_programming as cp
from tomlib.experiments import coalition_reasoning as cr
from tomlib.experiments import tom_ib
from tomlib.report import save_figure
from tomlib.report._plots import legend_overlaps

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

ROOT = Path(__file__).resolve().parents[2]


def notebook_figures() -> list[str]:
    """Every figure name a notebook of the series saves (and so REPORT shows)."""
    names = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                names += re.findall(r"save_figure\([^\n]*?\"([\w.]+)\"", "".join(cell["source"]))
    return names


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# the runs are made once per module, in the test's results folder, with the shipped `local` transcripts
@cache
def formal(table: str) -> Any:
    if table == "fig3":  # notebook 05's tasks
        return run(at.fig3(tasks=["memory_1", "game1", "game2", "overcooked"], episodes=1, progress=False))
    return run(getattr(at, table)(episodes=1, progress=False))


@cache
def programming(which: str) -> Any:
    configs = cp.table1_configs() if which == "table1" else cp.table2_configs()
    runs = run(cp.run_programming(configs, progress=False, on_sandbox=None, humaneval_tasks=1, mbpp_tasks=1))
    return runs


@cache
def reasoning(which: str) -> Any:
    if which == "table7":  # notebook 14's
        return run(cr.run_reasoning(cr.CODE_METHODS, humaneval_tasks=2, experiment="coalition.table7", progress=False))
    return run(cr.run_reasoning(cr.METHODS, aqua_questions=2, mmlu_questions=1, progress=False))


def greedy_reference() -> Any:
    import seaborn as sns

    greedy = run(at.greedy_reference(episodes=2))  # notebook 03's cell, as it is there
    ax = sns.histplot(greedy["time"], bins=range(0, 105, 5))
    ax.set(xlabel="steps to the first delivered soup (100 = failed)", ylabel="episodes", title="Greedy with Greedy")
    return ax.figure


BUILDERS: dict[str, Callable[[], Any]] = {
    "adaptive_tom.layouts": lambda: at.plot_layouts(("game1", "game2", "overcooked")),
    "adaptive_tom.table1_formal": lambda: at.plot_pairs(
        formal("table1").table, "formal", title="Table 1, formal agents: ours (paper in parentheses)"
    ),
    "adaptive_tom.tie_sensitivity": lambda: at.plot_tie_sensitivity(run(at.tie_sensitivity(episodes=1))),
    "adaptive_tom.table1_prefer": lambda: at.plot_prefer_sensitivity(
        run(at.prefer_sensitivity("table1", default=formal("table1"), episodes=1))
    ),
    "adaptive_tom.table3_prefer": lambda: at.plot_prefer_sensitivity(
        run(at.prefer_sensitivity("table3", default=formal("table3"), episodes=1))
    ),
    "adaptive_tom.table2_formal": lambda: at.plot_atom(formal("table2").table, "formal"),
    "adaptive_tom.table3_ppo_stand_in": lambda: at.plot_stand_in(at.stand_in_population()),
    "adaptive_tom.table3_greedy_reference": greedy_reference,
    "adaptive_tom.table4_formal": lambda: at.plot_pairs(
        formal("table4").table, "formal", title="Table 4 (3 actions), formal agents: ours (paper in parentheses)"
    ),
    "adaptive_tom.fig3_overcooked_episode": lambda: at.plot_fig3_episode(
        at.fig3_episode(formal("fig3"), task="overcooked", episode=0)
    ),
    "adaptive_tom.fig3_formal": lambda: at.plot_fig3(formal("fig3").table),
    "tom_ib.fig5": lambda: tom_ib.plot_fig5(run(tom_ib.fig5(trials=1, progress=False)).table),
    "coalition.table1": lambda: cp.plot_table1(cp.table1(programming("table1"))),
    "coalition.fig2_humaneval_team": lambda: cp.plot_fig2(cp.table2(programming("table2")), "humaneval", "ftm_team"),
    "coalition.fig2_mbpp_team": lambda: cp.plot_fig2(cp.table2(programming("table2")), "mbpp", metric="ftm_team"),
    "coalition.fig2_humaneval": lambda: cp.plot_fig2(cp.table2(programming("table2")), "humaneval"),
    "coalition.fig2_mbpp": lambda: cp.plot_fig2(cp.table2(programming("table2")), "mbpp"),
    "coalition.ftm_epsilon_humaneval": lambda: cp.plot_ftm_epsilon(
        cp.ftm_vs_epsilon([programming("table2")]), "humaneval"
    ),
    "coalition.ftm_epsilon_mbpp": lambda: cp.plot_ftm_epsilon(cp.ftm_vs_epsilon([programming("table2")]), "mbpp"),
    "coalition.table7_importance": lambda: cr.plot_importance(cr.table7(reasoning("table7")), "humaneval"),
    "coalition.table8_importance": lambda: cr.plot_importance(cr.table8(reasoning("table8")), "mmlu"),
    "coalition.table4_win_rates": lambda: cd.plot_table4(cd.table4(run(cd.run_debates(debates=1)))),
}


@pytest.fixture(scope="module")
def shared_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One results folder and response store for the module's runs (each test's own would redo them)."""
    return tmp_path_factory.mktemp("figures")


@pytest.fixture(autouse=True)
def shipped_transcripts(shared_results: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOMLIB_TRANSCRIPTS", str(ROOT / "data" / "transcripts"))
    monkeypatch.setenv("TOMLIB_RESULTS", str(shared_results / "results"))
    monkeypatch.setenv("TOMLIB_STORE", str(shared_results / "store" / "responses.sqlite"))


def test_every_figure_of_the_series_has_a_builder() -> None:
    assert sorted(notebook_figures()) == sorted(BUILDERS)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_no_legend_covers_a_title_a_label_or_a_plot(name: str) -> None:
    fig = BUILDERS[name]()
    try:
        path = save_figure(fig, name)
        assert legend_overlaps(fig) == [], name
        assert path.stat().st_size > 0
    finally:
        plt.close(fig)


def test_the_check_sees_a_legend_on_a_title_and_save_figure_moves_it() -> None:
    fig, (left, right) = plt.subplots(1, 2, figsize=(6, 3))
    for ax in (left, right):
        ax.plot([0, 1], [0, 1], label="a rather long label for a line")
        ax.set_title("a title")
    left.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0))  # on its axes' title, as coalition Table 1's was
    fig.legend(*right.get_legend_handles_labels(), loc="upper right")
    fig.suptitle("the figure's title")
    try:
        found = legend_overlaps(fig)
        assert any("covers axes 0 title 'a title'" in f for f in found), found
        assert any("covers suptitle" in f for f in found), found
        save_figure(fig, "adaptive_tom.legend_check")
        assert legend_overlaps(fig) == []
    finally:
        plt.close(fig)
