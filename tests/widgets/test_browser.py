"""The exported page as a reader sees it: a real executed notebook, exported to HTML with its widget state, opened
in headless Chromium with no kernel; changing the episode and the step changes what is on screen.

Needs Debian's ``chromium`` and the widget page scripts (``TOMLIB_WEBDEPS``), both installed by
``./reproduce.sh test``, which also sets ``TOMLIB_REQUIRE_BROWSER=1`` so this test cannot silently skip there.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tomlib.paths import project_root
from tomlib.runner._execute import export_html

pytestmark = pytest.mark.browser

CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def browser_setup() -> tuple[str, Path]:
    """Chromium's path and the widget scripts folder, or a skip (a failure when the browser test is required)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    webdeps = Path(os.environ.get("TOMLIB_WEBDEPS", project_root() / ".tomlib" / "webdeps"))
    missing = []
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("the playwright package (pip install -e '.[dev]')")
    if chromium is None:
        missing.append("chromium on PATH (apt-get install chromium)")
    if not (webdeps / "html-manager" / "dist" / "embed-amd.js").exists():
        missing.append(f"the widget page scripts in {webdeps} (./reproduce.sh test fetches them)")
    if missing:
        why = "browser test needs " + "; ".join(missing)
        if os.environ.get("TOMLIB_REQUIRE_BROWSER") == "1":
            pytest.fail(why)
        pytest.skip(why)
    return str(chromium), webdeps


def offline(blocked: list[str]) -> Any:
    """A route handler for a machine with no internet: files load, every other request is refused and noted."""

    def route(r: Any) -> None:
        if r.request.url.startswith("file://"):
            return r.continue_()
        blocked.append(r.request.url)
        return r.abort()

    return route


ICONS_LOADED = "[...document.fonts].some(f => f.family.startsWith('Font Awesome') && f.status === 'loaded')"


def open_offline(p: Any, chromium: str, page_file: Path, blocked: list[str]) -> tuple[Any, Any]:
    """A headless Chromium on ``page_file`` with every network request refused and noted in ``blocked``."""
    browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
    page = browser.new_page(viewport={"width": 1200, "height": 1000})
    page.route("**/*", offline(blocked))
    page.goto(page_file.as_uri())
    return browser, page


def wait_for_header(page: Any, text: str) -> None:
    """Wait until a visible step header contains ``text`` (the page updates without a kernel, asynchronously)."""
    js = "t => [...document.querySelectorAll('.tx > h4')].some(h => h.offsetParent && h.innerText.includes(t))"
    page.wait_for_function(js, arg=text, timeout=10_000)


SHOTS = project_root() / "results" / "screenshots"
RAW_TEX = re.compile(r"\\[A-Za-z]+|\$\$|\$[^$\s\"][^$\"\n]{0,80}\$")
"""TeX a reader should never see: a command (``\\dots``), display math or an inline ``$...$`` pair."""


@pytest.fixture
def executed(offline_series: dict[str, Any]) -> Path:
    """The offline series as ``./reproduce.sh`` runs it (its pages exported with the widget scripts beside them) and
    REPORT built from it: the results folder, shared with every test that reads it (``offline_series``)."""
    browser_setup()
    assert all(o["status"] == "ok" for o in offline_series["outcomes"]), offline_series["summary"]
    SHOTS.mkdir(parents=True, exist_ok=True)
    return offline_series["results"]


