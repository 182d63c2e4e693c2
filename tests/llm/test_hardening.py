"""Fault injection on the model client: budgets under concurrency, replies that used to crash, stall or be paid
for twice, a locked store, damaged transcripts and stores, and replay misses that say what changed."""

from __future__ import annotations

import asyncio
import gzip
import json
import logging
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
from pydantic import BaseModel

from tests.conftest import fake_config, user
from tomlib.llm import (
    Budget,
    BudgetExceeded,
    BudgetLedger,
    ChatModel,
    ModelCallFailed,
    ReplayMiss,
    ResponseStore,
    StoreError,
    StructuredOutputError,
    read_ledger,
)
from tomlib.llm import _client as client_module
from tomlib.testing import Reply
from tomlib.trace import RunLog, load_runs, payload_frame

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


class Answer(BaseModel):
    action: str


# -- 1. budgets ----------------------------------------------------------------------------------


def _gather(m: ChatModel, n: int) -> list[object]:
    async def batch() -> list[object]:
        calls = [m.complete(user(f"question number {i}"), sample_key={"experiment": "b", "step": i}) for i in range(n)]
        return await asyncio.gather(*calls, return_exceptions=True)

    return asyncio.run(batch())


def test_a_gathered_batch_overspends_a_token_budget_by_at_most_the_calls_in_flight(make_model, server) -> None:  # type: ignore[no-untyped-def]
    server.latency_s = 0.02
    m = make_model(concurrency=8)
    m.budget = Budget(max_tokens=200)
    results = _gather(m, 100)
    answered = [r for r in results if not isinstance(r, BaseException)]
    refused = [r for r in results if isinstance(r, BudgetExceeded)]
    assert len(answered) + len(refused) == 100 and refused
    per_call = max(r.prompt_tokens + r.completion_tokens for r in answered)  # type: ignore[union-attr]
    spent = m.ledger.spent_tokens  # type: ignore[union-attr]
    assert spent == m.usage.tokens
    # the promise: only calls already in flight when the budget ran out can pass it (at most `concurrency`)
    assert spent - 200 <= 8 * per_call
    # and here, where the estimates hold, by less than one call
    assert spent - 200 < per_call
    assert server.n_requests == len(answered) < 100
    assert m.ledger.in_flight == 0 and m.ledger.reserved_tokens == 0  # type: ignore[union-attr]


def test_a_gathered_batch_against_a_money_budget(make_model, server) -> None:  # type: ignore[no-untyped-def]
    server.latency_s = 0.02
    m = make_model(concurrency=8, price_per_1k_input=10.0, price_per_1k_output=10.0)
    m.budget = Budget(max_usd=0.10)
    results = _gather(m, 100)
    answered = [r for r in results if not isinstance(r, BaseException)]
    assert any(isinstance(r, BudgetExceeded) for r in results)
    per_call = max((r.prompt_tokens + r.completion_tokens) / 100 for r in answered)  # type: ignore[union-attr]
    assert m.usage.cost_usd - 0.10 < per_call  # was $1.30 for all 100 calls before the budget held
    assert server.n_requests == len(answered)


