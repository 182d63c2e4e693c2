"""Errors a user can cause at the command line: one line naming the cause and the fix, exit code 2, no traceback."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pytest

from tests.planning.pilots import CLAIM as PILOT_CLAIM
from tests.planning.pilots import pilot as make_pilot
from tomlib.__main__ import main

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

ROOT = Path(__file__).resolve().parents[1]


def one_line_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    code = main(argv)
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.startswith("tomlib: error: ") and "Traceback" not in err and "\n" not in err, err
    return err


def write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def test_unknown_notebook_lists_the_series(capsys: pytest.CaptureFixture[str]) -> None:
    err = one_line_error(capsys, ["run", "99", "--no-html"])
    assert "No notebook '99'" in err and "00_quickstart" in err


def test_a_notebook_number_without_its_zero_is_suggested(capsys: pytest.CaptureFixture[str]) -> None:
    err = one_line_error(capsys, ["run", "1", "--no-html"])
    assert "No notebook '1'" in err and "(did you mean '01'?)" in err and "01_adaptive_tom_table1" in err
    assert "(did you mean '00_quickstart'?)" in one_line_error(capsys, ["run", "quickstart", "--no-html"])


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("09_coalition_tabel2", "09_coalition_table2_fig2"),  # difflib's ratio gave 10_coalition_table3
        ("coalition_tabel2", "09_coalition_table2_fig2"),
        ("10_coalition_table2", "10_coalition_table3"),  # the number is a part too: one edit from 10's name
        ("adaptive_tom_tabel1", "01_adaptive_tom_table1"),
        ("13_coalition_reasonning", "13_coalition_reasoning"),
        ("quickstrat", "00_quickstart"),
        ("mechansim", "07_coalition_mechanism"),
        ("fig3", "05_adaptive_tom_fig3"),
        ("tabel7", "14_coalition_table7"),
        ("debate", "12_coalition_table4_debate"),
    ],
)
def test_a_mistyped_notebook_suggests_the_one_its_parts_name(
    capsys: pytest.CaptureFixture[str], typo: str, meant: str
) -> None:
    err = one_line_error(capsys, ["run", typo, "--no-html"])
    assert f"No notebook '{typo}'" in err and f"(did you mean '{meant}'?)" in err, err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["00", "-p", "llm_mode", "replya"],
            "'llm_mode' must be one of replay, record, auto, got 'replya' (did you mean 'replay'?)",
        ),
        (["00", "-p", "tom_order", "3"], "'tom_order' must be one of 0, 1, 2, got 3"),
        (
            ["01", "-p", "tie_break", "shraed"],
            "'tie_break' must be one of independent, shared, got 'shraed' (did you mean 'shared'?)",
        ),
        (
            ["01", "-p", "tasks", "memory_1,gmae1"],
            "'tasks' has 'gmae1' (did you mean 'game1'?), which is not one of memory_1",
        ),
        (["03", "-p", "pbt", "ppo"], "'pbt' must be one of none, ppo-selfplay, got 'ppo'"),
        (["04", "-p", "tasks", "game1"], "'tasks' has 'game1', which is not one of memory_1, memory_n"),
        (
            ["06", "-p", "dynamics", "paperr"],
            "'dynamics' must be one of authors, paper, got 'paperr' (did you mean 'paper'?)",
        ),
        (["06", "-p", "verification", "grounder"], "(did you mean 'grounded'?)"),
        (["06", "-p", "observation", "ful"], "(did you mean 'full'?)"),
        (["06", "-p", "configs", "Base,TOM"], "'configs' has 'TOM' (did you mean 'ToM'?)"),
        (
            ["08", "-p", "pm_history", "lats"],
            "'pm_history' must be one of full, last, got 'lats' (did you mean 'last'?)",
        ),
        (["12", "-p", "selection", "best_aligned"], "got 'best_aligned' (did you mean 'best-aligned'?)"),
        (["13", "-p", "zero_credit", "as_zero"], "got 'as_zero' (did you mean 'as-zero'?)"),
    ],
    ids=lambda v: v[2] if isinstance(v, list) else None,
)
def test_an_enumerated_value_is_refused_before_any_kernel_with_the_closest_choice(
    isolated: Path, capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    err = one_line_error(capsys, ["run", *argv, "--no-html"])
    assert expected in err
    assert not (isolated / "results" / "notebooks").exists() or not any((isolated / "results" / "notebooks").iterdir())


def test_every_enumerated_default_of_the_series_is_one_of_its_choices() -> None:
    """The runner's lists come from the library; a notebook whose default drifted from them would be refused."""
    from tomlib.agents import is_agent_spec
    from tomlib.runner import find_notebooks
    from tomlib.runner._execute import declared_parameters
    from tomlib.runner._params import AGENT_PATHS, CHOICES, allowed_values

    seen = set()
    for nb in find_notebooks():
        for name, info in declared_parameters(nb).items():
            if name in CHOICES:
                seen.add(name)
                default = ast.literal_eval(info["default"])
                items = default.split(",") if CHOICES[name][1] else [default]
                allowed = allowed_values(name, nb.stem)
                path = name in AGENT_PATHS  # an agent's import path is a value too (notebook 15's default)
                ok = [i in allowed or (i == "" and CHOICES[name][2]) or (path and is_agent_spec(i)) for i in items]
                assert all(ok), (nb, name)
    assert seen == set(CHOICES)  # every entry is a parameter some notebook declares


