"""README.md's commands work as written from a new login shell in the project root after ``./reproduce.sh``: no
activated environment, no ``python`` on PATH (Debian has none), nothing but what the reader types.

Every command of a ```bash block is either run here or skipped by a prefix in ``SKIP``, which says why; a command
that is neither fails the test, so a new README command cannot escape it, and so does one that calls ``python``,
``python3`` or a bare ``tomlib`` (those need an activated environment). The commands run one by one under ``bash -c``
in the environment of ``env -i PATH=/usr/bin:/bin HOME=<tmp> LANG=C.UTF-8``, from a scratch folder that links every
top-level entry of the checkout except ``results/`` and ``.tomlib/`` (so a relative output path lands there), with
``TOMLIB_RESULTS`` and ``TOMLIB_STORE`` in tmp: the checkout's results and response store are never touched. The
results folder holds a small formal ``adaptive_tom.table2`` run and a newer 1-episode ``llm:local``-style run, so
``view`` meets what notebook 02 leaves. ```python blocks run with ``.venv/bin/python`` the same way, and the
```yaml block is read as a ``configs/models.yaml``.

Also here: ``view``'s choice among an experiment's runs (README: "The notebooks"), and the one line a Python
without tomlib's dependencies prints instead of a traceback."""

from __future__ import annotations

import asyncio
import calendar
import json
import os
import re
import shlex
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tomlib.__main__ import build_parser, main
from tomlib.trace import RunLog

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
"""README and the docs pages it sends a reader to (the book's topic pages): their commands are held to the same rules.
The files the pages include in the book are held elsewhere: ``notebooks/README.md``'s class plan by
``tests/test_class_plan.py``, ``benchmarks/RESULTS.md`` (generated) by ``tests/test_benchmark_results.py``."""
TOMLIB = ".venv/bin/tomlib"

RUN = (  # prefixes of the commands run here: cheap, offline, on the tmp results folder and store
    (TOMLIB, "--help"),
    (TOMLIB, "models"),
    (TOMLIB, "cache"),
    (TOMLIB, "runs", "list"),
    (TOMLIB, "runs", "prune", "--dry-run"),
    (TOMLIB, "view"),
    (TOMLIB, "report"),
    (TOMLIB, "check-agent"),
)
SKIP = {  # prefix: why it is not run here (its arguments are still checked against the parser when it is tomlib's)
    ("./reproduce.sh",): "sets up .venv, then runs the whole series, the test suite or JupyterLab (minutes to hours)",
    (".venv/bin/python", "-m", "pytest"): "the test suite itself",
    (TOMLIB, "run"): "executes notebooks (tests/runner/ runs them; the README's live run needs a key of yours)",
    (TOMLIB, "sweep"): "executes a notebook over a grid on a dask cluster (tests/runner/test_cluster.py)",
    ("export",): "sets the reader's own API key or TLS files for the commands after it",
    (".venv/bin/dask",): "a scheduler or worker of a cluster of machines, with TLS certificates",
    (TOMLIB, "class"): "writes the student edition or grades a class in the sandbox (tests/test_grading.py)",
}
LANGUAGES = {"bash", "python", "yaml", "text", ""}  # a block labelled otherwise (sh, console) would escape the test
DIRECTIVES = {"{include}"}  # MyST directives of the book's pages: their bodies are options, not commands
COMMAND_LIKE = re.compile(r"^\s*(\$ |\./|\.venv/|python|tomlib\s|pip\s|export\s|mamba\s|conda\s)")
BARE_PYTHON = re.compile(r"(?<![\w/.-])python3?(\.\d+)? -m tomlib")


@dataclass
class Block:
    language: str
    line: int  # of the opening fence
    body: str


@dataclass
class Command:
    text: str  # as written, continuation lines joined
    words: list[str]  # without comments, and without leading VAR=value assignments
    line: int

    def starts(self, prefix: tuple[str, ...]) -> bool:
        return tuple(self.words[: len(prefix)]) == prefix


def blocks(text: str) -> list[Block]:
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        m = re.match(r"^```(\S*)\s*$", lines[i])
        if m:
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append(Block(m[1], i + 1, "\n".join(lines[i + 1 : j])))
            i = j
        i += 1
    return out


