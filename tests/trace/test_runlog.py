"""Run logs: append-only JSONL written in batches within a bounded interval, redacted at write time, loadable as
DataFrames; what a kill -9 keeps."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import user
from tomlib.llm import recorded_exchange
from tomlib.trace import REDACTED, RunLog, load_runs, payload_frame
from tomlib.trace._log import FLUSH_INTERVAL_S, dumps
from tomlib.trace._runs import compress_finished
from tomlib.widgets import Trace, step_html
from tomlib.widgets._trace import exchange

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def test_events_reach_the_file_within_the_flush_interval_and_load_as_a_tidy_frame(isolated: Path) -> None:
    log = RunLog("adaptive_tom.table1", run_id="r1")
    path = isolated / "results" / "runs" / "r1" / "events.jsonl"
    assert '"run_start"' in path.read_text()  # a run is visible as soon as it starts
    with log.context(condition="m1:tom0_vs_tom1", episode=2):
        log.event("prediction", {"predicted": "A"}, step=0, agent="p1")
        # an idle run's events are written by the background flusher: another reader sees them before close
        deadline = time.monotonic() + 20 * FLUSH_INTERVAL_S
        while '"prediction"' not in path.read_text() and time.monotonic() < deadline:
            time.sleep(FLUSH_INTERVAL_S / 4)
        assert '"prediction"' in path.read_text()
        log.event("action", {"action": "B"}, step=0, agent="p1")
        log.flush()
        assert '"action"' in path.read_text()
    log.event("score", {"points": 5})
    log.close()
    df = load_runs(run_ids=["r1"])
    assert list(df["kind"]) == ["run_start", "prediction", "action", "score"]
    assert list(df.columns) == [
        "run_id",
        "experiment",
        "condition",
        "episode",
        "step",
        "agent",
        "kind",
        "time",
        "payload",
    ]
    assert df.loc[1, "condition"] == "m1:tom0_vs_tom1" and df.loc[1, "episode"] == 2 and df.loc[1, "agent"] == "p1"
    assert df.loc[3, "condition"] == ""  # the context ended
    assert payload_frame(df, "action")["action"].tolist() == ["B"]


def test_each_task_writes_under_its_own_context(isolated: Path) -> None:
    """Two episodes played side by side as asyncio tasks, each in its own ``context`` block: every event carries its
    own task's condition and episode, not whichever block was entered last."""

    async def episode(log: RunLog, condition: str, n: int) -> None:
        with log.context(condition=condition, episode=n):
            for step in range(3):
                log.event("action", {"action": "A"}, step=step)
                await asyncio.sleep(0)  # the other task enters its block and writes here

    async def both(log: RunLog) -> None:
        await asyncio.gather(episode(log, "left", 0), episode(log, "right", 1))

    log = RunLog("adaptive_tom.table1", run_id="r2")
    asyncio.run(both(log))
    log.event("score", {"points": 5})  # outside every block: no condition
    log.close()
    df = load_runs(run_ids=["r2"])
    acts = df[df["kind"] == "action"]
    assert sorted(zip(acts["condition"], acts["episode"], strict=True)) == [("left", 0)] * 3 + [("right", 1)] * 3
    assert df[df["kind"] == "score"]["condition"].tolist() == [""]


def test_filters(isolated: Path) -> None:
    with RunLog("a", run_id="ra") as log:
        log.event("action", {"x": 1})
    with RunLog("b", run_id="rb") as log:
        log.event("score", {"x": 2})
    assert set(load_runs(experiment="a")["run_id"]) == {"ra"}
    assert list(load_runs(kinds=["score"])["run_id"]) == ["rb"]
    assert load_runs(run_ids=["missing"]).empty


