"""The ambient run log: the log in force is per asyncio task, and recording without one writes nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tomlib.trace import RunLog, current_log, load_runs, logging_to, record, record_all

pytestmark = pytest.mark.tier("fast")


def test_two_concurrent_tasks_record_to_their_own_logs(isolated: Path) -> None:
    async def episode(name: str) -> None:
        for step in range(3):
            record("action", {"by": name, "step": step}, condition=name, episode=0, step=step)
            await asyncio.sleep(0)  # let the other task run between our events

    async def both(a: RunLog, b: RunLog) -> None:
        with logging_to(a):
            first = asyncio.ensure_future(episode("a"))  # the task copies the context: log a
        with logging_to(b):
            second = asyncio.ensure_future(episode("b"))
        await asyncio.gather(first, second)

    with RunLog("t.ambient", run_id="ra") as a, RunLog("t.ambient", run_id="rb") as b:
        asyncio.run(both(a, b))
    events = load_runs(isolated / "results")
    acts = events[events["kind"] == "action"]
    by_run = {r: sorted(g["condition"]) for r, g in acts.groupby("run_id")}
    assert by_run == {"ra": ["a", "a", "a"], "rb": ["b", "b", "b"]}
    assert current_log() is None  # the blocks put back what was in force


def test_without_a_log_recording_writes_nothing_and_makes_no_events(isolated: Path) -> None:
    made: list[str] = []

    def events():  # type: ignore[no-untyped-def]
        made.append("made")
        yield "action", {}, {}

    record("action", {"x": 1}, condition="c")
    record_all(events())
    assert made == [] and not (isolated / "results" / "runs").exists()
    with RunLog("t.ambient", run_id="r1") as log, logging_to(log):
        with logging_to(None):  # an inner block may switch recording off
            record("action", {"x": 2})
        record_all(events(), condition="c", step=4)
    kinds = load_runs(isolated / "results")["kind"].tolist()
    assert kinds == ["run_start", "action"] and made == ["made"]