def commands(block: Block) -> list[Command]:
    out, pending, start = [], "", 0
    for n, line in enumerate(block.body.splitlines(), block.line + 1):
        if not pending:
            start = n
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        text, pending = (pending + line).strip(), ""
        words = shlex.split(text, comments=True)
        while words and re.match(r"^[A-Za-z_]\w*=", words[0]):
            words.pop(0)
        if words:
            out.append(Command(text, words, start))
    return out


def readme_commands(doc: Path = README) -> list[Command]:
    return [c for b in blocks(doc.read_text()) if b.language == "bash" for c in commands(b)]


def test_every_readme_command_is_run_or_skipped_and_none_needs_activation() -> None:
    problems = []
    for doc in DOCS:
        text, where = doc.read_text(), doc.relative_to(ROOT)
        for b in blocks(text):
            if b.language in DIRECTIVES:
                continue
            if b.language not in LANGUAGES:
                problems.append(f"{where}:{b.line}: a ```{b.language} block: label commands `bash`, output `text`")
            elif b.language in ("text", "") and any(COMMAND_LIKE.match(x) for x in b.body.splitlines()):
                problems.append(f"{where}:{b.line}: commands in a ```{b.language} block: label it `bash`")
        for c in readme_commands(doc):
            ran, skipped = any(c.starts(p) for p in RUN), [p for p in SKIP if c.starts(p)]
            if re.fullmatch(r"python[\d.]*|tomlib", c.words[0]) or BARE_PYTHON.search(c.text):
                problems.append(f"{where}:{c.line}: `{c.text}` needs an activated environment: write {TOMLIB} ...")
            elif not ran and not skipped:
                problems.append(f"{where}:{c.line}: `{c.text}` is neither run by this test (RUN) nor skipped (SKIP)")
            elif skipped and c.words[0] == TOMLIB:
                try:
                    build_parser(TOMLIB).parse_args(c.words[1:])
                except SystemExit:
                    problems.append(f"{where}:{c.line}: `{c.text}`: {TOMLIB} does not accept these arguments")
        for m in BARE_PYTHON.finditer(text):  # prose too: a reader copies `python -m tomlib ...` from a sentence
            line = text.count(chr(10), 0, m.start()) + 1
            problems.append(f"{where}:{line}: `{m[0]}` needs an activated environment")
    assert not problems, "\n".join(problems)


def clean_env(tmp: Path) -> dict[str, str]:
    """A new login shell's environment, nothing inherited: no venv on PATH; tomlib's state in tmp."""
    (tmp / "home").mkdir(exist_ok=True)
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp / "home"),
        "LANG": "C.UTF-8",
        "TOMLIB_RESULTS": str(tmp / "results"),
        "TOMLIB_STORE": str(tmp / "store" / "responses.sqlite"),
    }


def scratch_root(tmp: Path) -> Path:
    """A folder that reads like the checkout (links to its top-level entries) but writes into tmp."""
    here = tmp / "checkout"
    here.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in ("results", ".tomlib", "classroom", "__pycache__", ".pytest_cache"):
            (here / entry.name).symlink_to(entry)
    return here


def write_runs(results: Path) -> tuple[str, str]:
    """What notebook 02 leaves in results/runs: a formal adaptive_tom.table2 run (real, small) and, newer, a 1-episode
    run labelled ``llm:local`` (logged directly, so no transcript is needed). Returns their ids."""
    from tomlib.experiments import adaptive_tom as at

    formal = asyncio.run(at.table2(tasks=["memory_1"], episodes=2, results=str(results), progress=False))
    with RunLog("adaptive_tom.table2", results=results, meta={"model": "local", "source": "llm:local"}) as log:
        log.event("action", {"action": 0}, condition="memory_1:FTL:A-ToM vs ToM-0", episode=0, step=0, agent="p1")
        log.event("score", {"reward": 1.0}, condition="memory_1:FTL:A-ToM vs ToM-0", episode=0)
    return formal.run_id, log.run_id


