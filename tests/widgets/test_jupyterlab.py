"""A class's path: a notebook run top to bottom in a real JupyterLab (headless Chromium), then the explorer driven
through its live Python callbacks. The notebook is a temp copy, so JupyterLab's autosave never touches the repo."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.widgets.test_browser import CHROMIUM_FLAGS, browser_setup, wait_for_header
from tomlib.paths import project_root

pytestmark = pytest.mark.browser

TOKEN = "tomlib-test-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_lab(root: Path, port: int) -> subprocess.Popen[bytes]:
    """JupyterLab on ``root`` with the app exposed to the page, so the test runs commands as the menu would."""
    args = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1"]
    args += [f"--ServerApp.token={TOKEN}", f"--ServerApp.root_dir={root}", "--LabApp.expose_app_in_browser=True"]
    if os.geteuid() == 0:
        args.append("--allow-root")
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={TOKEN}", timeout=2):
                return proc
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError("JupyterLab exited while starting") from None
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError("JupyterLab did not start within 90 s")


def test_notebook_runs_top_to_bottom_in_jupyterlab_and_the_explorer_answers(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chromium, _ = browser_setup()
    if shutil.which("jupyter-lab", path=str(Path(sys.executable).parent)) is None:
        why = "JupyterLab is not installed (pip install -e '.[lab]'; ./reproduce.sh test installs it)"
        pytest.fail(why) if os.environ.get("TOMLIB_REQUIRE_BROWSER") == "1" else pytest.skip(why)
    from playwright.sync_api import sync_playwright

    monkeypatch.delenv("TOMLIB_TRANSCRIPTS")  # replay the committed transcripts, as a class would
    root = isolated / "lab"
    root.mkdir()
    shutil.copy(project_root() / "notebooks" / "04_adaptive_tom_table4.ipynb", root)
    port = free_port()
    lab = start_lab(root, port)
    shots = project_root() / "results" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
            page = browser.new_page(viewport={"width": 1300, "height": 1000})
            page.goto(f"http://127.0.0.1:{port}/lab/tree/04_adaptive_tom_table4.ipynb?token={TOKEN}")
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
            ready = "() => window.jupyterapp && window.jupyterapp.commands.isEnabled('notebook:run-all-cells')"
            page.wait_for_function(ready, timeout=60_000)
            kernel_ready = (
                "() => { const w = window.jupyterapp.shell.currentWidget; const k = w && w.sessionContext"
                " && w.sessionContext.session && w.sessionContext.session.kernel;"
                " return !!(w && w.sessionContext.isReady && k && k.connectionStatus === 'connected'"
                " && k.status === 'idle'); }"
            )
            page.wait_for_function(kernel_ready, timeout=90_000)
            page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
            try:
                page.wait_for_selector(".tx > h4", timeout=120_000)
            except Exception:
                page.screenshot(path=str(shots / "jupyterlab_04_failed.png"))
                outputs = page.locator(".jp-OutputArea-output").all_inner_texts()
                raise AssertionError(f"the explorer never appeared; outputs: {[o[:300] for o in outputs]}") from None
            done = "() => ![...document.querySelectorAll('.jp-InputArea-prompt')].some(p => p.innerText.includes('*'))"
            page.wait_for_function(done, timeout=240_000)
            assert page.locator(".jp-OutputArea-output:has-text('Traceback')").count() == 0
            before = page.locator(".tx > h4").last.inner_text()
            assert "episode 0 — step 1 of 15" in before

            condition = page.locator(".widget-dropdown:has(label:text-is('condition')) select").last
            condition.select_option(index=4)  # a Python callback: needs the live kernel
            wait_for_header(page, "ToM-1 vs ToM-1")
            page.locator(".tx > h4").last.scroll_into_view_if_needed()
            page.screenshot(path=str(shots / "jupyterlab_04_condition.png"))
            assert page.locator(".tx > h4").last.inner_text() != before
            browser.close()
    finally:
        lab.terminate()
        lab.wait(timeout=30)
