"""The progress bars an executed notebook keeps: full and not red when the work finished, red when it failed.

In a kernel ``tqdm.auto`` draws ``tqdm.notebook`` widgets, and a bar closed below its total turns red ('danger'):
the exported pages of 08-11 showed ``running the engineers' code: 45% 72/160`` in red after a run that went fine
(replies without code and checks the cache answered never moved the bar). These tests draw the same widgets outside
a kernel and read the state the page would save.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import tqdm.auto
from tqdm.notebook import tqdm as notebook_tqdm

from tests.programming.test_team import responder
from tomlib.experiments import coalition_programming as cp
from tomlib.experiments._jobs import run_jobs
from tomlib.programming import TeamConfig

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


@pytest.fixture
def bars(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every bar ``tqdm.auto`` makes from now on, drawn as the notebook widget it is in a kernel."""
    made: list[Any] = []

    class Recorded(notebook_tqdm):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs, display=False)
            made.append(self)

    monkeypatch.setattr(tqdm.auto, "tqdm", Recorded)
    return made


def state(bar: Any) -> dict[str, Any]:
    """What the saved widget state says of one bar: its description, value, max and style."""
    _, progress, _ = bar.container.children
    return {"desc": bar.desc, "value": progress.value, "max": progress.max, "bar_style": progress.bar_style}


def finished(s: dict[str, Any]) -> bool:
    return s["value"] == s["max"] and s["bar_style"] != "danger"


def test_the_engineers_code_bar_ends_full_with_replies_without_code_and_cached_checks(
    make_model: Any, server: Any, bars: list[Any]
) -> None:
    server.responder = responder  # Engineer4 never writes code: 1 turn in 4 is not checked
    chat = make_model(json_mode="json_object")

    def run() -> list[dict[str, Any]]:
        bars.clear()
        asyncio.run(
            cp.run_programming(
                [TeamConfig(pm_tom=1, matching=False)],
                model="fake",
                chat=chat,
                benchmarks=["humaneval"],
                humaneval_tasks=1,
                on_sandbox=None,
            )
        )
        return [state(b) for b in bars]

    first = run()
    assert [s["desc"] for s in first] == ["coalition.programming (llm:fake)", "running the engineers' code"]
    assert all(finished(s) for s in first), first
    again = run()  # every check now comes from the cache
    assert all(finished(s) for s in again), again
    assert again[1]["max"] == first[1]["max"] == 20  # 5 rounds of 4 engineers


def test_a_finished_run_fills_its_bar_and_a_failed_one_leaves_it_red(bars: list[Any]) -> None:
    async def one(i: int) -> int:
        await asyncio.sleep(0)
        if i == failing:
            raise RuntimeError("a replay miss")
        return i

    for failing in (None, 3):
        bars.clear()
        try:
            asyncio.run(run_jobs([(i,) for i in range(6)], one, parallel=1, desc="jobs", unit="job"))
        except RuntimeError:
            assert failing is not None
        (s,) = [state(b) for b in bars]
        assert finished(s) if failing is None else (s["bar_style"] == "danger" and s["value"] < s["max"])