def _run_doc(
    doc: Path, here: Path, env: dict[str, str], formal: str, tmp_path: Path, failed: list[str], ran: list[str]
) -> None:
    """Run ``doc``'s commands (those in RUN, not SKIP), python blocks and models.yaml blocks; note what failed."""
    where = doc.relative_to(ROOT)
    for c in readme_commands(doc):
        if not any(c.starts(p) for p in RUN) or any(c.starts(p) for p in SKIP):
            continue
        proc = subprocess.run(
            ["/bin/bash", "-c", c.text], cwd=here, env=env, capture_output=True, text=True, timeout=180
        )
        ran.append(c.text)
        out = proc.stdout + proc.stderr
        if proc.returncode != 0 or "Traceback" in out:
            failed.append(f"{where}:{c.line}: `{c.text}` exited {proc.returncode}:\n{out[-1500:]}")
        elif c.starts((TOMLIB, "view")) and c.words[2:3] == ["adaptive_tom.table2"]:
            assert f"opening {formal}" in out, out  # the formal run, as the README says, not the newer llm one
    for b in blocks(doc.read_text()):
        if b.language == "python":
            snippet = tmp_path / f"{doc.stem}_{b.line}.py"
            snippet.write_text(b.body + "\n")
            proc = subprocess.run(
                [".venv/bin/python", str(snippet)], cwd=here, env=env, capture_output=True, text=True, timeout=180
            )
            ran.append(f"python block at line {b.line}")
            if proc.returncode != 0:
                failed.append(f"{where}:{b.line}: the python block exited {proc.returncode}:\n{proc.stderr[-1500:]}")
        elif b.language == "yaml" and re.match(r"^models:", b.body):
            from tomlib.llm._config import read_models

            (tmp_path / f"{doc.stem}_{b.line}.yaml").write_text(b.body + "\n")
            models, broken = read_models(tmp_path / f"{doc.stem}_{b.line}.yaml")
            if broken or not models:
                failed.append(f"{where}:{b.line}: the yaml block is not a usable models.yaml: {broken}")


def test_readme_commands_work_from_a_new_shell_in_the_project_root(tmp_path: Path) -> None:
    assert (ROOT / TOMLIB).exists(), "run ./reproduce.sh first: it installs the tomlib command into .venv"
    env = clean_env(tmp_path)
    formal, _ = write_runs(Path(env["TOMLIB_RESULTS"]))
    here = scratch_root(tmp_path)
    failed, ran = [], []
    for doc in DOCS:
        _run_doc(doc, here, env, formal, tmp_path, failed, ran)
    assert ran, "no README command was run"
    assert not failed, "\n\n".join(failed)


# -- `view` on an experiment with several runs -----------------------------------------------------------------------


def _run(run_id: str, results: Path, source: str, conditions: int, episodes: int, experiment: str = "") -> str:
    experiment = experiment or run_id.rsplit("-", 3)[0]
    with RunLog(experiment, run_id=run_id, results=results, meta={"source": source, "episodes": episodes}) as log:
        for c in range(conditions):
            for e in range(episodes):
                for step in range(2):
                    log.event("action", {"action": step}, condition=f"c{c}", episode=e, step=step, agent="p1")
                log.event("score", {"reward": 1.0}, condition=f"c{c}", episode=e)
    return run_id


def _dead_pid() -> int:
    """A PID that names no process any more: a child that has exited and been reaped."""
    proc = subprocess.Popen(["/bin/true"])
    proc.wait()
    return proc.pid


@pytest.fixture
def results(isolated: Path, stand_in_renderer: Path) -> Path:
    """A tmp results folder, and a stand-in for the widget renderer ./reproduce.sh fetches (the page is not opened)."""
    return isolated / "results"