def test_planted_key_is_redacted_everywhere(
    isolated: Path, monkeypatch: pytest.MonkeyPatch, make_model, server
) -> None:  # type: ignore[no-untyped-def]
    planted = "plantedSecretValue-7f3a9c2e"
    monkeypatch.setenv("MY_PROVIDER_API_KEY", planted)
    stray = "sk-" + secrets.token_hex(20)  # key-shaped even though no env var holds it
    log = RunLog("redact", run_id="rk")
    log.event("note", {"text": f"key={planted}", "nested": [{"deep": planted}], planted: "as a dict key", "s": stray})
    m = make_model()
    log.observe(m)
    m.complete_sync(user(f"please ignore {planted}"), sample_key={"experiment": "redact", "agent": planted})
    log.close()
    raw = (isolated / "results" / "runs" / "rk" / "events.jsonl").read_text()
    assert planted not in raw and stray not in raw
    assert raw.count(REDACTED) >= 5
    df = load_runs(run_ids=["rk"])
    call = payload_frame(df, "llm_call").iloc[0]
    assert "messages" not in call and "reply" not in call  # the log points to the store, which holds the exchange
    exchange = recorded_exchange(call["key"], call["store"])
    assert exchange is not None and REDACTED in exchange["messages"][-1]["content"]
    assert planted not in json.dumps(exchange)


def test_a_line_cut_by_a_kill_is_skipped_with_a_warning(isolated: Path) -> None:
    with RunLog("k", run_id="rc") as log:
        log.event("action", {"i": 1})
    path = isolated / "results" / "runs" / "rc" / "events.jsonl"
    with open(path, "a") as fh:
        fh.write('{"run_id": "rc", "kind": "act')  # what SIGKILL mid-write can leave
    with pytest.warns(UserWarning, match="skipped 1 unreadable log line"):
        df = load_runs(run_ids=["rc"])
    assert list(df["kind"]) == ["run_start", "action"]
    with RunLog("k", run_id="rc") as log:  # a rerun appends after the broken line
        log.event("action", {"i": 2})
    with pytest.warns(UserWarning):
        assert len(load_runs(run_ids=["rc"])) == 4