def test_unknown_profile_lists_the_profiles(capsys: pytest.CaptureFixture[str]) -> None:
    err = one_line_error(capsys, ["run", "--profile", "fulll"])
    assert "No profile 'fulll'" in err and "default" in err and "smoke" in err


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- llm_mode: replay\n", "its top level is a list"),
        ("", "is empty"),
        ("parameters: [1, 2]\n", "parameters: Input should be a valid dictionary"),
        ("parameters:\n  llm_mode: [replay\n", r"p.yaml:3:1: YAML syntax error in profile"),
        ("budget: {max_usd: lots}\n", "budget.max_usd"),
    ],
)
def test_bad_profiles(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, expected: str) -> None:
    err = one_line_error(capsys, ["run", "--profile", write(tmp_path / "p.yaml", text)])
    assert expected in err


def test_a_yaml_error_in_the_model_registry_names_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "models.yaml", "models:\n  local:\n    kind: local\n   bad indent: 1\n")
    monkeypatch.setenv("TOMLIB_CONFIGS", str(tmp_path))
    err = one_line_error(capsys, ["models"])
    assert "models.yaml:4:" in err and "YAML syntax error in the model registry" in err


def test_a_broken_model_entry_fails_only_what_uses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tomlib.llm import ConfigError, get_model_config, load_models
    from tomlib.runner._models import check_models

    configs = tmp_path / "configs"
    shutil.copytree(ROOT / "configs", configs)  # the real profiles
    registry = "models:\n  local:\n    kind: local\n  broken:\n    kind: openai\n    concurrency: lots\n"
    write(configs / "models.yaml", registry + "  also-local:\n    kind: local\n")
    monkeypatch.setenv("TOMLIB_CONFIGS", str(configs))

    assert get_model_config("also-local").kind == "local"  # a valid entry, after the broken one, loads
    with pytest.raises(ConfigError) as info:
        get_model_config("broken")
    msg = str(info.value)
    assert "models.yaml" in msg and "'broken'" in msg and "concurrency: Input should be a valid integer" in msg
    assert "\n" not in msg
    with pytest.raises(ConfigError, match=r"Unknown model 'brokn'.*broken"):  # the names are still listed
        get_model_config("brokn")
    with pytest.raises(ConfigError) as info:  # reading every entry at once still fails, in one line
        load_models()
    assert "'broken'" in str(info.value) and "\n" not in str(info.value)

    # the runner's check before any kernel: a notebook on another model goes ahead, one on `broken` stops here
    assert check_models([("00_quickstart", {"model": "local", "llm_mode": "replay"})]) == []
    err = one_line_error(capsys, ["run", "00", "--no-html", "-p", "model", "broken"])
    assert "00_quickstart: " in err and "models.yaml: model 'broken' is not valid: concurrency" in err
    assert main(["models"]) == 0  # the listing shows the valid entries and names the broken one
    out = capsys.readouterr().out
    assert "also-local" in out and "broken" in out and "concurrency" in out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (None, "does not exist"),
        ("parameters:\n  bogus: [1, 2]\n", "sets ['bogus'], which 00_quickstart does not declare"),
        ("parameters:\n  tom_ordr: [0, 1]\n", "does not declare (did you mean 'tom_order' for 'tom_ordr'?)"),
        ("parameters:\n  tom_order: [0, 1]\nfixed:\n  llm_mode: replya\n", "got 'replya' (did you mean 'replay'?)"),
        ("parameters:\n  tom_order: [1, 3]\n", "'tom_order' must be one of 0, 1, 2, got 3"),
        ("- tom_order: [0, 1]\n", "a list at its top level"),
        ("parameters:\n  tom_order: []\n", "tom_order has an empty list of values"),
        ("", "is empty"),
        ("parameters:\n  tom_order: [0, 1\n", "g.yaml:3:1: YAML syntax error in grid"),
    ],
)
def test_bad_grids(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str | None, expected: str) -> None:
    grid = tmp_path / "g.yaml"
    if text is not None:
        grid.write_text(text)
    err = one_line_error(capsys, ["sweep", "00_quickstart", "--grid", str(grid)])
    assert expected in err