def test_models_sharing_a_ledger_share_the_budget_and_a_ledger_file_crosses_processes(server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "spend.jsonl"
    ledger = BudgetLedger(Budget(max_tokens=30), path=path)
    a = ChatModel(fake_config(server, name="a"), budget=ledger)
    b = ChatModel(fake_config(server, name="b"), budget=ledger)
    a.complete_sync(user("one two three four five six seven eight"), sample_key="t")
    b.complete_sync(user("nine ten eleven twelve thirteen fourteen"), sample_key="t")
    assert ledger.spent_tokens == a.usage.tokens + b.usage.tokens
    # another process (a later notebook kernel) starts from what this one spent
    code = (
        "from tomlib.llm import Budget, BudgetLedger;"
        f"led = BudgetLedger(Budget(max_tokens=30), path={str(path)!r}); print(led.spent_tokens)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert int(out) == ledger.spent_tokens
    c = ChatModel(fake_config(server, name="c"), budget=BudgetLedger(Budget(max_tokens=30), path=path))
    if ledger.spent_tokens >= 30:
        with pytest.raises(BudgetExceeded):
            c.complete_sync(user("more"), sample_key="t")


SPENDER = """
import asyncio, json, sys
from tomlib.llm import Budget, BudgetLedger, ChatModel, ModelConfig
from tomlib.llm._errors import BudgetExceeded
import pathlib, time
url, ledger, who, gate = sys.argv[1:5]
cfg = ModelConfig(name=who, kind="openai", model="fake-model-1", base_url=url, endpoint_id="fake", concurrency=8,
                  backoff_base_s=0.01, backoff_max_s=0.05, max_retries=0, timeout_s=10.0)
chat = ChatModel(cfg, budget=BudgetLedger(Budget(max_tokens=300), path=ledger))
import openai  # the SDK loads at a model's first live call (0.5-1 s): before the signal, or one spender may find
               # the whole budget spent by the other when it gets there
async def main():
    pathlib.Path(gate, who).touch()  # ready: imports done, model built
    while not pathlib.Path(gate, "go").exists():  # both kernels start their calls together
        time.sleep(0.005)
    calls = [chat.complete([{"role": "user", "content": f"{who} asks question {i}"}], max_tokens=2,
                           sample_key={"experiment": who, "step": i}) for i in range(80)]
    got = await asyncio.gather(*calls, return_exceptions=True)
    bad = [repr(g) for g in got if isinstance(g, BaseException) and not isinstance(g, BudgetExceeded)]
    print(json.dumps({"answered": sum(not isinstance(g, BaseException) for g in got), "bad": bad}))
asyncio.run(main())
"""


def test_two_processes_on_one_ledger_pass_the_budget_by_at_most_one_process_in_flight(server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # two kernels of one run (--jobs 2) gather calls at once against one small budget; each alone keeps to it, and
    # since reservations are made under a lock on the shared ledger, together they do too
    server.latency_s = 0.2  # the budget lasts about a second: a spender the scheduler runs late still gets a share
    ledger = tmp_path / "spend.jsonl"
    gate = tmp_path / "gate"
    gate.mkdir()
    kernels = ("kernel-a", "kernel-b")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SPENDER, server.base_url, str(ledger), who, str(gate)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for who in kernels
    ]
    # a slow machine may import one kernel after the other has spent the whole budget: start them at one signal
    deadline = time.monotonic() + 120
    while not all((gate / who).exists() for who in kernels):
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs), "a spender did not start"
        time.sleep(0.01)
    (gate / "go").touch()
    reports = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    assert not any(r["bad"] for r in reports), reports
    answered = sum(r["answered"] for r in reports)
    tokens, _usd, calls = read_ledger(ledger)
    assert calls == answered == server.n_requests and all(r["answered"] for r in reports)
    question = "kernel-a asks question 1"
    per_call = len(question.split()) + len(f"fake reply to: {question}".split())  # the fake server's count: words
    assert tokens >= 300 - per_call  # the budget was used, not refused early
    assert tokens - 300 <= 8 * per_call  # the promise: one process's calls in flight, at most
    assert tokens - 300 < 2 * per_call  # and with estimates that hold, about one call


def test_replies_without_usage_are_counted_by_estimate(make_model, server) -> None:  # type: ignore[no-untyped-def]
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "x" * 400}, "finish_reason": "stop"}]}
    server.script(Reply(body=json.dumps(body).encode()))
    m = make_model()
    m.budget = Budget(max_tokens=50)
    m.complete_sync(user("q"), sample_key="t")
    assert m.ledger.spent_tokens >= 100  # type: ignore[union-attr]
    with pytest.raises(BudgetExceeded):
        m.complete_sync(user("again"), sample_key="t")


