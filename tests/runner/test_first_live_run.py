"""A paying user's first live run (issue 26): the estimate on the terminal before any call and a refusal when it
exceeds the budget, model names checked before any kernel, a failed attempt never over a good notebook, every REPORT
table marked with the run it came from, and a hint when recordings exist under another endpoint."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.runner.test_runner import write_nb
from tomlib.__main__ import main
from tomlib.report import build_report
from tomlib.testing import FakeOpenAIServer

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

ROOT = Path(__file__).resolve().parents[2]
PRICED = "price_per_1k_input: 0.001, price_per_1k_output: 0.002"

ESTIMATED_CALLS = """
from tomlib.experiments._cost import price
from tomlib.llm import ChatModel
price("fake", 180, (450, 96)).announce("fake")  # 180 calls at 450 + 96 tokens: about $0.12
chat = ChatModel.from_name("fake", mode="auto")
for i in range(calls):
    chat.complete_sync([{"role": "user", "content": f"question {i}"}], sample_key={"experiment": "t", "step": i})
"""


def _models(isolated: Path, monkeypatch: pytest.MonkeyPatch, server: FakeOpenAIServer, extra: str = "") -> None:
    configs = isolated / "configs"
    if not configs.exists():
        shutil.copytree(ROOT / "configs", configs)  # the real profiles
    body = f"models:\n  fake: {{kind: openai, base_url: '{server.base_url}', {PRICED}}}\n{extra}"
    (configs / "models.yaml").write_text(body)
    monkeypatch.setenv("TOMLIB_CONFIGS", str(configs))


@pytest.mark.series
def test_the_estimate_reaches_the_terminal_and_a_notebook_over_the_budget_spends_nothing(
    isolated: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAIServer() as server:
        _models(isolated, monkeypatch, server)
        nbs = isolated / "nbs"
        nbs.mkdir()
        write_nb(nbs / "01_live.ipynb", "calls = 3", ESTIMATED_CALLS)
        base = ["run", "--notebooks-dir", str(nbs), "--no-html", "--max-usd", "0.05"]

        assert main(base) == 1
        out = capsys.readouterr().out
        assert server.n_requests == 0  # refused before the first call
        line = next(ln for ln in out.splitlines() if ln.startswith("01_live: fake: 180 model calls"))
        assert "about $0.12" in line
        assert "STOPPED 01_live: Refused before spending" in out
        assert "about $0.12" in out.split("STOPPED 01_live")[1] and "$0.05 of the budget is left" in out
        assert "--max-usd 0.12" in out and "--spend-to-budget" in out
        assert "Spend is logged in" in out
        ledger = re.search(r"Spend is logged in (\S+\.jsonl)\.", out)
        assert ledger and Path(ledger[1]).exists()  # the file it names is there

        assert main([*base, "--spend-to-budget"]) == 0  # spend up to the budget: 3 calls fit in $0.05
        out = capsys.readouterr().out
        assert server.n_requests == 3 and "0 failed" in out


def test_an_unknown_model_is_caught_before_any_kernel_with_the_closest_name(
    isolated: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAIServer() as server:
        _models(isolated, monkeypatch, server, f"  mykey-model: {{kind: openai, base_url: '{server.base_url}'}}\n")
        assert main(["run", "08", "--no-html", "-p", "models", "mykey-modle", "-p", "llm_mode", "auto"]) == 2
        err = capsys.readouterr().err
        assert "models 'mykey-modle' is not a configured model (did you mean 'mykey-model'?)" in err
        assert "Nothing was run" in err
        assert not list((isolated / "results" / "notebooks").glob("08_*"))  # no kernel started, nothing written

        # recording calls live needs the key: refused in the runner, not seconds into a kernel
        extra = f"  keyed: {{kind: openai, base_url: '{server.base_url}', api_key_env: TOMLIB_TEST_ABSENT_KEY}}\n"
        _models(isolated, monkeypatch, server, extra)
        monkeypatch.delenv("TOMLIB_TEST_ABSENT_KEY", raising=False)
        assert main(["run", "08", "--no-html", "-p", "models", "keyed", "-p", "llm_mode", "record"]) == 2
        assert "needs its key in $TOMLIB_TEST_ABSENT_KEY" in capsys.readouterr().err
        assert server.n_requests == 0


@pytest.mark.series
def test_a_failed_attempt_is_kept_beside_the_good_notebook_and_the_report_says_which_is_which(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nbs = isolated / "nbs"
    nbs.mkdir()
    body = (
        "import pandas as pd\nfrom tomlib.report import write_table\n"
        "if tag == 'other':\n    raise RuntimeError('the model name was wrong')\n"
        "write_table(pd.DataFrame({'paper_id': ['adaptive_tom'], 'table_id': ['demo'], 'metric': ['reward'],"
        " 'source': ['formal'], 'value': [1.0]}), results_dir)\n"
        "print('made with', tag)"
    )
    write_nb(nbs / "01_demo.ipynb", "results_dir = ''\ntag = 'first'", body)
    base = ["run", "--notebooks-dir", str(nbs)]
    out_dir = isolated / "results" / "notebooks"

    assert main(base) == 0
    good, good_page = (out_dir / "01_demo.ipynb").read_text(), (out_dir / "01_demo.html").read_text()
    report = (isolated / "results" / "REPORT.md").read_text()
    assert "From `01_demo`, profile `default`" in report and "parameters: the notebook's defaults." in report
    assert "Stale" not in report

    assert main([*base, "-p", "tag", "other"]) == 1
    out = capsys.readouterr().out
    assert (out_dir / "01_demo.ipynb").read_text() == good and (out_dir / "01_demo.html").read_text() == good_page
    assert "the model name was wrong" in (out_dir / "01_demo.failed.ipynb").read_text()
    assert (out_dir / "01_demo.failed.html").exists() and "01_demo.failed.ipynb" in out
    stamp = json.loads((out_dir / "01_demo.stamp.json").read_text())
    assert stamp["status"] == "failed" and "tag" not in stamp["last_ok"]["parameters"]
    report = (isolated / "results" / "REPORT.md").read_text()
    assert "parameters: the notebook's defaults." in report  # the table is the first run's, and says so
    assert "**Stale:** `01_demo` was run again" in report and "(failed)" in report
    assert "The last good run" in report and "notebooks/01_demo.failed.html" in report

    assert main([*base, "-p", "tag", "third", "--force"]) == 0  # a good run again: the failed copy goes
    assert not (out_dir / "01_demo.failed.ipynb").exists() and not (out_dir / "01_demo.failed.html").exists()
    report = (isolated / "results" / "REPORT.md").read_text()
    assert "parameters: tag=third, the rest at the notebook's defaults." in report and "Stale" not in report


def test_a_table_from_outside_the_runner_is_marked_so(isolated: Path) -> None:
    import pandas as pd

    from tomlib.report import write_table

    row = {"paper_id": ["adaptive_tom"], "table_id": ["demo"], "metric": ["r"], "source": ["formal"], "value": [1.0]}
    write_table(pd.DataFrame(row))  # as a notebook run by hand in Jupyter writes it
    assert "Written outside the runner (no run record)" in build_report().read_text()


def test_a_recording_under_another_port_is_named_with_the_endpoint_id_that_reuses_it(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tomlib.llm import ChatModel, ReplayMiss

    ask = [{"role": "user", "content": "hello"}]
    with FakeOpenAIServer() as first:
        _models(isolated, monkeypatch, first)
        ChatModel.from_name("fake", mode="auto").complete_sync(ask, sample_key={"experiment": "t", "step": 0})
    with FakeOpenAIServer() as moved:  # the same server on another port
        _models(isolated, monkeypatch, moved)
        with pytest.raises(ReplayMiss, match=rf"endpoint_id: {first.base_url.rstrip('/')}"):
            ChatModel.from_name("fake", mode="replay").complete_sync(ask, sample_key={"experiment": "t", "step": 0})
        with pytest.warns(UserWarning, match="Paying again for recorded calls"):
            ChatModel.from_name("fake", mode="auto").complete_sync(ask, sample_key={"experiment": "t", "step": 0})
        assert moved.n_requests == 1