def test_view_lists_an_experiments_runs_and_opens_the_one_with_the_most_episodes(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    formal = _run("adaptive_tom.table2-20261101-100000-aaaa", results, "formal", 3, 4)
    llm = _run("adaptive_tom.table2-20261101-100500-bbbb", results, "llm:local", 3, 1)  # newer, as notebook 02 writes
    killed = _run("adaptive_tom.table2-20261101-101000-cccc", results, "llm:local", 9, 9)
    folder = results / "runs" / killed  # as a killed run leaves it: no index (its counts are unknown), its PID gone
    (folder / "events.index.json").unlink()
    log = (folder / "events.jsonl").read_text().replace(f'"pid":{os.getpid()}', f'"pid":{_dead_pid()}', 1)
    (folder / "events.jsonl").write_text(log)
    assert main(["view", "adaptive_tom.table2"]) == 0
    out = capsys.readouterr().out
    listed = {line.split()[1] if line.startswith("*") else line.split()[0]: line for line in out.splitlines()[2:5]}
    assert "llm:local" in listed[killed] and "(no index yet)" in listed[killed]
    assert listed[formal].startswith("* ") and "formal" in listed[formal] and "12 episodes" in listed[formal]
    assert "llm:local" in listed[llm] and "3 episodes" in listed[llm] and "3 conditions" in listed[llm]
    assert f"opening {formal}: the run with the most episodes" in out and "tomlib view ID" in out
    assert (results / "views" / f"{formal}.html").exists() and not (results / "views" / f"{llm}.html").exists()

    assert main(["view", llm]) == 0  # a run id opens that run, without a listing
    out = capsys.readouterr().out
    assert "opening" not in out and (results / "views" / f"{llm}.html").exists()


def test_view_prefers_the_runs_the_executed_notebooks_use(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = _run("adaptive_tom.table2-20261101-090000-aaaa", results, "formal", 3, 6)  # a superseded, bigger run
    formal = _run("adaptive_tom.table2-20261101-100000-bbbb", results, "formal", 3, 2)
    llm = _run("adaptive_tom.table2-20261101-100100-cccc", results, "llm:local", 3, 1)
    stamp = results / "notebooks" / "02_adaptive_tom_table2.stamp.json"  # the notebook's last execution, 10:00-10:02
    stamp.parent.mkdir(parents=True)
    start = calendar.timegm(time.strptime("20261101100000", "%Y%m%d%H%M%S"))  # run ids hold UTC
    stamp.write_text(json.dumps({"started": start, "finished": start + 120}))
    assert main(["view", "adaptive_tom.table2"]) == 0
    out = capsys.readouterr().out
    assert f"opening {formal}: the run with the most episodes among those the executed notebooks" in out, out
    assert f"{old}" in out and "unused" in out and f"{llm}" in out


def test_view_opens_the_run_of_the_default_reading_and_runs_list_says_each_runs_source_and_reading(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Notebook 02 writes its formal table, its llm:local one, then the formal table again under each of our other
    readings, as big and newer, with no steps logged. `view adaptive_tom.table2` opened the newest of those (on main:
    "This episode's steps were not logged"); it opens the default reading's. `runs list` had no header and no source
    or reading column."""
    formal = _run("adaptive_tom.table2-20261101-100000-aaaa", results, "formal", 3, 4)
    _run("adaptive_tom.table2-20261101-100500-bbbb", results, "llm:local", 3, 1)
    meta = {"source": "formal", "episodes": 4, "reading": "prefer=none"}
    other = "adaptive_tom.table2-20261101-101000-cccc"
    with RunLog("adaptive_tom.table2", run_id=other, results=results, meta=meta, detail_episodes=0) as log:
        for c in range(3):
            for e in range(4):
                log.event("score", {"reward": 1.0}, condition=f"c{c}", episode=e)
    old = "adaptive_tom.table2-20261101-101500-dddd"  # logged before runs said their reading: no steps, so another
    with RunLog(
        "adaptive_tom.table2", run_id=old, results=results, meta={"source": "formal"}, detail_episodes=0
    ) as log:
        for c in range(3):
            for e in range(4):
                log.event("score", {"reward": 1.0}, condition=f"c{c}", episode=e)
    assert main(["view", "adaptive_tom.table2"]) == 0
    out = capsys.readouterr().out
    assert f"opening {formal}: the run with the most episodes" in out and "of the default reading" in out, out
    assert out.splitlines()[1].split()[:3] == ["run", "source", "reading"]
    listed = {line.lstrip("* ").split()[0]: line for line in out.splitlines()[2:6]}
    assert "prefer=none" in listed[other] and " other " in listed[old] and " default " in listed[formal]

    assert main(["runs", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:4] == ["run", "source", "reading", "written"], lines[0]
    rows = {line.split()[0]: line.split() for line in lines[1:5]}
    assert rows[formal][1:3] == ["formal", "default"] and rows[other][1:3] == ["formal", "prefer=none"]
    assert rows["adaptive_tom.table2-20261101-100500-bbbb"][1:3] == ["llm:local", "default"]


def test_an_adaptive_tom_run_says_its_reading() -> None:
    from tomlib.experiments.adaptive_tom._setup import Setup

    assert Setup().reading() == "default" and Setup(model="local", tie_break="shared").reading() == "default"
    assert Setup(tie_break="shared", tie_epsilon=0.05).reading() == "tie_break=shared(ε=0.05)"
    assert Setup(prefer="none", carry_losses=True).reading() == "prefer=none, carry_losses=True"
    assert Setup(pbt="ppo-selfplay", ppo_member=1).reading() == "ppo_member=1"


def test_view_takes_an_experiment_name_whole(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table3 = _run("adaptive_tom.table3-20261101-100000-aaaa", results, "formal", 1, 1)
    _run("adaptive_tom.table3_stand_in-20261101-100100-bbbb", results, "formal+ppo:selfplay", 1, 1)
    assert main(["view", "adaptive_tom.table3"]) == 0  # not the newer stand-in run, whose id starts the same
    assert (results / "views" / f"{table3}.html").exists()
    assert main(["view", "adaptive_tom.tabel3"]) == 2
    assert "adaptive_tom.table3, adaptive_tom.table3_stand_in" in capsys.readouterr().err


def test_view_names_a_condition_the_run_does_not_hold_in_one_line(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _run("adaptive_tom.table2-20261101-100000-aaaa", results, "formal", 12, 1)
    assert main(["view", run, "--condition", "c11"]) == 0
    assert main(["view", run, "--condition", "c111"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert err == (
        "tomlib: error: no episodes of condition 'c111' in these runs (did you mean 'c11'?); "
        "they hold: c0, c1, c10, c11, c2, c3, c4, c5, … (12 in all)"
    )
    assert main(["view", run, "--condition", "1"]) == 2  # a part of their names: the ones that have it
    assert capsys.readouterr().err.strip().endswith("those with '1' in their name: c1, c10, c11")


# -- a Python without tomlib's dependencies --------------------------------------------------------------------------


def test_a_python_without_the_dependencies_names_the_module_and_the_fix(tmp_path: Path) -> None:
    system = Path("/usr/bin/python3")
    if not system.exists():
        pytest.skip("no /usr/bin/python3")
    env = clean_env(tmp_path)
    has_deps = subprocess.run([system, "-c", "import ipywidgets, orjson, pandas"], env=env, capture_output=True)
    flags = ["-S"] if has_deps.returncode == 0 else []  # without site-packages: surely none of them
    proc = subprocess.run(
        [system, *flags, "-m", "tomlib", "view", "x"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    (line,) = proc.stderr.splitlines()
    m = re.fullmatch(
        r"tomlib: error: this Python \((\S+)\) has no module '(\w+)', which tomlib needs\. "
        r"Run \./reproduce\.sh once \(it installs tomlib into \.venv\), then: \.venv/bin/tomlib view x",
        line,
    )
    assert m and Path(m[1]).resolve() == system.resolve(), line

    proc = subprocess.run(  # the project's environment runs `python -m tomlib` as before
        [".venv/bin/python", "-m", "tomlib", "view", "x"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 2 and proc.stderr.startswith("tomlib: error: No run 'x'"), proc.stderr


def test_a_missing_module_in_the_projects_environment_says_to_rerun_reproduce(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    import tomlib.__main__ as cli

    def missing(name: str) -> object:
        def command(args: object) -> int:
            raise ModuleNotFoundError(f"No module named '{name}'", name=name)

        return command

    monkeypatch.setattr(sys, "prefix", str(ROOT / ".venv"))
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(cli, "_cmd_models", missing("llama_cpp"))
    assert main(["models"]) == 2
    err = capsys.readouterr().err
    assert "has no module 'llama_cpp'" in err and "rerun ./reproduce.sh" in err and len(err.splitlines()) == 1
    monkeypatch.setattr(cli, "_cmd_models", missing("tomlib.nothing"))  # tomlib's own: a bug, with its traceback
    with pytest.raises(ModuleNotFoundError):
        main(["models"])


def test_the_readme_parser_sees_continuations_comments_and_assignments() -> None:
    block = Block("bash", 1, "# a comment\nA=1 .venv/bin/tomlib cache stats  # why\n.venv/bin/tomlib runs \\\n  list\n")
    got = [(c.words, c.line) for c in commands(block)]
    assert got == [([TOMLIB, "cache", "stats"], 3), ([TOMLIB, "runs", "list"], 4)]
    assert BARE_PYTHON.search("`python -m tomlib runs list`") and not BARE_PYTHON.search(".venv/bin/python -m tomlib")
    assert os.path.basename(TOMLIB) == "tomlib"
