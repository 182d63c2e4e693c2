"""The notebook runner and sweeps, on small notebooks written by the tests and on the real series."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from tomlib.__main__ import main
from tomlib.errors import UsageError
from tomlib.runner import Profile, run_notebooks, summarize, sweep
from tomlib.runner._execute import replay_miss_hint
from tomlib.runner._papermill import Failure

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def write_nb(path: Path, params: str, body: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(params, metadata={"tags": ["parameters"]}), nbformat.v4.new_code_cell(body)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return path


@pytest.fixture
def series(tmp_path: Path) -> Path:
    d = tmp_path / "nbs"
    d.mkdir()
    write_nb(d / "01_bad.ipynb", "results_dir = ''", "raise ValueError('boom: the model said no')")
    write_nb(
        d / "02_good.ipynb",
        "results_dir = ''\ngreeting = 'hi'",
        "from pathlib import Path\n(Path(results_dir) / 'good.txt').write_text(greeting)",
    )
    return d


PROFILE = Profile(name="t", parameters={"greeting": "hello", "not_declared_anywhere": 1})


@pytest.mark.series
def test_keeps_going_past_a_failure_and_summarizes_it(series: Path, isolated: Path) -> None:
    out = run_notebooks(PROFILE, directory=series, progress=False, html=False)
    assert [(o.name, o.status) for o in out] == [("01_bad", "failed"), ("02_good", "ok")]
    assert "ValueError: boom: the model said no" in out[0].error and "cell" in out[0].error
    assert (isolated / "results" / "good.txt").read_text() == "hello"
    text = summarize(out)
    assert "1 ran, 0 up to date (skipped), 1 failed" in text
    assert "FAILED 01_bad: cell" in text


@pytest.mark.series
def test_cli_exits_non_zero_with_the_summary(series: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--profile", "smoke", "--notebooks-dir", str(series), "--no-html"])
    assert code == 1
    printed = capsys.readouterr().out
    assert "FAILED 01_bad" in printed and "boom" in printed


@pytest.mark.series
def test_up_to_date_notebooks_are_skipped_unless_forced(series: Path) -> None:
    first = run_notebooks(PROFILE, ["02"], directory=series, progress=False, html=False)
    again = run_notebooks(PROFILE, ["02"], directory=series, progress=False, html=False)
    forced = run_notebooks(PROFILE, ["02"], directory=series, progress=False, html=False, force=True)
    changed = run_notebooks(
        Profile(name="t", parameters={"greeting": "bonjour"}), ["02"], directory=series, progress=False, html=False
    )
    assert [r[0].status for r in (first, again, forced, changed)] == ["ok", "skipped", "ok", "ok"]


@pytest.mark.series
def test_failed_notebooks_are_not_considered_up_to_date(series: Path) -> None:
    run_notebooks(PROFILE, ["01"], directory=series, progress=False, html=False)
    assert run_notebooks(PROFILE, ["01"], directory=series, progress=False, html=False)[0].status == "failed"


def test_profile_parameters_for_undeclared_names_are_an_error(series: Path) -> None:
    bad = Profile(name="t", notebooks={"02_good": {"gretting": "typo"}})
    out = run_notebooks(bad, ["02"], directory=series, progress=False, html=False)
    assert out[0].status == "failed" and "gretting" in out[0].error and "declare" in out[0].error


def test_unknown_notebook_name_lists_the_series(series: Path) -> None:
    with pytest.raises(UsageError, match="01_bad, 02_good"):
        run_notebooks(PROFILE, ["99"], directory=series, progress=False)


@pytest.mark.series
def test_sweep_runs_the_grid_in_parallel_and_resumes(tmp_path: Path, isolated: Path) -> None:
    d = tmp_path / "sw"
    d.mkdir()
    nb = write_nb(
        d / "05_sweep.ipynb",
        "results_dir = ''\ntom_order = 0\nseed = 1",
        "from pathlib import Path\n"
        "assert seed != 13, 'unlucky seed'\n"
        "Path(results_dir).mkdir(parents=True, exist_ok=True)\n"
        "(Path(results_dir) / 'out.txt').write_text(f'{tom_order}-{seed}')",
    )
    grid = tmp_path / "grid.yaml"
    grid.write_text("parameters:\n  tom_order: [0, 1, 2]\n  seed: [1, 13]\n")
    index = sweep(str(nb), grid, jobs=2, profile=Profile(name="t"), name="s", progress=False)
    df = pd.read_csv(index)
    assert len(df) == 6 and list(df.columns[:3]) == ["run_id", "tom_order", "seed"]
    ok = df[df["status"] == "ok"]
    assert len(ok) == 3 and set(ok["seed"]) == {1}
    assert all("unlucky seed" in e for e in df[df["status"] == "failed"]["error"])
    for row in ok.itertuples():
        assert (index.parent / row.results_dir / "out.txt").read_text() == f"{row.tom_order}-1"
    stamps = {r.run_id: (index.parent / r.output).stat().st_mtime_ns for r in ok.itertuples()}
    # resume: the 3 completed runs are not executed again; the failed ones are retried
    sweep(str(nb), grid, jobs=2, profile=Profile(name="t"), name="s", progress=False)
    assert {
        r: (index.parent / pd.read_csv(index).set_index("run_id").loc[r, "output"]).stat().st_mtime_ns for r in stamps
    } == stamps


@pytest.mark.parametrize(
    ("cell", "grid_text", "error", "match"),
    [
        ("results_dir = ''\na = 1", "parameters:\n  b: [1, 2]\n", ValueError, r"sets \['b'\]"),
        (
            "results_dir: str = ''\nepisodes: int = 3",
            "parameters:\n  episodes: [2, 2.5]\n",
            UsageError,
            r"'episodes' must be int .* got 2.5",
        ),
    ],
    ids=["undeclared name", "wrong type"],
)
def test_sweep_rejects_a_grid_the_notebook_cannot_take(
    tmp_path: Path, cell: str, grid_text: str, error: type[Exception], match: str
) -> None:
    nb = write_nb(tmp_path / "x.ipynb", cell, "pass")
    grid = tmp_path / "g.yaml"
    grid.write_text(grid_text)
    with pytest.raises(error, match=match):
        sweep(str(nb), grid, profile=Profile(name="t"), progress=False)


@pytest.mark.series
def test_the_offline_series_runs_end_to_end_at_its_default_sizes(offline_series: dict) -> None:  # type: ignore[type-arg]
    """``./reproduce.sh``'s main job: every notebook of the series runs offline (the committed transcripts replayed),
    writes its executed copy and page, and no output shows a key its kernels had in their environment."""
    from tests.conftest import PLANTED

    outcomes, res = offline_series["outcomes"], offline_series["results"]
    assert outcomes and all(o["status"] == "ok" for o in outcomes), offline_series["summary"]
    assert len(outcomes) == len(sorted((Path(__file__).parents[2] / "notebooks").glob("[0-9][0-9]_*.ipynb")))
    for path in res.rglob("*"):
        if path.is_file():
            assert PLANTED.encode() not in path.read_bytes(), f"secret leaked into {path}"
    for o in outcomes:
        assert (res / "notebooks" / f"{o['name']}.ipynb").exists()
        assert (res / "notebooks" / f"{o['name']}.html").exists()
    report = (res / "REPORT.md").read_text()
    assert "00_quickstart" in report
    # the claims engine's check on declared truth, made on the run's background thread and shown in REPORT
    check = pd.read_csv(res / "claims_calibration.csv")
    assert check["path"].nunique() >= 8 and (check["reps"] == 20).all()
    assert "Can the verdicts be trusted?" in report and "## The claims engine on declared truth" in report


@pytest.mark.series
def test_run_takes_parameters_and_names_a_typo_or_a_wrong_type(
    series: Path, isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_nb(series / "03_typed.ipynb", "results_dir: str = ''\nepisodes: int = 30  # repetitions", "x = episodes")
    base = ["run", "03", "--notebooks-dir", str(series), "--no-html", "--results", str(isolated / "r")]
    assert main([*base, "-p", "episode", "5"]) == 2
    assert "'episode' is not a parameter of 03_typed (did you mean 'episodes'?)" in capsys.readouterr().err
    assert main([*base, "-p", "episodes", "five"]) == 2
    assert "'episodes' must be int (default 30), got 'five'" in capsys.readouterr().err
    assert main([*base, "-p", "episodes", "5"]) == 0
    stamp = (isolated / "r" / "notebooks" / "03_typed.stamp.json").read_text()
    assert '"episodes": 5' in stamp
    assert main([*base, "-y", "episodes: 7"]) == 0  # a changed parameter reruns
    assert '"episodes": 7' in (isolated / "r" / "notebooks" / "03_typed.stamp.json").read_text()


def test_plain_papermill_names_a_misspelled_parameter_of_a_real_notebook(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Without our runner, papermill itself logs the typo (it then runs the default), as README says."""
    import papermill

    from tomlib.paths import project_root

    nb = sorted((project_root() / "notebooks").glob("01_*.ipynb"))[0]
    with caplog.at_level("WARNING", logger="papermill"):
        papermill.execute_notebook(
            str(nb), str(tmp_path / "out.ipynb"), parameters={"episode": 5, "episodes": 2}, prepare_only=True
        )
    assert "Passed unknown parameter: episode" in caplog.text
    assert "Passed unknown parameter: episodes" not in caplog.text