def test_results_dir_that_cannot_be_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    err = one_line_error(capsys, ["run", "00", "--results", str(blocker / "results"), "--no-html"])
    assert "is not writable" in err and "--results DIR" in err


def test_a_negative_budget_is_refused_by_the_parser(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["run", "--max-usd", "-1"])
    assert info.value.code == 2 and "must be 0 or more" in capsys.readouterr().err


def _tomlib(argv: list[str], stdout: int | None = None, as_nobody: bool = False) -> subprocess.CompletedProcess[str]:
    """``python -m tomlib`` in a new process, from the checkout; as ``nobody``, with Debian's Python 3.11 and the
    venv's packages (the venv's own interpreter lies under /root, which nobody cannot enter)."""
    site = str(Path(pd.__file__).resolve().parents[1])
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "PYTHONPATH": f"{ROOT}:{site}", "PYTHONDONTWRITEBYTECODE": "1"}
    python = "/usr/bin/python3.11" if as_nobody else sys.executable
    prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"] if as_nobody else []
    return subprocess.run(
        [*prefix, python, "-m", "tomlib", *argv],
        cwd=ROOT,
        env=env,
        stdout=stdout if stdout is not None else subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=300,
    )


def test_output_into_a_closed_pipe_stops_quietly() -> None:
    """`tomlib models | head -1`: the reader is gone before tomlib writes (its end of the pipe is closed)."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = _tomlib(["models"], stdout=write)
    finally:
        os.close(write)
    assert done.returncode == 141 and done.stderr == "", done.stderr


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None or not os.access("/usr/bin/python3.11", os.X_OK),
    reason="needs root, setpriv and Debian's python3.11 to run tomlib as nobody",
)
@pytest.mark.as_nobody
def test_a_profile_another_user_owns_the_folder_of_is_one_line_with_the_ways_out() -> None:
    """As nobody, on root's checkout: plan prints its plan, then says it cannot write the profile, in one line. The
    pilot is a folder of this test's own (the checkout's results/ may not exist), one that nobody can read."""
    pilot = Path(tempfile.mkdtemp(prefix="tomlib-pilot-"))
    try:
        make_pilot(pilot, "llm:local", tasks=2, sd=3.0)
        for folder in (pilot, *(p for p in pilot.rglob("*") if p.is_dir())):
            folder.chmod(0o755)
        argv = ["plan", "--model", "gpt-4o-mini", "--claims", PILOT_CLAIM, "--pilot", str(pilot)]
        done = _tomlib(argv, as_nobody=True)
    finally:
        shutil.rmtree(pilot)
    err = done.stderr.strip()
    assert done.returncode == 2 and "Plan for gpt-4o-mini" in done.stdout, (done.stdout, err)
    assert err.startswith("tomlib: error: no permission to use ") and "\n" not in err and "Traceback" not in err, err
    assert f".tomlib/profiles/plan-gpt-4o-mini-{PILOT_CLAIM}.yaml" in err and "--out FILE" in err


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None or not os.access("/usr/bin/python3.11", os.X_OK),
    reason="needs root, setpriv and Debian's python3.11 to run tomlib as nobody",
)
@pytest.mark.as_nobody
def test_a_pilot_another_user_keeps_closed_is_one_line_about_reading_it() -> None:
    """As nobody, a --pilot inside root's private folder: the line names it and does not talk of the checkout."""
    private = Path(tempfile.mkdtemp(prefix="tomlib-private-"))  # mode 700, root's
    try:
        (private / "pilot").mkdir()
        argv = ["plan", "--model", "gpt-4o-mini", "--claims", "coalition", "--pilot", str(private / "pilot")]
        done = _tomlib(argv, as_nobody=True)
    finally:
        shutil.rmtree(private)
    err = done.stderr.strip()
    assert done.returncode == 2 and "\n" not in err and "Traceback" not in err, err
    assert err.startswith(f"tomlib: error: no permission to use {private / 'pilot'}") and "may not open it" in err
    assert "writes into the checkout" not in err