def test_a_truncated_compressed_log_is_skipped_with_a_warning_and_other_experiments_load(isolated: Path) -> None:
    runs = isolated / "results" / "runs"
    with RunLog("quickstart", run_id="rq") as log:
        log.event("action", {"i": 0}, condition="c", episode=0, step=0)
    with RunLog("adaptive_tom.table2", run_id="rt") as log:  # about 4 gzip members once compressed
        for i in range(4000):
            log.event("action", {"i": i, "text": "x" * 200}, condition="c", episode=i % 5, step=i)
    compress_finished([runs / "rq", runs / "rt"])
    gz = runs / "rt" / "events.jsonl.gz"
    gz.write_bytes(gz.read_bytes()[: gz.stat().st_size // 2])  # a copy cut short (a full disk, a stopped rsync)
    damaged = r"rt/events\.jsonl\.gz is damaged .*runs prune"

    with pytest.warns(UserWarning, match=damaged):
        other = load_runs(experiment="quickstart")
    assert list(other["kind"]) == ["run_start", "action"]
    with pytest.warns(UserWarning, match=damaged):
        assert list(load_runs(experiment="quickstart", episodes=[("c", 0)])["kind"]) == ["action"]
    with pytest.warns(UserWarning, match=damaged):
        assert len(Trace.from_runs(experiment="quickstart")) == 2

    with pytest.warns(UserWarning, match=damaged):  # its own experiment: the events before the cut
        own = payload_frame(load_runs(experiment="adaptive_tom.table2"), "action")
    assert 0 < len(own) < 4000 and list(own["i"]) == list(range(len(own)))
    with pytest.warns(UserWarning, match=damaged):
        assert load_runs(experiment="adaptive_tom.table2", episodes=[("c", 1)]).empty


def test_llm_call_event_points_to_the_exchange_in_the_store(isolated: Path, make_model, server) -> None:  # type: ignore[no-untyped-def]
    m = make_model()
    with RunLog("x", run_id="rx") as log:
        log.observe(m)
        key = {"experiment": "x", "condition": "c", "episode": 1, "step": 4, "agent": "p2", "purpose": "decide"}
        m.complete_sync(user("hi"), sample_key=key)
        m.complete_sync(user("hi"), sample_key=key)
    m.complete_sync(user("after close"), sample_key="x")  # no longer observed
    calls = payload_frame(load_runs(run_ids=["rx"]), "llm_call")
    assert len(calls) == 2
    first = calls.iloc[0]
    assert (first["condition"], first["episode"], first["step"], first["agent"]) == ("c", 1, 4, "p2")
    assert "messages" not in calls and "reply" not in calls  # not copied: the store has them under the key
    shown = exchange(first.dropna().to_dict())
    assert shown["messages"] == user("hi") and shown["reply"] == "fake reply to: hi"
    assert first["prompt_tokens"] > 0 and first["latency_s"] >= 0
    assert list(calls["cache"]) == ["miss", "hit"]
    assert first["purpose"] == "decide"
    json.dumps(shown["messages"])
    moved = exchange({**first.dropna().to_dict(), "store": str(isolated / "elsewhere.sqlite"), "key": "0" * 64})
    assert moved["messages"] == [] and "cache import" in moved["missing"]  # a log without its store says so


KILLED = """
import sys, time
from tomlib.trace import RunLog
log = RunLog("killed", run_id="rk9")
for i in range(int(sys.argv[1])):
    log.event("action", {"i": i, "text": "x" * 50}, step=i)
print("logged", flush=True)
time.sleep(60)
"""


def test_kill_9_keeps_every_event_older_than_the_flush_interval(isolated: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen([sys.executable, "-c", KILLED, "5000"], stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "logged"
    time.sleep(5 * FLUSH_INTERVAL_S)  # the promise: everything logged this long ago is on disk
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    events = load_runs(run_ids=["rk9"])
    assert sorted(events[events["kind"] == "action"]["step"]) == list(range(5000))


def test_serialization_keeps_what_json_kept() -> None:
    import numpy as np

    back = json.loads(dumps({"a": {1: "int key"}, "b": np.float64(0.5), "c": np.int64(3), "d": {2}}))
    assert back == {"a": {"1": "int key"}, "b": 0.5, "c": 3, "d": "{2}"}
    # a lone surrogate falls back to json's escape instead of failing the write
    assert json.loads(dumps({"e": "\ud800 lone", "f": 1}))["f"] == 1
    assert json.loads(dumps({"n": float("nan")}))["n"] is None  # strict JSON: NaN is written as null


def test_detail_episodes_keeps_every_step_of_the_first_episodes_and_the_outcome_of_the_rest(isolated: Path) -> None:
    with RunLog("formal", run_id="rd", detail_episodes=2) as log:
        for ep in range(4):
            for step in range(3):
                log.event("env_state", {"state": f"s{step}", "game": "g", "agents": ["a", "b"]}, episode=ep, step=step)
                log.event("prediction", {"levels": []}, episode=ep, step=step, agent="p1")
                log.event("action", {"action": "x"}, episode=ep, step=step, agent="p1")
                log.event("expert_weights", {"probabilities": [1.0]}, episode=ep, step=step, agent="p1")
                log.event("belief", {"holds": []}, episode=ep, step=step, agent="p1")
                assert log.keeps_steps(ep) == (ep < 2)
            log.event("score", {"metric": "time", "value": 3.0, "steps": 3}, episode=ep, step=3)
    df = load_runs(run_ids=["rd"])
    assert df["payload"].iloc[0]["detail_episodes"] == 2  # the run says what it left out
    kinds = df.groupby("episode")["kind"].apply(list)
    assert kinds[0] == kinds[1] and kinds[0].count("action") == 3 and kinds[0].count("expert_weights") == 3
    for ep in (2, 3):  # the first state (the summary's), what is not a step view's alone, and the outcome
        assert kinds[ep] == ["env_state", "belief", "belief", "belief", "score"]
    trace = Trace.from_runs(["rd"])
    ref = trace.refs("rd", "")[3]
    view = trace.step(ref, trace.steps(ref)[0])
    assert "were not logged" in view.note and "were not logged" not in trace.step(trace.refs("rd", "")[0], 0).note
    with RunLog("formal", run_id="r0", detail_episodes=0) as log:  # a table under another reading: no steps at all
        for step in range(3):
            log.event("env_state", {"state": f"s{step}", "game": "g", "agents": ["a", "b"]}, episode=0, step=step)
            log.event("action", {"action": "x"}, episode=0, step=step, agent="p1")
        log.event("score", {"metric": "time", "value": 3.0, "steps": 3}, episode=0, step=3)
    none = Trace.from_runs(["r0"])
    ref = none.refs("r0", "")[0]
    html = step_html(none.step(ref, (none.steps(ref) or [0])[0]))
    assert "step 1 of 1<" in html and "were not logged" in html  # its first state, not "step 1 of 0"
