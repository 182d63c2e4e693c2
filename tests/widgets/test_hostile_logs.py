"""A run log is data: whoever could write it (another user of a shared results folder, a log sent along with a
question) chooses every value in it. Each value reaches the explorer's HTML escaped, strings and numbers alike, in
every panel the explorer and ``tomlib view`` draw.

The logs are those of short real runs of every kind of game (so a field added later is in them), with markup put
into every string and, in one variant, every number replaced by a string carrying markup. The HTML drawn from them
is parsed: no element or attribute but those tomlib writes may appear, and no attribute holds the markup.
"""

from __future__ import annotations

import ast
import asyncio
import json
import re
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import fake_config, made_once
from tomlib.llm import ChatModel
from tomlib.testing import FakeOpenAIServer
from tomlib.widgets import Trace, explore, step_html
from tomlib.widgets._explorer import TraceExplorer
from tomlib.widgets._page import write_page
from tomlib.widgets._trace import exchange

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

PAYLOAD = "<img src=x onerror=alert(1)>\"'<script>alert(2)</script>"
RUN_FOLDER = "<img src=x onerror=alert(3)>"  # a run folder's name is the page's title (no / in a folder name)
TRANSCRIPTS = Path(__file__).resolve().parents[2] / "data" / "transcripts"
WIDGETS = Path(__file__).resolve().parents[2] / "tomlib" / "widgets"

TAGS = {"style", "div", "h4", "b", "i", "span", "details", "summary", "pre", "table", "tr", "td", "th", "br"}
TAGS |= {"svg", "polyline", "text", "line", "circle", "code", "p"}
ATTRIBUTES = {"class", "style", "width", "height", "fill", "stroke", "stroke-width", "stroke-dasharray", "points"}
ATTRIBUTES |= {"x", "y", "x1", "x2", "y1", "y2", "cx", "cy", "r", "font-size", "font-weight"}
PAGE_TAGS = {"html", "head", "meta", "title", "body", "script", "style"}


class Markup(HTMLParser):
    """Every element and attribute in a piece of HTML, with the text of its ``<title>`` and ``<script>`` elements."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.inside: list[str] = []
        self.text: dict[str, list[str]] = {}
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        self.inside.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.inside:
            del self.inside[len(self.inside) - 1 - self.inside[::-1].index(tag) :]

    def handle_data(self, data: str) -> None:
        if self.inside:
            self.text.setdefault(self.inside[-1], []).append(data)


def assert_inert(fragment: str, where: str) -> None:
    """No element or attribute but tomlib's, no attribute holding the payload, and the payload only as text."""
    assert "<img" not in fragment and "<script" not in fragment, (where, fragment[:300])
    for tag, attrs in Markup(fragment).tags:
        assert tag in TAGS, (where, tag)
        for name, value in attrs:
            assert name in ATTRIBUTES, (where, tag, name)
            assert "alert" not in (value or ""), (where, tag, name, value)


# ---- logs of every kind of game, with markup in every value --------------------------------------------------