@pytest.mark.series
def test_what_is_exported_names_no_local_path_and_stamps_the_sandbox(series: Path, isolated: Path) -> None:
    from tomlib.paths import project_root
    from tomlib.report import build_report

    write_nb(
        series / "03_paths.ipynb",
        "results_dir = ''",
        "import tomlib.paths\nprint(results_dir, tomlib.paths.project_root(), tomlib.paths.results_dir())",
    )
    out = run_notebooks(PROFILE, ["03"], directory=series, progress=False, sandbox="rlimits-only")
    assert out[0].status == "ok", out[0].error
    build_report()
    results = isolated / "results"
    files = [*results.glob("notebooks/03_paths*"), results / "REPORT.md", results / "REPORT.html"]
    assert {f.suffix for f in files} >= {".ipynb", ".html", ".json", ".md"}
    for f in files:
        text = f.read_text()
        assert str(isolated) not in text and str(project_root()) not in text, f
    executed = (results / "notebooks" / "03_paths.ipynb").read_text()
    assert "results ." in executed  # the printed paths, written as they read anywhere
    stamp = json.loads((results / "notebooks" / "03_paths.stamp.json").read_text())
    assert stamp["sandbox"] == "rlimits-only" and stamp["parameters"]["results_dir"] == "results"


def test_an_unknown_sandbox_mode_fails_before_any_notebook_runs(
    series: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", "--notebooks-dir", str(series), "--no-html", "--sandbox", "rlimit-only"])
    err = capsys.readouterr().err
    assert code == 2 and "Unknown sandbox mode 'rlimit-only'" in err and "rlimits-only" in err
    assert not (series.parent / "results" / "notebooks" / "02_good.stamp.json").exists()


@pytest.mark.series
def test_a_log_gets_one_plain_line_per_notebook_not_bar_refreshes(
    series: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_notebooks(PROFILE, directory=series, html=False)  # progress on, output captured: not a terminal
    out, err = capsys.readouterr()
    assert "\r" not in out + err
    assert "notebooks (t, 1 local worker): 2 to run" in out
    assert "[1/2] 01_bad failed in" in out and "boom" in out and "[2/2] 02_good ok in" in out


@pytest.mark.series
def test_sweep_run_folders_spell_out_their_grid_values_and_old_folders_resume(
    tmp_path: Path, isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tomlib.runner import _sweep

    nb = write_nb(
        tmp_path / "05_sweep.ipynb",
        "results_dir = ''\ntom_order = 0\nlabel = 'a b/c'",
        "from pathlib import Path\nPath(results_dir).mkdir(parents=True, exist_ok=True)\n"
        "(Path(results_dir) / 'out.txt').write_text(f'{tom_order}')",
    )
    grid = tmp_path / "grid.yaml"
    grid.write_text("parameters:\n  tom_order: [0, 1]\nfixed:\n  label: 'a b/c'\n")
    # a sweep made before run ids were readable: its ids are the hash alone
    with monkeypatch.context() as legacy:
        legacy.setattr(_sweep, "run_id_for", lambda stem, params, point=None: _sweep.legacy_run_id(stem, params))
        index = sweep(str(nb), grid, profile=Profile(name="t"), name="s", progress=False)
    assert index.is_relative_to(isolated)
    old = pd.read_csv(index).set_index("run_id")
    assert all(len(rid) == len("05_sweep-") + 10 for rid in old.index)
    made = {rid: (index.parent / old.loc[rid, "output"]).stat().st_mtime_ns for rid in old.index}

    grid.write_text("parameters:\n  tom_order: [0, 1, 2]\nfixed:\n  label: 'a b/c'\n")
    index = sweep(str(nb), grid, profile=Profile(name="t"), name="s", progress=False)
    df = pd.read_csv(index).set_index("run_id")
    assert {rid: (index.parent / df.loc[rid, "output"]).stat().st_mtime_ns for rid in made} == made  # resumed
    (new,) = set(df.index) - set(made)
    assert new.startswith("05_sweep-tom_order=2-") and len(new) == len("05_sweep-tom_order=2-") + 10
    assert (index.parent / new / "out.txt").read_text() == "2" and df.loc[new, "status"] == "ok"

    long = _sweep.run_id_for("05_sweep", {"x": "y" * 500, "label": "a b/c"}, {"x": "y" * 500, "label": "a b/c"})
    assert len(long) <= len("05_sweep-") + _sweep.READABLE_MAX + 11 and "/" not in long and " " not in long
    assert _sweep.run_id_for("n", {"a": 1}, {"a": 1}) != _sweep.run_id_for("n", {"a": 1, "b": 2}, {"a": 1})


@pytest.mark.series
def test_an_empty_string_parameter_survives_the_sweeps_results_csv(tmp_path: Path, isolated: Path) -> None:
    from tomlib.runner import read_sweep_results

    nb = write_nb(
        tmp_path / "05_table.ipynb",
        "results_dir = ''\nmodel = 'local'\nseed = 1",
        "import pandas as pd\nfrom tomlib.report import write_table\n"
        "write_table(pd.DataFrame({'paper_id': ['adaptive_tom'], 'table_id': ['demo'], 'metric': ['reward'],"
        " 'source': ['formal'], 'value': [float(seed)], 'paper_value': [float('nan')]}), results_dir)",
    )
    grid = tmp_path / "grid.yaml"
    grid.write_text("parameters:\n  seed: [1, 2]\nfixed:\n  model: ''\n")
    index = sweep(str(nb), grid, profile=Profile(name="t"), name="s", progress=False)
    got = read_sweep_results(index.parent)
    assert list(got["params.model"]) == ["", ""] and sorted(got["params.seed"]) == [1, 2]
    assert got["paper_value"].isna().all() and sorted(got["value"]) == [1.0, 2.0]  # the tables read as before
    assert read_sweep_results(index.with_name("results.csv")).equals(got)


@pytest.mark.series
def test_an_exported_page_finds_every_icon_font_beside_it(
    series: Path, isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The renderer's named modules ask for Font Awesome under ``@jupyter-widgets/`` beside the page, the
    renderer itself under its own folder: every font request of the page finds its file, offline."""
    from tests.widgets.test_browser import CHROMIUM_FLAGS, ICONS_LOADED, browser_setup, offline

    chromium, webdeps = browser_setup()
    monkeypatch.setenv("TOMLIB_WEBDEPS", str(webdeps))
    write_nb(series / "03_icons.ipynb", "results_dir = ''", "import ipywidgets\nipywidgets.Button(icon='play')")
    out = run_notebooks(PROFILE, ["03"], directory=series, progress=False)
    assert out[0].status == "ok", out[0].error
    page_file = isolated / "results" / "notebooks" / "03_icons.html"
    from playwright.sync_api import sync_playwright

    blocked: list[str] = []
    failed: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        page = browser.new_page()
        page.route("**/*", offline(blocked))
        page.on("requestfailed", lambda r: failed.append(r.url))
        page.goto(page_file.as_uri())
        page.wait_for_selector(".widget-button", timeout=30_000)
        page.wait_for_function(ICONS_LOADED, timeout=10_000)
        page.wait_for_timeout(500)
        browser.close()
    assert not blocked, blocked
    assert not failed, failed  # before: @jupyter-widgets/<font>.woff2, .woff and .ttf were missing


@pytest.mark.series
def test_a_replay_miss_under_changed_parameters_says_the_recordings_are_of_the_defaults(tmp_path: Path) -> None:
    d = tmp_path / "nbs"
    d.mkdir()
    write_nb(
        d / "01_replay.ipynb",
        'results_dir = ""\nmodel = "local"  # the model rows; "" skips them\nseed = 42',
        "from tomlib.llm import ReplayMiss\nif model and seed != 42:\n    raise ReplayMiss('nothing recorded here')",
    )
    run = dict(directory=d, progress=False, html=False, force=True)
    (changed,) = run_notebooks(PROFILE, overrides={"seed": 3}, **run)  # type: ignore[arg-type]
    assert changed.status == "failed"
    assert "The recorded transcripts answer 01_replay's own parameters; this run changed seed=3." in changed.error
    assert 'Without a model (-p model ""), it runs under any values' in changed.error
    assert changed.failure is Failure.REPLAY_MISS
    assert replay_miss_hint(changed.failure, d / "01_replay.ipynb", {"seed": 42}, {}) == ""  # the defaults: no hint
    no_model = replay_miss_hint(changed.failure, d / "01_replay.ipynb", {"seed": 3, "model": ""}, {"seed": 3})
    assert "this run changed seed=3" in no_model and "Without a model" not in no_model  # it has none already
