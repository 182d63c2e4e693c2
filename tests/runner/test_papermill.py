"""What a notebook run prints: a run that succeeded shows no ERROR from its kernel's shutdown (issue 31, item 4)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from tomlib.runner._papermill import execute_one

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


@pytest.mark.series
def test_the_kernels_shutdown_interrupt_prints_no_error_and_real_errors_still_show(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    # jupyter_client interrupts a kernel before shutting it down; if the interrupt lands while the kernel answers a
    # message, ipykernel logs "KeyboardInterrupt caught in kernel." at ERROR. Here the kernel logs both lines itself.
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}})
    nb.cells = [
        nbformat.v4.new_code_cell(
            'import logging\nlog = logging.getLogger("IPKernelApp")\n'
            'log.error("KeyboardInterrupt caught in kernel.")\nlog.error("an error the reader must see")\nx = 1'
        )
    ]
    nbformat.write(nb, tmp_path / "in.ipynb")
    status, _, error, _ = execute_one(tmp_path / "in.ipynb", tmp_path / "out.ipynb", {})
    assert status == "ok", error
    err = capfd.readouterr().err
    assert "an error the reader must see" in err
    assert "KeyboardInterrupt" not in err, err
    out = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    assert out.cells[0].execution_count == 1  # the start-up line is not one of the notebook's executions
    meta = out.cells[0].metadata  # papermill's start, end and duration; not nbclient's timestamps besides
    assert "execution" not in meta and meta["papermill"]["duration"] > 0 and meta["papermill"]["status"] == "completed"


ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.series
def test_a_run_that_succeeds_prints_no_error_and_no_traceback(tmp_path: Path) -> None:
    # the whole command, as a user runs it, with a shared temp folder where another run left dask's scratch space
    # (whose locks a worker once tried to purge, printing ~20 ERROR lines on runs that succeeded)
    import os
    import subprocess
    import sys

    shared = tmp_path / "shared-tmp"
    (shared / "dask-scratch-space" / "worker-left-behind").mkdir(parents=True)
    (shared / "dask-scratch-space" / "worker-left-behind.dirlock").write_text("")
    shared.chmod(0o1777)
    env = {
        **os.environ,
        "TMPDIR": str(shared),
        "TOMLIB_TRANSCRIPTS": str(ROOT / "data" / "transcripts"),
        "TOMLIB_RESULTS": str(tmp_path / "results"),
    }
    env.pop("XDG_RUNTIME_DIR", None)
    out = subprocess.run(
        [sys.executable, "-m", "tomlib", "run", "00", "--force", "--no-html"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    said = out.stdout + out.stderr
    assert out.returncode == 0, said
    assert "00_quickstart ok" in said, said
    assert "ERROR" not in said and "Traceback" not in said, said


@pytest.mark.series
def test_a_run_whose_pages_would_need_the_network_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ./reproduce.sh's scripts (a checkout where it never ran), the pages load them from a CDN: said before
    the run, by name; with them, nothing is said."""
    import os
    import subprocess
    import sys

    from tomlib.runner._execute import missing_page_scripts

    web = tmp_path / "webdeps"
    monkeypatch.setenv("TOMLIB_WEBDEPS", str(web))
    said = missing_page_scripts()
    assert said is not None and said.startswith("MathJax and the widget renderer not found in ") and "offline" in said
    env = {
        **os.environ,
        "TOMLIB_TRANSCRIPTS": str(ROOT / "data" / "transcripts"),
        "TOMLIB_RESULTS": str(tmp_path / "results"),
    }
    out = subprocess.run(
        [sys.executable, "-m", "tomlib", "run", "00", "--force"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert f"warning: {said}" in out.stdout
    for part in ("mathjax/MathJax.js", "html-manager/dist/embed-amd.js", "requirejs/require.js"):
        (web / part).parent.mkdir(parents=True, exist_ok=True)
        (web / part).write_text("")
    assert missing_page_scripts() is None


@pytest.mark.series
@pytest.mark.parametrize(
    ("taken_port", "timeout"),
    [(0, 60.0), (1, 15.0)],
    ids=["shell port: the kernel dies", "iopub port: the kernel never answers"],
)
def test_a_kernel_handed_a_port_in_use_is_started_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, taken_port: int, timeout: float
) -> None:
    # the race two dask workers (or another user's kernels) can run into: jupyter_client hands out a port that another
    # process binds first. Taken as the shell port, the kernel exits with "Address already in use" before it answers;
    # taken as the iopub port, it lives on and never answers (an ordinary user's suite failed so, after 60 s). Here the
    # port is really taken, by this test; the wait for an answer is shortened (nothing here takes long to start).
    import socket

    from jupyter_client.connect import LocalPortCache

    from tomlib.runner import _papermill

    monkeypatch.setattr(_papermill, "KERNEL_START_TIMEOUT_S", timeout)
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    busy = taken.getsockname()[1]
    handed: list[int] = []
    pick = LocalPortCache.find_available_port

    def one_busy(self: LocalPortCache, ip: str) -> int:
        port = busy if len(handed) == taken_port else pick(self, ip)
        handed.append(port)
        return port

    monkeypatch.setattr(LocalPortCache, "find_available_port", one_busy)
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}})
    nb.cells = [nbformat.v4.new_code_cell("x = 41 + 1\nx")]
    nbformat.write(nb, tmp_path / "in.ipynb")
    try:
        status, _, error, _ = execute_one(tmp_path / "in.ipynb", tmp_path / "out.ipynb", {})
    finally:
        taken.close()
    assert handed[taken_port] == busy and len(handed) >= 10  # the first kernel got the busy port; a second, five fresh
    assert status == "ok", error
    out = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    assert out.cells[0].execution_count == 1 and out.cells[0].outputs[0]["data"]["text/plain"] == "42"


