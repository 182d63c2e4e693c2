"""A run-wide budget: the command line's --max-tokens reaches every notebook kernel, the series stops cleanly
when it is spent, and a rerun with a larger budget resumes without repeating a completed call."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runner.test_runner import write_nb
from tomlib.__main__ import main
from tomlib.testing import FakeOpenAIServer

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

CALLS = """
from tomlib.llm import ChatModel
chat = ChatModel.from_name("fake", mode=llm_mode)
for i in range(8):
    chat.complete_sync([{"role": "user", "content": f"question {i}"}], sample_key={"experiment": name, "step": i})
print(chat.usage)
"""


@pytest.mark.series
def test_the_series_stops_at_the_budget_and_a_rerun_resumes(
    isolated: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAIServer() as server:
        configs = isolated / "configs"
        configs.mkdir()
        (configs / "models.yaml").write_text(f"models:\n  fake: {{kind: openai, base_url: '{server.base_url}'}}\n")
        monkeypatch.setenv("TOMLIB_CONFIGS", str(configs))
        nbs = isolated / "nbs"
        nbs.mkdir()
        for stem in ("01_first", "02_second"):
            write_nb(nbs / f"{stem}.ipynb", f"llm_mode = 'replay'\nname = '{stem}'", CALLS)
        profile = isolated / "live.yaml"
        profile.write_text("parameters:\n  llm_mode: auto\nbudget:\n  max_tokens: 100000\n")
        base = ["run", "--profile", str(profile), "--notebooks-dir", str(nbs), "--no-html"]

        # each call costs 7 tokens on the fake server: 30 tokens end the first notebook part way
        assert main([*base, "--max-tokens", "30"]) == 1
        out = capsys.readouterr().out
        assert "budget: 30 tokens" in out
        assert "FAILED 01_first" in out and "BudgetExceeded" in out
        assert "STOPPED" in out and "02_second" in out
        first = server.n_requests
        assert 0 < first < 8
        spent = int(out.split("run so far: ")[1].split(" tokens")[0].replace(",", ""))
        assert 30 <= spent < 30 + 7  # passed by less than one call

        assert main(base) == 0  # the profile's budget: plenty
        assert server.n_requests == 16  # nothing answered before was paid for again
        assert "0 failed" in capsys.readouterr().out