# -- 3. replies that crash, stall or are paid for twice ---------------------------------------------


def test_a_deeply_nested_reply_is_a_failed_attempt_in_the_log_and_replays_without_crashing(
    make_model, server, isolated: Path
) -> None:  # type: ignore[no-untyped-def]
    server.script("[" * 5000, "{" * 5000, '{"action": ' + "[" * 5000)
    m = make_model()
    with RunLog("nest", run_id="rn") as log:
        log.observe(m)
        with pytest.raises(StructuredOutputError, match="3 attempt"):
            m.complete_json_sync(user("act"), Answer, sample_key="nest")
    attempts = payload_frame(load_runs(run_ids=["rn"]), "llm_call")
    assert list(attempts["attempt"]) == [1, 2, 3] and attempts["error"].notna().all()
    replay = make_model(mode="replay")
    with pytest.raises(StructuredOutputError):
        replay.complete_json_sync(user("act"), Answer, sample_key="nest")
    assert server.n_requests == 3


def test_an_unpaired_surrogate_is_stored_so_a_rerun_pays_nothing(make_model, server) -> None:  # type: ignore[no-untyped-def]
    server.script('{"action": "wave \ud83d"}')
    first = make_model().complete_json_sync(user("act"), Answer, sample_key="sur")
    assert first.value.action == "wave \ufffd"
    again = make_model().complete_json_sync(user("act"), Answer, sample_key="sur")
    assert again.completion.cache_hit and again.value == first.value
    assert server.n_requests == 1


def test_a_huge_reply_fails_its_attempt_and_the_loop_keeps_serving(make_model, server) -> None:  # type: ignore[no-untyped-def]
    server.script(Reply(content="{" * 2_000_000), Reply(content="prose " + '{"x": ' * 200_000), '{"action": "ok"}')
    m = make_model(timeout_s=30)
    got = m.complete_json_sync(user("act"), Answer, sample_key="big", max_tokens=4000)
    assert got.value.action == "ok" and len(got.attempts) == 3


def test_a_trickling_server_cannot_hold_a_call_past_its_deadline(make_model, server) -> None:  # type: ignore[no-untyped-def]
    # every byte arrives well within the per-read timeout; the whole body would take ~30 s
    server.script(Reply(content="slow", trickle_s=0.15))
    with pytest.raises(ModelCallFailed, match="timed out after 1 s"):
        make_model(timeout_s=1.0, max_retries=0).complete_sync(user("q"), sample_key="t")


def test_retry_after_zero_is_floored_by_the_backoff(make_model, server) -> None:  # type: ignore[no-untyped-def]
    server.script(
        Reply(status=429, headers={"Retry-After": "0"}), Reply(status=429, headers={"Retry-After": "0"}), "ok"
    )
    assert make_model(backoff_base_s=0.2, backoff_max_s=1.0).complete_sync(user("q"), sample_key="t").content == "ok"
    t = [r["_t"] for r in server.requests]
    assert t[1] - t[0] >= 0.1 and t[2] - t[1] >= 0.2  # our own backoff, not a hot loop


def test_a_retry_after_beyond_the_cap_fails_at_once_saying_why(make_model, server) -> None:  # type: ignore[no-untyped-def]
    server.script(Reply(status=429, headers={"Retry-After": "3600"}))
    with pytest.raises(ModelCallFailed, match=r"retry after 3600 s, longer than retry_after_max_s \(120 s\)"):
        make_model().complete_sync(user("q"), sample_key="t")
    assert server.n_requests == 1


def test_a_long_wait_is_announced(make_model, server, monkeypatch, caplog) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(client_module, "LONG_WAIT_S", 0.05)
    server.script(Reply(status=503, headers={"Retry-After": "0.1"}), "ok")
    with caplog.at_level(logging.WARNING, logger="tomlib.llm"):
        make_model().complete_sync(user("q"), sample_key="t")
    assert "waits" in caplog.text and "HTTP 503" in caplog.text and "server asked for 0.1 s" in caplog.text