def progress_bars(notebook: Path) -> list[dict[str, Any]]:
    """The progress bars' saved widget state (tqdm's bars in a kernel) of an executed notebook."""
    import json

    widgets = json.loads(notebook.read_text())["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]
    models = widgets["state"].values()
    return [m["state"] for m in models if m["model_name"] in ("FloatProgressModel", "IntProgressModel")]


def test_report_and_pages_show_no_red_bar_and_no_raw_latex(executed: Path) -> None:
    chromium, _ = browser_setup()
    from playwright.sync_api import sync_playwright

    pages = {"01": "01_adaptive_tom_table1", "09": "09_coalition_table2_fig2"}
    for name in [*pages.values(), "08_coalition_table1"]:
        bars = progress_bars(executed / "notebooks" / f"{name}.ipynb")
        assert bars, name  # the runs drew their bars
        for bar in bars:  # a finished run's bars are full and not red ('danger': closed below its total)
            assert bar["bar_style"] != "danger" and bar["value"] == bar["max"], (name, bar)

    with sync_playwright() as p:
        for number, name in pages.items():
            blocked: list[str] = []
            browser, page = open_offline(p, chromium, executed / "notebooks" / f"{name}.html", blocked)
            page.wait_for_selector(".widget-hprogress", timeout=60_000)
            if number == "01":  # its intro's equations, typeset by the MathJax beside the page
                page.wait_for_selector(".MathJax_CHTML", timeout=30_000)
            page.wait_for_function(
                "() => !window.MathJax || MathJax.Hub.queue.running + MathJax.Hub.queue.pending == 0"
            )
            page.screenshot(path=str(SHOTS / f"page{number}_top.png"))
            assert page.locator(".widget-hprogress").count() >= 2
            assert page.locator(".progress-bar-danger").count() == 0, name
            assert page.locator(".progress-bar-success").count() == page.locator(".widget-hprogress").count()
            page.locator(".widget-hprogress").last.scroll_into_view_if_needed()
            page.screenshot(path=str(SHOTS / f"page{number}_progress.png"))
            prose = "\n".join(page.locator(".jp-MarkdownCell").all_inner_texts())
            assert not RAW_TEX.findall(prose), (name, RAW_TEX.findall(prose))
            assert not blocked, blocked
            browser.close()

        blocked = []
        browser, page = open_offline(p, chromium, executed / "REPORT.html", blocked)
        page.wait_for_selector("h3", timeout=10_000)
        text = page.inner_text("body")
        assert not RAW_TEX.findall(text), RAW_TEX.findall(text)
        assert "`" not in text
        assert "over R = 1 … 5 interaction rounds" in text  # coalition Table 1's caption, its math as Unicode
        page.screenshot(path=str(SHOTS / "report.png"), full_page=True)
        table1 = page.get_by_role("heading", name="coalition.table1", exact=True)  # not table10-12
        table1.scroll_into_view_if_needed()
        page.evaluate("window.scrollBy(0, -20)")
        page.screenshot(path=str(SHOTS / "report_coalition_table1.png"))
        assert not blocked, blocked
        browser.close()


def test_exported_notebook_explorer_works_without_a_kernel_or_the_internet(
    executed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chromium, webdeps = browser_setup()
    monkeypatch.setenv("TOMLIB_WEBDEPS", str(webdeps))
    from playwright.sync_api import sync_playwright

    page_file = executed / "notebooks" / "01_adaptive_tom_table1.html"
    assert "application/vnd.jupyter.widget-state+json" in page_file.read_text()
    shots = SHOTS

    with sync_playwright() as p:
        blocked: list[str] = []
        browser, page = open_offline(p, chromium, page_file, blocked)
        page.wait_for_selector(".tx > h4", timeout=60_000)
        # the intro's equation is typeset by the MathJax copied beside the page, not left as raw TeX
        page.wait_for_selector(".MathJax_CHTML", timeout=30_000)
        assert (page_file.parent / "mathjax" / "MathJax.js").exists()
        assert "\\arg\\max" not in page.inner_text("body")
        # the widget scripts, icon fonts and MathJax all came from beside the page: nothing was asked of the network
        assert not blocked, blocked
        text = page_file.read_text() + page_file.with_suffix(".ipynb").read_text()
        assert str(executed.parent) not in text and str(project_root()) not in text  # no local path travels with it
        page.wait_for_function(ICONS_LOADED, timeout=10_000)  # the play/pause icons are drawn, not empty boxes
        assert not page.get_by_text("reload logs").is_visible()  # a saved page has no kernel to reload with
        assert page.locator(".tomlib-fallback").count() == 1  # the plain step is in the page, hidden under the widget
        assert not page.locator(".tomlib-fallback").is_visible()

        def shown() -> str:
            return [h for h in page.locator(".tx > h4").all() if h.is_visible()][-1].inner_text()

        episode = page.locator(".widget-dropdown:has(label:text-is('episode')) select").last
        episode.scroll_into_view_if_needed()
        before = shown()
        page.screenshot(path=str(shots / "explorer_episode0.png"))
        assert re.search(r"game1:ToM-1 vs ToM-1 · episode 0 — step 1 of \d+", before), before

        episode.select_option(index=1)
        wait_for_header(page, "episode 1")
        after = shown()
        page.screenshot(path=str(shots / "explorer_episode1.png"))
        assert after != before and "episode 1 — step 1" in after

        handle = page.locator(".widget-slider:has(label:text-is('step')) .noUi-handle").last
        handle.focus()
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        wait_for_header(page, "step 4 of")
        assert "episode 1 — step 4 of" in shown()
        page.screenshot(path=str(shots / "explorer_episode1_step4.png"))
        browser.close()

        # Exported where the scripts could not be fetched: the page asks the CDNs, which are unreachable, and shows
        # the explorer's first step as plain HTML instead of a blank output.
        monkeypatch.setenv("TOMLIB_WEBDEPS", str(tmp_path / "no-webdeps"))
        (tmp_path / "notebooks").mkdir()
        page_file = tmp_path / "notebooks" / page_file.name  # a copy: the module's page stays as it was exported
        shutil.copy(executed / "notebooks" / page_file.with_suffix(".ipynb").name, page_file.with_suffix(".ipynb"))
        export_html(page_file.with_suffix(".ipynb"))
        blocked = []
        browser, page = open_offline(p, chromium, page_file, blocked)
        fallback = page.locator(".tomlib-fallback")
        fallback.wait_for(state="visible", timeout=20_000)
        assert any("require" in u for u in blocked), blocked
        assert "could not be drawn" in fallback.inner_text()
        assert re.search(r"game1:ToM-1 vs ToM-1 · episode 0 — step 1 of \d+", fallback.inner_text())
        page.screenshot(path=str(shots / "explorer_fallback.png"))
        browser.close()


def test_view_page_works_without_jupyter_or_the_internet(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from playwright.sync_api import sync_playwright

    from tomlib.__main__ import main
    from tomlib.experiments import adaptive_tom as at

    chromium, webdeps = browser_setup()
    monkeypatch.setenv("TOMLIB_WEBDEPS", str(webdeps))
    asyncio.run(at.table1(tasks=["game1"], episodes=2, progress=False))
    assert main(["view", "adaptive_tom.table1", "--condition", "game1:ToM-1 vs ToM-2"]) == 0
    (page_file,) = (isolated / "results" / "views").glob("adaptive_tom.table1-*.html")
    assert (page_file.parent / "_static" / "embed.js").exists()
    assert str(isolated) not in page_file.read_text() and str(project_root()) not in page_file.read_text()

    with sync_playwright() as p:
        blocked: list[str] = []
        browser, page = open_offline(p, chromium, page_file, blocked)
        wait_for_header(page, "game1:ToM-1 vs ToM-2 · episode 0 — step 1")
        assert blocked == []
        page.wait_for_function(ICONS_LOADED, timeout=10_000)
        assert not page.get_by_text("reload logs").is_visible()  # no kernel to reload with
        page.locator(".widget-dropdown:has(label:text-is('episode')) select").last.select_option(index=1)
        wait_for_header(page, "episode 1 — step 1")
        browser.close()


def test_view_names_the_runs_it_knows_when_given_a_typo(isolated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import asyncio

    from tomlib.__main__ import main
    from tomlib.experiments import adaptive_tom as at

    asyncio.run(at.table1(tasks=["game1"], episodes=1, progress=False))
    assert main(["view", "adaptive_tom.tabel1"]) == 2
    err = capsys.readouterr().err
    assert "No run 'adaptive_tom.tabel1'" in err and "adaptive_tom.table1" in err


def test_a_view_page_of_a_hostile_log_runs_none_of_its_markup(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A log whose strings carry ``<img onerror>`` and ``<script>``, and whose numbers are such strings too (the
    ToM orders of the levels, the expert weights): its page opens in Chromium, shows them as text and runs none."""
    import asyncio

    from playwright.sync_api import sync_playwright

    from tests.widgets.test_hostile_logs import RUN_FOLDER, write_poisoned
    from tomlib.experiments import adaptive_tom as at
    from tomlib.widgets._page import write_page

    chromium, webdeps = browser_setup()
    monkeypatch.setenv("TOMLIB_WEBDEPS", str(webdeps))
    asyncio.run(at.table2(tasks=["game1"], algorithms=["Hedge"], episodes=1, progress=False))
    write_poisoned(isolated / "results", isolated / "hostile", every=False, numbers=True)
    page_file = write_page(RUN_FOLDER, results=isolated / "hostile")

    dialogs: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1200, "height": 1000})
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        blocked: list[str] = []
        page.route("**/*", offline(blocked))
        page.goto(page_file.as_uri())
        wait_for_header(page, "episode 0 — step 1")
        assert "ToM-0<img src=x onerror=alert(1)>" in page.inner_text("body")  # a ToM order, as text
        page.locator(".widget-slider:has(label:text-is('step')) .noUi-handle").last.focus()
        for step in range(2, 5):  # the next steps, each drawn in turn
            page.keyboard.press("ArrowRight")
            wait_for_header(page, f"episode 0 — step {step} of")
        assert page.locator(".tx img, .tx script").count() == 0
        assert dialogs == [] and blocked == []
        browser.close()
