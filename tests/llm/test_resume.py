"""A killed run loses nothing: rerunning makes zero repeated model calls for what completed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tomlib.llm import ResponseStore
from tomlib.testing import FakeOpenAIServer
from tomlib.trace import load_runs, payload_frame

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

WORKER = Path(__file__).with_name("resume_worker.py")
N = 20


def _prompts(requests: list[dict]) -> list[str]:  # type: ignore[type-arg]
    return [r["messages"][-1]["content"] for r in requests]


def test_sigkill_half_way_then_rerun_repeats_no_completed_call(tmp_path: Path) -> None:
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": root}
    killed = threading.Event()

    def held_after_ten(request: dict) -> str:  # type: ignore[type-arg]
        """Steps 10 on wait for the kill, so a loaded machine cannot let the first run finish before it lands."""
        prompt = request["messages"][-1]["content"]
        if int(prompt.split()[1]) >= 10:
            killed.wait(timeout=60)
        return f"fake reply to: {prompt}"

    with FakeOpenAIServer(latency_s=0.05, responder=held_after_ten) as srv:
        proc = subprocess.Popen(
            [sys.executable, str(WORKER), srv.base_url, "run-1", str(N)], stdout=subprocess.PIPE, text=True, env=env
        )
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.strip() == "done 7":
                break
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        killed.set()
        assert proc.returncode == -signal.SIGKILL

        store = ResponseStore()
        completed = {rec["request"]["messages"][-1]["content"] for rec in store.iter_records(experiment="resume")}
        first_run = _prompts(srv.requests)
        assert 8 <= len(completed) < N
        assert completed <= set(first_run)

        done = subprocess.run(
            [sys.executable, str(WORKER), srv.base_url, "run-1", str(N)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        second_run = _prompts(srv.requests[len(first_run) :])

    assert not completed & set(second_run), "a completed model call was repeated"
    assert set(first_run) | set(second_run) == {f"step {i}" for i in range(N)}
    assert len(ResponseStore()) == N

    events = load_runs(run_ids=["run-1"])
    assert (events["kind"] == "run_start").sum() == 2  # both processes wrote to the same log
    actions = events[events["kind"] == "action"]
    assert set(actions["step"]) == set(range(N))
    calls = payload_frame(events, "llm_call")
    rerun_calls = calls[calls["time"] > events[events["kind"] == "run_start"]["time"].iloc[1]]
    hits = set(rerun_calls[rerun_calls["cache"] == "hit"]["step"])
    assert {int(p.split()[1]) for p in completed} == hits