def test_the_runners_processes_do_not_compile_iri_grammars_and_notebooks_still_validate() -> None:
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from tomlib.runner._papermill import skip_iri_grammars\n"
        "skip_iri_grammars()\n"
        "import nbformat, papermill\n"
        "nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('1')])\n"
        "nbformat.validate(nb)\n"
        "bad = nbformat.v4.new_notebook(); bad.cells = [{'cell_type': 'code'}]\n"
        "try:\n"
        "    nbformat.validate(bad)\n"
        "except nbformat.ValidationError:\n"
        "    print('invalid one refused')\n"
        "print(sorted(m for m, mod in sys.modules.items() if m.startswith('rfc3987') and mod is not None))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["invalid one refused", "[]"]


@pytest.mark.series
def test_the_executed_notebook_is_written_now_and_then_and_whole_at_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import papermill.engines

    real, writes = papermill.engines.write_ipynb, []

    def counted(nb: nbformat.NotebookNode, path: str) -> None:
        writes.append(path)
        real(nb, path)

    monkeypatch.setattr(papermill.engines, "write_ipynb", counted)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"print({i})") for i in range(20)]
    nb.cells += [nbformat.v4.new_markdown_cell("the end"), nbformat.v4.new_code_cell("1 / 0")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, tmp_path / "in.ipynb")
    status, _, error, _ = execute_one(tmp_path / "in.ipynb", tmp_path / "out.ipynb", {})
    assert status == "failed" and "ZeroDivisionError" in error
    assert len(writes) <= 4, f"{len(writes)} writes of the executed notebook (papermill alone writes it twice a cell)"
    code = [c for c in nbformat.read(tmp_path / "out.ipynb", 4).cells if c.cell_type == "code"]
    printed = ["".join(o.get("text", "") for o in c.outputs) for c in code[:20]]  # a loaded kernel may split a print
    assert printed == [f"{i}\n" for i in range(20)]
    assert code[-1].outputs[0]["ename"] == "ZeroDivisionError"
