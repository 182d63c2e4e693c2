"""The trace explorer as a reader uses it: selections change what is shown, for every paper's runs."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import nbformat
import pandas as pd
import pytest

from tomlib.experiments import adaptive_tom as at
from tomlib.experiments import tom_ib
from tomlib.testing import synthetic_run_log
from tomlib.trace import load_runs
from tomlib.widgets import SummaryView, Trace, TraceExplorer, explore, step_html, summary_figure

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


@pytest.fixture
def formal_runs(isolated: Path) -> tuple[Any, Any]:
    t1 = asyncio.run(at.table1(tasks=["memory_1", "game1"], episodes=3, progress=False))
    t2 = asyncio.run(at.table2(tasks=["memory_1"], algorithms=["Hedge"], episodes=2, progress=False))
    return t1, t2


def visible_text(html: str) -> str:
    return re.sub(r"<style>.*?</style>|<[^>]+>", " ", html, flags=re.S)


def test_index_names_every_episode_with_its_source_and_outcome(formal_runs: tuple[Any, Any]) -> None:
    t1, t2 = formal_runs
    trace = Trace.from_runs([t1, t2])
    runs = trace.runs()
    assert list(runs["run_id"]) == [t1.run_id, t2.run_id] and set(runs["source"]) == {"formal"}
    eps = trace.episodes(t1.run_id)
    assert len(eps) == 2 * 9 * 3
    # the outcome in the index is the one the experiment computed for the same episode
    ours = eps.set_index(["condition", "episode"])["score"]
    theirs = t1.episodes.assign(
        condition=t1.episodes["task"] + ":" + t1.episodes["player1"] + " vs " + t1.episodes["player2"]
    )
    for r in theirs.itertuples(index=False):
        assert ours[(r.condition, r.episode)] == r.score


def test_formal_step_shows_each_level_and_the_prediction_against_the_partner(formal_runs: tuple[Any, Any]) -> None:
    t1, _ = formal_runs
    trace = Trace.from_runs([t1])
    ref = trace.refs(t1.run_id, "game1:ToM-1 vs ToM-2")[0]
    view = trace.step(ref, 0)
    p1, p2 = view.agents
    assert [lv.order for lv in p1.levels] == [0, 1] and [lv.order for lv in p2.levels] == [0, 1, 2]
    # the actual partner action is the partner's final action at the same step, and the hit flag compares them
    assert p1.partner_actual == p2.action and p2.partner_actual == p1.action
    assert p1.prediction_hit == (p1.predicted == p2.action)
    assert view.after is not None and view.after["joint_action"] == [p1.action, p2.action]
    assert "1" in p1.saw and "a" in p1.saw  # a formal agent sees the exact map
    html = step_html(view)
    assert "ToM-2" in html and "predicted partner" in html and "<pre class='grid'>" in html


def test_matrix_history_grows_with_the_step(formal_runs: tuple[Any, Any]) -> None:
    t1, _ = formal_runs
    trace = Trace.from_runs([t1])
    ref = trace.refs(t1.run_id, "memory_1:ToM-0 vs ToM-1")[0]
    assert [len(trace.step(ref, s).history) for s in (0, 4, 14)] == [1, 5, 15]
    last = trace.step(ref, 14)
    assert last.score is not None and last.score["value"] == 75
    assert "episode outcome" in step_html(last) and "episode outcome" not in step_html(trace.step(ref, 3))


def test_atom_step_draws_expert_weights_with_the_current_step_marked(formal_runs: tuple[Any, Any]) -> None:
    _, t2 = formal_runs
    trace = Trace.from_runs([t2])
    ref = trace.refs(t2.run_id, trace.conditions(t2.run_id)[0])[0]
    atom = trace.step(ref, 6).agents[0]
    assert atom.weights is not None and len(atom.weights["predictions"]) == 3
    html = step_html(trace.step(ref, 6))
    assert "<polyline" in html and "stroke-dasharray" in html
    marks = [re.search(r"<line x1='([\d.]+)'[^>]*dasharray", step_html(trace.step(ref, s))).group(1) for s in (2, 9)]
    assert float(marks[0]) < float(marks[1])


def test_explorer_selections_change_what_is_shown(formal_runs: tuple[Any, Any]) -> None:
    t1, t2 = formal_runs
    ex = TraceExplorer([t1, t2], prerender=2)
    assert ex.run.value == t1.run_id and ex.condition.value == "memory_1:ToM-0 vs ToM-0"
    ex.condition.value = "game1:ToM-1 vs ToM-2"
    first = ex.current.shown
    assert "game1:ToM-1 vs ToM-2 · episode 0" in first
    ex.current.slider.index = 3
    assert "step 4 of" in ex.current.shown and ex.current.shown != first
    ex.episode.index = 2  # not pre-drawn: drawn on selection
    assert "episode 2" in ex.current.shown and ex.episodes.selected_index == 2
    ex.agent.value = "player2"
    shown = visible_text(ex.current.shown)
    assert "player2" in shown and "player1 " not in shown.replace("as player1", "")
    assert ex.episode.index == 2  # changing the agent keeps the episode
    ex.run.value = t2.run_id
    assert ex.condition.options and all(c.startswith("memory_1:") and "A-ToM" in c for c in ex.condition.options)
    assert "expert weights" in ex.current.shown


def test_summary_selection_opens_that_episode(formal_runs: tuple[Any, Any]) -> None:
    t1, _ = formal_runs
    ex = TraceExplorer([t1])
    summary = SummaryView(ex)
    assert len(summary.frame) == 54 and summary.plot.outputs[0]["data"]["image/png"]
    ref = next(ref for _, ref in summary.select.options if ref.condition == "game1:ToM-2 vs ToM-1" and ref.episode == 1)
    summary.select.value = ref
    assert ex.condition.value == "game1:ToM-2 vs ToM-1" and ex.episode.index == 1
    assert "game1:ToM-2 vs ToM-1 · episode 1" in ex.current.shown
    figure = summary_figure(summary.frame)
    assert len(figure.axes) == 2  # points (memory_1) and steps (game1) never share an axis


def test_summary_follows_the_explorers_run(formal_runs: tuple[Any, Any]) -> None:
    t1, t2 = formal_runs
    ex = TraceExplorer([t1, t2])
    summary = SummaryView(ex)
    ex.run.value = t2.run_id
    assert set(summary.frame["run_id"]) == {t2.run_id} and all("A-ToM" in lab for lab, _ in summary.select.options)


def test_explore_draws_only_the_episodes_it_opens_on(formal_runs: tuple[Any, Any]) -> None:
    from ipywidgets.widgets.widget import _instances

    from tomlib.widgets._explorer import NOT_DRAWN, EpisodePane

    t1, t2 = formal_runs

    def panes() -> list[EpisodePane]:
        return [w for w in list(_instances.values()) if isinstance(w, EpisodePane)]

    before = set(map(id, panes()))
    widgets_before = set(_instances)
    wanted = Trace.from_runs([t2]).conditions(t2.run_id)[-1]
    box = explore([t1, t2], prerender=2, prefer=["game9:nobody", wanted])  # in the second run, not its first
    made = [p for p in panes() if id(p) not in before]
    # every pane made is one the notebook shows: a pane drawn and dropped would stay in its saved widget state
    assert len(made) == 2 and {(p.ref.run_id, p.ref.condition) for p in made} == {(t2.run_id, wanted)}
    assert box.explorer.condition.value == wanted and box.explorer.episode.index == 0
    placeholder = NOT_DRAWN.split(":", 1)[0]  # its 2 episodes are both drawn: no placeholder is made either
    made = [_instances[k] for k in set(_instances) - widgets_before]
    assert not [w for w in made if placeholder in str(getattr(w, "value", ""))]
    with pytest.raises(ValueError, match="no episodes of condition 'game9:nobody'"):
        explore([t1], condition="game9:nobody")


def test_a_page_without_a_kernel_shows_what_it_holds_and_the_command_for_the_rest(
    formal_runs: tuple[Any, Any], isolated: Path, stand_in_renderer: Path
) -> None:
    """In exported pages the condition dropdown (70 entries in 02), the agent and run dropdowns and the summary's
    episode list accepted a choice and did nothing, and `tomlib view` pages showed "reload logs". Each is marked as
    needing a kernel, which a page hides; the page instead says which run and condition it holds and gives the
    `tomlib view ... --condition` command that writes another, and an episode not drawn names the command with
    `--episodes`. Fails on main (no such note, the dropdowns unmarked)."""
    import html
    import shlex

    from tomlib.runner._execute import export_html
    from tomlib.widgets._explorer import NEEDS_KERNEL, STATIC_ONLY, STATIC_PAGE_CSS
    from tomlib.widgets._page import write_page

    t1, _ = formal_runs
    box = explore([t1], prerender=1)
    ex = box.explorer
    summary = box.children[0]
    for control in (ex.run, ex.condition, ex.agent, ex.reload_button, summary.select):
        assert NEEDS_KERNEL in control._dom_classes, control
    assert STATIC_ONLY in ex.not_here._dom_classes and ex.not_here.layout.display == "none"  # a kernel hides it
    note = ex.not_here.value
    others = [c for c in ex.condition.options if c != ex.condition.value]
    assert f"condition <b>{ex.condition.value}</b> (1 of its 3 episodes drawn)" in note and others[0] in note
    assert f".venv/bin/tomlib view {t1.run_id} --condition NAME" in note
    undrawn = ex.episodes.children[1].value
    quoted = html.escape(shlex.quote(ex.condition.value))  # 'memory_1:ToM-0 vs ToM-0', as a shell takes it
    assert f".venv/bin/tomlib view {t1.run_id} --condition {quoted} --episodes 3" in undrawn
    ex.condition.value = others[0]  # a kernel redraws the note for the condition chosen
    assert f"condition <b>{others[0]}</b>" in ex.not_here.value

    page = write_page(t1.run_id, episodes=1).read_text()
    head = page.split("</head>", 1)[0]
    assert STATIC_PAGE_CSS in head and "--condition NAME" in page
    nb = isolated / "nb.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), nb)
    assert STATIC_PAGE_CSS in export_html(nb).read_text().split("</head>", 1)[0]


def test_explore_without_runs_says_so(isolated: Path) -> None:
    box = explore([])
    assert "No run logs found" in box.explorer.status.value


def synthetic_log(path: Path, episodes: int, steps: int) -> int:
    return synthetic_run_log(path, episodes=episodes, steps=steps)


def test_ten_thousand_events_draw_only_what_is_looked_at(isolated: Path) -> None:
    n = synthetic_log(isolated / "results" / "runs" / "big" / "events.jsonl", episodes=400, steps=15)
    assert n > 10_000
    ex = TraceExplorer(None, prerender=2)
    assert len(Trace(load_runs(run_ids=["big"]))) == n
    assert len(ex.episode.options) == 100 and sorted(ex.panes) == [0, 1]
    drawn = sum(len(p.pages.children) for p in ex.panes.values())
    assert drawn == 2 * 15  # two episodes drawn, not 400
    ex.episode.index = 57
    assert sorted(ex.panes) == [0, 1, 57] and "episode 228" in ex.current.shown


def test_city_step_shows_bdi_sections_verification_core_and_map(make_model, server, isolated: Path) -> None:  # type: ignore[no-untyped-def]
    def responder(request: dict[str, Any]) -> str:
        system = request["messages"][0]["content"]
        if "Translate statements" in system:
            return json.dumps({"facts": ["at(food_agent,d1).", "connected(d1,d4)."]})
        reply: dict[str, Any] = {"response": "heading out", "action": "MOVE(d2)"}
        if "internal_beliefs" in system:
            reply["internal_beliefs"] = "I am in d1. d1 connects to d4."
        if "beliefs_about_others" in system:
            reply["beliefs_about_others"] = "the others go to their districts"
        return json.dumps(reply)

    server.responder = responder
    chat = make_model(json_mode="json_object")
    got = asyncio.run(
        tom_ib.fig5(
            models=["fake"], chats={"fake": chat}, configs=["ToM+IB"], trials=1, progress=False, verification="grounded"
        )
    )
    trace = Trace.from_runs([got])
    assert trace.runs()["source"].tolist() == ["llm:fake"]
    ref = trace.refs(got.run_id, "ToM+IB")[0]
    view = trace.step(ref, 0)
    assert view.kind == "city" and [a.agent for a in view.agents] == ["FOOD_AGENT"]
    food = view.agents[0]
    assert food.bdi and food.bdi[0]["beliefs_about_others"] and food.verifications
    assert food.calls >= 2 and food.tokens > 0 and "Translate statements" in json.dumps(food.exchanges)
    html = step_html(view)
    for expected in (
        "beliefs about others (ToM)",
        "internal beliefs (IB)",
        "ASP verification",
        "against the true state, ours",
        "inconsistent",
        "connected(d1,d4).",
        "no road between d1 and d4",
        "the turn is lost",
        "<svg",
        "raw model exchange",
    ):
        assert expected in html, expected
    assert re.search(r"<details><summary>raw model exchange", html)  # collapsed by default
    assert pd.notna(trace.episodes(got.run_id)["score"]).all()


def test_overcooked_replay_shows_the_kitchen_and_what_each_cook_holds(isolated: Path) -> None:
    asyncio.run(at.greedy_reference(episodes=1))
    trace = Trace.from_runs(None)
    run = trace.runs().iloc[0]
    assert run["experiment"] == "adaptive_tom.greedy_reference"
    ref = trace.refs(run["run_id"], trace.conditions(run["run_id"])[0])[0]
    steps = trace.steps(ref)
    late = trace.step(ref, steps[len(steps) // 2])
    assert late.kind == "overcooked" and "cook 1 holds" in late.before["status"]
    html = step_html(late)
    assert "<pre class='grid'>" in html and "P pot" in html and "cook 2 holds" in html


def test_reload_picks_up_episodes_a_live_run_wrote_since(isolated: Path) -> None:
    path = isolated / "results" / "runs" / "big" / "events.jsonl"
    synthetic_log(path, episodes=4, steps=3)
    ex = TraceExplorer(None)
    ex.condition.value = "c1"
    assert len(ex.episode.options) == 1
    synthetic_log(path, episodes=8, steps=3)  # the run went on: c1 now has episodes 1 and 5
    ex.reload()
    assert ex.condition.value == "c1" and len(ex.episode.options) == 2
    ex.episode.index = 1
    assert "c1 · episode 5" in ex.current.shown


def test_debate_round_shows_speakers_why_the_coalition_and_the_verdict(make_model, server, isolated: Path) -> None:  # type: ignore[no-untyped-def]
    from tests.debate.test_debate import responder
    from tomlib.experiments import coalition_debate as cd

    server.responder = responder
    runs = asyncio.run(cd.run_debates(model="fake", chat=make_model(json_mode="json_object"), debates=1))
    trace = Trace.from_runs([runs])
    ref = trace.refs(runs.run_id, "tom_matching:affirmative")[0]
    view = trace.step(ref, 1)
    assert view.kind == "debate"
    html = step_html(view)
    for expected in (
        "tested side: affirmative",
        "matched pair",
        "judge's verdict",
        "coalition:",
        "ToM-2",
        "spoke this round",
    ):
        assert expected in html, expected
    assert "belief-action alignment" in html  # the ToM-1/ToM-2 debaters' scores of their teammates


def test_reasoning_steps_show_ratings_importance_coalition_and_answer(make_model, server, isolated: Path) -> None:  # type: ignore[no-untyped-def]
    from tests.experiments.test_coalition_reasoning import responder
    from tomlib.experiments import coalition_reasoning as cr

    server.responder = responder
    runs = asyncio.run(
        cr.run_reasoning(
            ["dylan", "ours_matching", "dylan_code"],
            model="fake",
            chat=make_model(json_mode="json_object"),
            aqua_questions=1,
            mmlu_questions=1,  # 0 would mean every question of each subject
            humaneval_tasks=1,
            progress=False,
        )
    )
    trace = Trace.from_runs([runs])
    conditions = set(trace.episodes(runs.run_id)["condition"])
    dylan = next(c for c in conditions if c.startswith("dylan:aqua"))
    view = trace.step(trace.refs(runs.run_id, dylan)[0], 0)
    assert view.kind == "reasoning"
    html = step_html(view)  # the first step ends by consensus: answer, key and importance are shown
    assert "team answer" in html and "Agent Importance Score" in html and "question" in html
    ours = next(c for c in conditions if c.startswith("ours_matching"))
    html = step_html(trace.step(trace.refs(runs.run_id, ours)[0], 2))
    assert "coalition:" in html and "belief-action alignment" in html
    code = trace.refs(runs.run_id, "dylan:HumanEval/0")[0]
    html = step_html(trace.step(code, 1))
    assert "its ratings of the replies it saw" in html and "Reflector:" in html
    assert "the hidden tests" in step_html(trace.step(code, 2))


def test_explore_opens_on_a_preferred_condition_only_if_it_ran(formal_runs: tuple[Any, Any]) -> None:
    t1, _ = formal_runs
    runs = load_runs(run_ids=[t1.run_id])
    box = explore(runs, prefer=["game2:ToM-1 vs ToM-1", "game1:ToM-1 vs ToM-2"])
    assert box.explorer.condition.value == "game1:ToM-1 vs ToM-2"  # type: ignore[attr-defined]
    first = explore(runs, prefer=["overcooked:ToM-1 vs ToM-1"])  # did not run: the first episode, no error
    assert first.explorer.condition.value == "memory_1:ToM-0 vs ToM-0"  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="no episodes of condition"):
        explore(runs, condition="game2:ToM-1 vs ToM-1")


def test_the_summary_stays_readable_with_hundreds_of_episodes_a_condition() -> None:
    """At paper scale (hundreds of episodes a condition on a few outcomes, e.g. pass rates) a point per episode
    piles into one line per outcome; the summary draws one disc per outcome with its count instead."""
    import matplotlib.pyplot as plt
    import pandas as pd

    rows = [
        {"condition": c, "episode": e, "score": float(25 * ((e * k) % 5)), "metric": "pass_pct"}
        for k, c in ((1, "humaneval:ToM-1 PM"), (3, "humaneval:ToM-2 PM"))
        for e in range(500)
    ]
    fig = summary_figure(pd.DataFrame(rows))
    labels = sorted(int(t.get_text()) for t in fig.axes[0].texts)
    plt.close(fig)
    assert labels == [100] * 10  # five outcomes a condition, each 100 of the 500 episodes, counted on the plot