def test_a_pilot_folder_that_does_not_exist_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A typo in --pilot used to plan nothing ("no pilot" for every claim) and end 0."""
    err = one_line_error(capsys, ["plan", "--model", "gpt-4o-mini", "--claims", "coalition", "--pilot", "results/smi"])
    assert "--pilot results/smi: no such folder" in err and "check the spelling" in err


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the claims registries that the command line reads in place of the checkout's."""
    folder = tmp_path / "claims"
    shutil.copytree(ROOT / "data" / "claims", folder)
    monkeypatch.setattr("tomlib.claims._registry.claims_dir", lambda: folder)
    monkeypatch.setattr("tomlib.claims._ahead.claims_dir", lambda: folder)
    return folder


def set_query(registry: Path, claim_id: str, field: str, text: str) -> int:
    """Put ``text`` in ``field`` of ``claim_id``'s row; returns the row's line in the file."""
    path = registry / f"{claim_id.split('.')[0]}.csv"
    rows = pd.read_csv(path, dtype=str, keep_default_na=False)
    at = int(rows.index[rows["claim_id"] == claim_id][0])
    rows.loc[at, field] = text
    rows.to_csv(path, index=False)
    return at + 2


def test_a_claims_query_that_is_code_is_refused_before_any_of_it_runs(
    tmp_path: Path, registry: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A shared registry's row ran `@pd.io.common.os.system(...)` during `tomlib report`."""
    make_pilot(tmp_path / "results", "llm:local", tasks=3, sd=1.0)
    planted = tmp_path / "ran"
    line = set_query(registry, PILOT_CLAIM, "a", f"tom_order == 2 and @pd.io.common.os.system('touch {planted}') == 0")
    err = one_line_error(capsys, ["report"])
    assert err.startswith(f"tomlib: error: {registry / 'coalition.csv'}:{line} ({PILOT_CLAIM}): a: ")
    assert "'@' reaches Python names outside the units table" in err and "write a condition" in err
    assert not planted.exists() and not (tmp_path / "results" / "REPORT.md").exists()


def test_a_claims_query_naming_a_column_the_units_lack_is_one_line(
    tmp_path: Path, registry: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_pilot(tmp_path / "results", "llm:local", tasks=3, sd=1.0)
    line = set_query(registry, PILOT_CLAIM, "a", "tom_ordr == 2")
    err = one_line_error(capsys, ["report"])
    assert err.startswith(f"tomlib: error: {registry / 'coalition.csv'}:{line} ({PILOT_CLAIM}): its a `tom_ordr == 2` ")
    assert "which the units coalition.table1 lack (did you mean 'tom_order'?). Fix the query in the registry" in err
    assert not (tmp_path / "results" / "REPORT.md").exists() and not (tmp_path / "results" / "claims.csv").exists()


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        ("drop value", "lacks the column value that every units table has (paper_id, table_id, metric, value, source)"),
        ("drop metric", "lacks the column metric that every units table has"),
        ("empty", "cannot be read as a units table (No columns to parse from file)"),
        ("not utf-8", "cannot be read as a units table ('utf-8' codec can't decode byte 0xff"),
        ("markup source", "names source 'llm:<img src=x onerror=alert(1)>[x](https://evil.example)' outside the"),
    ],
)
def test_a_units_table_that_cannot_be_read_is_one_line_and_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str, expected: str
) -> None:
    make_pilot(tmp_path / "results", "llm:local", tasks=3, sd=1.0)
    path = tmp_path / "results" / "units" / "coalition.table1.csv"
    if damage.startswith("drop"):
        pd.read_csv(path).drop(columns=[damage.split()[1]]).to_csv(path, index=False)
    elif damage == "markup source":  # a source name reaches the report's prose: markup in it would become links
        rows = pd.read_csv(path)
        rows.assign(source="llm:<img src=x onerror=alert(1)>[x](https://evil.example)").to_csv(path, index=False)
    else:
        path.write_bytes(b"" if damage == "empty" else b"\xff\xfe garbage\n")
    kept = path.read_bytes()
    err = one_line_error(capsys, ["report"])
    assert err.startswith(f"tomlib: error: {path} ") and expected in err, err
    assert f"Move it out of {path.parent} (the notebook that writes coalition.table1 then writes it anew)." in err
    assert path.read_bytes() == kept and not (tmp_path / "results" / "REPORT.md").exists()