def renderer_literals() -> set[str]:
    """The strings the explorer compares a log's keys and values with: a value equal to one keeps its meaning (a
    game name, ``hit``), so the panels it selects are drawn, with markup in everything else."""
    out: set[str] = set()
    for module in ("_trace.py", "_html.py"):
        tree = ast.parse((WIDGETS / module).read_text())
        out |= {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return out - {"d1", "d2", "d3", "d4"}  # the city's districts are names, drawn at their usual places


LITERALS = renderer_literals()


def marked(text: str, every: bool) -> str:
    return text if not every and text in LITERALS else text + PAYLOAD


def poisoned(value: Any, *, every: bool, numbers: bool) -> Any:
    """``value`` with markup after every string (dict keys too; with ``every`` False, not the strings the explorer
    matches on) and, with ``numbers``, every number replaced by a string carrying markup."""
    if isinstance(value, str):
        return marked(value, every)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return f"{value}{PAYLOAD}" if numbers else value
    if isinstance(value, dict):
        return {marked(k, every): poisoned(v, every=every, numbers=numbers) for k, v in value.items()}
    if isinstance(value, list):
        return [poisoned(v, every=every, numbers=numbers) for v in value]
    return value


ENVELOPE = ("run_id", "experiment", "condition", "agent")  # kind, episode, step and time keep the log readable


def write_poisoned(source: Path, target: Path, *, every: bool, numbers: bool) -> None:
    """Every run log under ``source/runs`` again under ``target/runs`` with markup in every value (no index: the
    reader scans the log)."""
    for i, log in enumerate(sorted((source / "runs").glob("*/events.jsonl"))):
        rows = []
        for line in log.read_text().splitlines():
            ev = json.loads(line)
            for key in ENVELOPE:
                if isinstance(ev.get(key), str):
                    ev[key] = ev[key] + PAYLOAD
            ev["payload"] = poisoned(ev["payload"], every=every, numbers=numbers)
            rows.append(json.dumps(ev))
        folder = target / "runs" / (RUN_FOLDER if i == 0 else log.parent.name)
        folder.mkdir(parents=True)
        (folder / "events.jsonl").write_text("\n".join(rows) + "\n")


def inline_exchanges(results: Path) -> None:
    """Copy each model call's prompt and reply from the store into its event (as older logs had them), so they are
    drawn from the log and carry its markup; one call keeps only its key and store, whose missing note is drawn."""
    for log in (results / "runs").glob("*/events.jsonl"):
        rows = [json.loads(line) for line in log.read_text().splitlines()]
        calls = [ev for ev in rows if ev["kind"] == "llm_call"]
        for ev in calls[1:]:
            ev["payload"] = {k: v for k, v in exchange(ev["payload"]).items() if k not in ("key", "store")}
        log.write_text("".join(json.dumps(ev) + "\n" for ev in rows))
        (log.parent / "events.index.json").unlink(missing_ok=True)


def city(request: dict[str, Any]) -> str:
    system = request["messages"][0]["content"]
    if "Translate statements" in system:
        return json.dumps({"facts": ["at(food_agent,d1).", "connected(d1,d4)."]})
    reply = {"response": "heading out", "action": "MOVE(d2)", "internal_beliefs": "I am in d1. d1 connects to d4."}
    return json.dumps({**reply, "beliefs_about_others": "the others go to their districts"})


def run_every_game(results: Path) -> None:
    """Short runs of every kind of game the explorer draws: matrix and grid (formal), A-ToM on replayed replies,
    Overcooked, iterative programming (replayed), the city, the debate and both kinds of reasoning team."""
    from tests.debate.test_debate import responder as debate
    from tests.experiments.test_coalition_reasoning import responder as reasoning
    from tomlib.experiments import adaptive_tom as at
    from tomlib.experiments import coalition_debate as cd
    from tomlib.experiments import coalition_programming as cp
    from tomlib.experiments import coalition_reasoning as cr
    from tomlib.experiments import tom_ib

    asyncio.run(at.table1(tasks=["memory_1", "game1"], episodes=1, progress=False))
    asyncio.run(
        at.table2(
            model="local", llm_mode="replay", tasks=["memory_1"], algorithms=["Hedge"], episodes=1, progress=False
        )
    )
    asyncio.run(at.greedy_reference(episodes=1))
    matched = next(c for c in cp.table2_configs() if c.matching)
    asyncio.run(
        cp.run_programming(
            [matched], benchmarks=["humaneval"], humaneval_tasks=1, progress=False, on_sandbox=None, experiment="c.t2"
        )
    )
    with FakeOpenAIServer() as srv:
        chat = ChatModel(fake_config(srv, json_mode="json_object"))
        try:
            srv.responder = city
            asyncio.run(
                tom_ib.fig5(
                    models=["fake"],
                    chats={"fake": chat},
                    configs=["ToM+IB"],
                    trials=1,
                    progress=False,
                    verification="grounded",
                )
            )
            srv.responder = debate
            asyncio.run(cd.run_debates(model="fake", chat=chat, debates=1))
            srv.responder = reasoning
            for methods, aqua, code in ((["dylan", "ours_matching"], 1, 0), (["dylan_code"], 0, 1)):
                asyncio.run(
                    cr.run_reasoning(
                        methods,
                        model="fake",
                        chat=chat,
                        aqua_questions=aqua,
                        mmlu_questions=1,
                        humaneval_tasks=code,
                        progress=False,
                    )
                )
            inline_exchanges(results)
        finally:
            chat.close()


@pytest.fixture(scope="session")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """Results folders whose run logs carry markup: ``strings`` (every string but those the explorer matches on),
    ``every`` (every string and key) and ``numbers`` (strings, and every number replaced by a string)."""
    kinds = {"strings": (False, False), "every": (True, False), "numbers": (False, True)}

    def make(root: Path) -> dict[str, Any]:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("TOMLIB_STORE", str(root / "store" / "responses.sqlite"))
            mp.setenv("TOMLIB_RESULTS", str(root / "clean"))
            mp.setenv("TOMLIB_TRANSCRIPTS", str(TRANSCRIPTS))
            run_every_game(root / "clean")
            for name, (every, numbers) in kinds.items():
                write_poisoned(root / "clean", root / name, every=every, numbers=numbers)
        return {}

    root = made_once(tmp_path_factory, "hostile-logs", make)["folder"]  # once per run of the suite, not per worker
    yield {name: root / name for name in kinds}


VARIANTS = ["strings", "every", "numbers"]


def every_step(trace: Trace) -> Iterator[tuple[str, Callable[[], str]]]:
    """The first steps and the last (which shows the outcome) of the first episode of every condition of every run."""
    for run in trace.runs()["run_id"]:
        for condition in trace.conditions(run):
            ref = trace.refs(run, condition)[0]
            steps = trace.steps(ref) or [0]
            for step in dict.fromkeys(steps[:4] + steps[-1:]):
                yield f"{condition} {step}", lambda ref=ref, step=step: step_html(trace.step(ref, step))


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_panel_of_every_step_draws_the_logs_markup_as_text(hostile: dict[str, Path], variant: str) -> None:
    trace = Trace.from_runs(None, results=hostile[variant])
    pages = []
    for where, draw in every_step(trace):
        pages.append(draw())
        assert_inert(pages[-1], where)
    assert len(pages) > 100
    if variant != "strings":
        return
    everything = "".join(pages)  # the markup did not hide the panels it must reach
    for part in (
        "<b>matrix game</b>",
        "<pre class='grid'>",
        "P pot",
        "<b>city before this action</b>",
        "expert weights",
        "after the partner played",
        "belief-action alignment",
        "ASP verification",
        "beliefs about others (ToM)",
        "raw model exchange",
        "PM ToM-",
        "judge's verdict",
        "Agent Importance Score",
        "its ratings of the replies",
        "Reflector:",
        "team answer",
        "kept in the response store",  # the note of a call whose store does not hold it
        "model call(s)",
        "episode outcome",
    ):
        assert part in everything, part
    assert everything.count("&lt;img src=x onerror=alert(1)&gt;") > 1000
    assert "could not be drawn" not in everything  # markup in strings breaks nothing


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_explorer_its_status_line_and_its_plain_html_fallback_escape_the_log(
    hostile: dict[str, Path], variant: str
) -> None:
    box = explore(None, results=str(hostile[variant]))
    explorer: TraceExplorer = box.explorer  # type: ignore[attr-defined]
    runs = [value for _, value in explorer.run.options]
    assert len(runs) == 8
    for run in runs:
        explorer.run.value = run
        assert "&lt;img" in explorer.status.value  # the run id, as text
        assert_inert(explorer.status.value, f"status of {run}")
        assert_inert(box.fallback_html(), f"fallback of {run}")  # type: ignore[attr-defined]
        for pane in explorer.panes.values():
            for page in pane.pages.children:
                assert_inert(page.value, f"pane of {run}")


def widget_html(page: str) -> list[str]:
    """The HTML every HTML widget of an exported page draws (what the renderer sets as its inner HTML)."""
    state = re.search(r'<script type="application/vnd\.jupyter\.widget-state\+json">(.*?)</script>', page, re.S)
    assert state is not None
    models = json.loads(state.group(1))["state"]
    return [m["state"].get("value", "") for m in models.values() if m["model_name"] == "HTMLModel"]  # "" is dropped


@pytest.mark.browser
@pytest.mark.parametrize("variant", VARIANTS)
def test_view_pages_of_hostile_logs_hold_no_markup_of_theirs(
    hostile: dict[str, Path], variant: str, stand_in_renderer: Path
) -> None:
    results = hostile[variant]
    folders = sorted(p.name for p in (results / "runs").iterdir()) if variant == "strings" else [RUN_FOLDER]
    for i, folder in enumerate(folders):
        path = write_page(folder, results=results, out=results / "views" / f"{i}.html")
        page = path.read_text()
        parsed = Markup(page)
        for tag, attrs in parsed.tags:
            assert tag in PAGE_TAGS, (folder, tag)
            if tag == "script":
                kind = dict(attrs).get("type") or ""
                assert kind.startswith("application/vnd.jupyter.widget-") or dict(attrs).get("src"), (folder, attrs)
        assert "".join(parsed.text["title"]) == f"tomlib run {folder}"  # the folder's name, as text
        assert page.count("</script>") == page.count("<script")  # no string in the state ends its script early
        drawn = widget_html(page)
        assert len(drawn) > 3
        for fragment in drawn:
            assert_inert(fragment, folder)


def test_view_replaces_a_link_planted_where_it_writes(isolated: Path, stand_in_renderer: Path) -> None:
    from tomlib.testing import synthetic_run_log

    synthetic_run_log(isolated / "results" / "runs" / "big" / "events.jsonl", episodes=2, steps=2)
    page, script = isolated / "victim.txt", isolated / "their.js"
    page.write_text("mine\n")
    script.write_text("alert('theirs')\n")  # the size of the renderer: a copy checked by its size was kept
    views = isolated / "results" / "views"
    (views / "_static").mkdir(parents=True)
    (views / "big.html").symlink_to(page)
    (views / "_static" / "embed.js").symlink_to(script)
    path = write_page("big")
    assert page.read_text() == "mine\n" and script.read_text() == "alert('theirs')\n"
    assert not path.is_symlink() and "tomlib run big" in path.read_text()
    assert (views / "_static" / "embed.js").read_text() == "// the renderer\n"