def test_an_answered_reply_survives_a_store_locked_by_another_process(server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "locked.sqlite"
    ResponseStore(path).close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys, time\n"
            f"c = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
            "c.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); sys.stdin.readline()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        store = ResponseStore(path, lock_wait_s=0.3)
        m = ChatModel(fake_config(server), store=store)
        r = m.complete_sync(user("q"), sample_key="t")
        assert r.content == "fake reply to: q"
        assert len(list(store.spool_dir.glob("*.json"))) == 1
        assert m.complete_sync(user("q"), sample_key="t").cache_hit  # the spooled reply answers at once
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(10)
    fresh = ResponseStore(path)  # opening drains the spool
    assert len(fresh) == 1 and not list(fresh.spool_dir.glob("*.json"))
    assert ChatModel(fake_config(server), store=fresh, mode="replay").complete_sync(user("q"), sample_key="t").cache_hit
    assert server.n_requests == 1


# -- 4. files that break more than themselves ------------------------------------------------------


def _record(make_model, experiment: str, text: str) -> None:  # type: ignore[no-untyped-def]
    make_model().complete_sync(user(text), sample_key={"experiment": experiment})


@pytest.mark.parametrize("damage", ["random", "truncated"])
def test_a_damaged_transcript_fails_only_what_needs_it(make_model, server, isolated: Path, damage: str) -> None:  # type: ignore[no-untyped-def]
    work = ResponseStore(isolated / "work.sqlite")
    for exp in ("good.exp", "bad.exp"):
        ChatModel(fake_config(server), store=work).complete_sync(user(exp), sample_key={"experiment": exp})
        work.export(isolated / "transcripts" / f"{exp}.jsonl.gz", experiment=exp)
    bad = isolated / "transcripts" / "bad.exp.jsonl.gz"
    data = bad.read_bytes()
    bad.write_bytes(bytes(range(256)) * 4 if damage == "random" else data[: len(data) // 2])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = make_model(mode="replay")
    assert any("bad.exp.jsonl.gz" in str(w.message) for w in caught)
    assert m.complete_sync(user("good.exp"), sample_key={"experiment": "good.exp"}).cache_hit
    with pytest.raises(ReplayMiss) as info:
        m.complete_sync(user("bad.exp"), sample_key={"experiment": "bad.exp"})
    msg = str(info.value)
    assert "bad.exp.jsonl.gz" in msg and "damaged" in msg and "git checkout" in msg


def test_one_bad_line_in_a_transcript_skips_only_that_line(make_model, server, isolated: Path) -> None:  # type: ignore[no-untyped-def]
    work = ResponseStore(isolated / "work.sqlite")
    chat = ChatModel(fake_config(server), store=work)
    questions = [f"question {i}" for i in range(4)]
    for q in questions:
        chat.complete_sync(user(q), sample_key={"experiment": "lines"})
    path = isolated / "transcripts" / "lines.jsonl.gz"
    assert work.export(path, experiment="lines") == 4
    lines = gzip.decompress(path.read_bytes()).split(b"\n")
    lines[1] = lines[1][: len(lines[1]) // 2]  # line 2 cut short; the others intact
    lines[2] = lines[2].replace(b'"request"', b'"requests"', 1)  # line 3 valid JSON, but not a transcript line
    path.write_bytes(gzip.compress(b"\n".join(lines)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = make_model(mode="replay")
    hits, misses = 0, []
    for q in questions:
        try:
            hits += m.complete_sync(user(q), sample_key={"experiment": "lines"}).cache_hit
        except ReplayMiss as exc:
            misses.append(str(exc))
    assert hits == 2 and len(misses) == 2  # the two good lines answer; each bad line fails only its own call
    warned = " ".join(str(w.message) for w in caught)
    assert "lines.jsonl.gz:2 (" in warned and "lines.jsonl.gz:3 (" in warned and "re-export" in warned
    assert all("lines.jsonl.gz:2" in msg for msg in misses)
    with warnings.catch_warnings(record=True) as again:  # still damaged: the next model says so again
        warnings.simplefilter("always")
        make_model(mode="replay")
    assert any("lines.jsonl.gz:2" in str(w.message) for w in again)


def test_pruned_rows_stay_pruned(make_model, server, isolated: Path) -> None:  # type: ignore[no-untyped-def]
    work = ResponseStore(isolated / "work.sqlite")
    ChatModel(fake_config(server), store=work).complete_sync(user("x"), sample_key={"experiment": "p"})
    work.export(isolated / "transcripts" / "p.jsonl.gz")
    m = make_model()  # imports the transcript
    assert len(m.store) == 1
    assert m.store.prune(experiment="p") == 1
    assert len(make_model().store) == 0  # the next model does not bring them back


def test_a_damaged_store_names_the_file_and_the_fix(isolated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tomlib.__main__ import main

    path = isolated / "store" / "responses.sqlite"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"this is not a database, it was overwritten " * 200)
    with pytest.raises(StoreError, match=r"responses.sqlite cannot be used .* Move it aside"):
        ResponseStore(path)
    assert main(["cache", "stats"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tomlib: error: The response store") and "Traceback" not in err


# -- 5. messages a user can act on ------------------------------------------------------------------


def test_a_replay_miss_after_a_prompt_change_says_what_changed_and_which_profile_records(server) -> None:  # type: ignore[no-untyped-def]
    cfg = fake_config(server, name="local")
    ChatModel(cfg).complete_sync(
        [{"role": "system", "content": "rules"}, {"role": "user", "content": "Last round you chose A."}],
        sample_key={"experiment": "e", "episode": 1, "agent": "p1"},
    )
    with pytest.raises(ReplayMiss) as info:
        ChatModel(cfg, mode="replay").complete_sync(
            [{"role": "system", "content": "rules"}, {"role": "user", "content": "Last round you chose B."}],
            sample_key={"experiment": "e", "episode": 1, "agent": "p1"},
        )
    msg = str(info.value)
    assert "the messages changed: message 1 (user) differs at character 22" in msg
    assert "--profile record-local" in msg
    with pytest.raises(ReplayMiss, match=r"sampling parameters changed \(temperature: recorded 0.0, now 0.7\)"):
        ChatModel(cfg, mode="replay").complete_sync(
            [{"role": "system", "content": "rules"}, {"role": "user", "content": "Last round you chose A."}],
            sample_key={"experiment": "e", "episode": 1, "agent": "p1"},
            temperature=0.7,
        )


def test_a_run_log_cut_inside_a_multibyte_character_is_read_like_any_torn_line(isolated: Path) -> None:
    with RunLog("u", run_id="ru") as log:
        log.event("note", {"text": "naïve café ✓"})
    path = isolated / "results" / "runs" / "ru" / "events.jsonl"
    with open(path, "ab") as fh:
        fh.write('{"run_id": "ru", "kind": "note", "payload": {"text": "✓'.encode()[:-1])  # cut mid-character
    with pytest.warns(UserWarning, match="skipped 1 unreadable log line"):
        df = load_runs(run_ids=["ru"])
    assert list(df["kind"]) == ["run_start", "note"] and df["payload"].iloc[1]["text"] == "naïve café ✓"


def test_a_transcript_that_is_not_gzip_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "x.jsonl.gz"
    bad.write_bytes(b"\x00" * 100)
    store = ResponseStore(tmp_path / "s.sqlite")
    with pytest.raises(ValueError, match=r"Transcript .*x.jsonl.gz is damaged .* Nothing from it was imported"):
        store.import_file(bad)
    gzip.decompress(gzip.compress(b""))  # the module still works: nothing global was broken