def test_writing_units_beside_a_table_that_cannot_be_read_refuses_and_keeps_it(tmp_path: Path) -> None:
    from tomlib.claims import write_units
    from tomlib.claims._units import UnitsFileError

    make_pilot(tmp_path / "results", "llm:local", tasks=3, sd=1.0)
    path = tmp_path / "results" / "units" / "coalition.table1.csv"
    rows = pd.read_csv(path)
    rows.drop(columns=["value"]).to_csv(path, index=False)
    kept = path.read_bytes()
    with pytest.raises(UnitsFileError, match="lacks the column value"):
        write_units(rows.assign(source="llm:other"), tmp_path / "results")
    assert path.read_bytes() == kept


@pytest.mark.parametrize(
    ("out", "expected"),
    [
        ("a-file/plan.yaml", "{tmp}/a-file is a file, not a folder. Choose another --out FILE."),
        ("a-file/deeper/plan.yaml", "{tmp}/a-file is a file, not a folder. Choose another --out FILE."),
        ("a-folder", "it is a folder. Name a file in it, e.g. --out {tmp}/a-folder/plan.yaml."),
    ],
)
def test_plan_out_where_no_file_can_be_written_is_one_line_and_touches_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], out: str, expected: str
) -> None:
    pilot = tmp_path / "pilot"
    make_pilot(pilot, "llm:local", tasks=2, sd=3.0)
    (tmp_path / "a-file").write_text("mine\n")
    (tmp_path / "a-folder").mkdir()
    argv = ["plan", "--model", "gpt-4o-mini", "--claims", PILOT_CLAIM, "--pilot", str(pilot), "--out"]
    err = one_line_error(capsys, [*argv, str(tmp_path / out)])
    assert err == f"tomlib: error: Cannot write the plan's profile to {tmp_path / out}: " + expected.format(
        tmp=tmp_path
    )
    assert (tmp_path / "a-file").read_text() == "mine\n" and not any((tmp_path / "a-folder").iterdir())
    assert main([*argv, str(tmp_path / "new" / "plan.yaml")]) == 0  # a folder that does not exist yet is made
    assert "notebooks:" in (tmp_path / "new" / "plan.yaml").read_text()


def _compressed_run(run_id: str) -> Path:
    from tomlib.trace import RunLog
    from tomlib.trace._index import compress_log

    with RunLog("idx", run_id=run_id) as log:
        for e in range(3):
            log.event("env_state", {"game": "matrix", "agents": ["p1", "p2"]}, condition="c0", episode=e, step=0)
            log.event("action", {"action": "a"}, condition="c0", episode=e, step=0, agent="p1")
            log.event("score", {"metric": "points", "value": float(e)}, condition="c0", episode=e)
    return compress_log(log.path)


def test_view_of_a_compressed_log_without_its_index_writes_the_page(
    tmp_path: Path, stand_in_renderer: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It ended in `IndexError: list index out of range`."""
    gz = _compressed_run("noindex")
    (gz.parent / "events.index.json").unlink()
    assert main(["view", "noindex"]) == 0, capsys.readouterr().err
    page = (tmp_path / "results" / "views" / "noindex.html").read_text()
    assert "points" in page


def test_view_of_a_log_compressed_twice_is_one_line(
    tmp_path: Path, stand_in_renderer: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import gzip

    gz = _compressed_run("twice")
    gz.write_bytes(gzip.compress(gz.read_bytes()))
    for index in (True, False):  # with its index (a member fails) and without (the scan read gzip bytes as lines)
        if not index:
            (gz.parent / "events.index.json").unlink()
        err = one_line_error(capsys, ["view", "twice"])
        assert err.startswith(f"tomlib: error: The run log {gz} is gzip-compressed twice") and "gunzip -c" in err
    assert not (tmp_path / "results" / "views" / "twice.html").exists()


@pytest.mark.parametrize("run_id", ["a/b", "../b", ".b"])
def test_a_run_id_that_is_not_a_plain_name_is_refused_before_any_kernel(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], run_id: str
) -> None:
    """`-p run_id a/b` made nested folders under results/runs."""
    err = one_line_error(capsys, ["run", "00", "-p", "run_id", run_id, "--no-html"])
    assert f"'run_id' {run_id!r} cannot name a run folder: it " in err and "give a plain name such as my-run-1" in err
    assert not (tmp_path / "results" / "runs").exists() and not (tmp_path / "results" / "b").exists()
