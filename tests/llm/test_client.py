"""ChatModel against a real HTTP fake server: modes, retries, timeouts, concurrency, budgets, keys."""

from __future__ import annotations

import asyncio
import gzip
import secrets
from pathlib import Path

import pytest

from tests.conftest import user
from tomlib.llm import (
    Budget,
    BudgetExceeded,
    ChatModel,
    ConfigError,
    MissingKeyError,
    ModelCallFailed,
    ReplayMiss,
    ResponseStore,
)
from tomlib.testing import Reply

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def test_auto_mode_calls_once_then_hits_the_store(make_model, server) -> None:  # type: ignore[no-untyped-def]
    m = make_model()
    a = m.complete_sync(user("hello"), sample_key="t")
    b = m.complete_sync(user("hello"), sample_key="t")
    assert (a.cache_hit, b.cache_hit) == (False, True)
    assert a.content == b.content == "fake reply to: hello"
    assert server.n_requests == 1
    assert m.usage.live_calls == 1 and m.usage.cache_hits == 1


def test_different_sample_keys_get_their_own_samples(make_model, server) -> None:  # type: ignore[no-untyped-def]
    m = make_model()
    for ep in range(3):
        m.complete_sync(user("same prompt"), sample_key={"experiment": "t", "episode": ep}, temperature=0.9)
    assert server.n_requests == 3


def test_replay_miss_names_the_call_site_and_the_fix(make_model, server) -> None:  # type: ignore[no-untyped-def]
    m = make_model(mode="replay")
    with pytest.raises(ReplayMiss) as info:
        m.complete_sync(user("x"), sample_key={"experiment": "adaptive_tom.table1", "episode": 2, "agent": "p1"})
    msg = str(info.value)
    assert "adaptive_tom.table1/ep2/p1" in msg
    assert "llm_mode='auto'" in msg and "replay mode" in msg
    assert "Nothing of adaptive_tom.table1 was recorded for this model." in msg
    assert server.n_requests == 0


def test_a_replay_past_the_recorded_items_says_so(make_model, server) -> None:  # type: ignore[no-untyped-def]
    """A run with more items than its recording (a notebook's `humaneval_tasks 0`, all of them) misses at a call
    site that was never recorded; the message says how much of the experiment was."""
    for ep in range(2):
        make_model().complete_sync(user("q"), sample_key={"experiment": "coalition.programming", "episode": ep})
    with pytest.raises(ReplayMiss) as info:
        make_model(mode="replay").complete_sync(
            user("q"), sample_key={"experiment": "coalition.programming", "episode": 2}
        )
    assert "2 calls of coalition.programming were recorded for this model, none at this call site" in str(info.value)
    assert "a count of 0 means all" in str(info.value)


def test_replay_hits_what_auto_recorded_without_network(make_model, server) -> None:  # type: ignore[no-untyped-def]
    make_model().complete_sync(user("q"), sample_key="t")
    server.stop()  # nothing listens any more
    r = make_model(mode="replay").complete_sync(user("q"), sample_key="t")
    assert r.cache_hit and r.content == "fake reply to: q"


def test_record_mode_always_calls_and_replaces(make_model, server) -> None:  # type: ignore[no-untyped-def]
    make_model().complete_sync(user("q"), sample_key="t")
    server.script("second answer")
    r = make_model(mode="record").complete_sync(user("q"), sample_key="t")
    assert not r.cache_hit and r.content == "second answer"
    assert make_model(mode="replay").complete_sync(user("q"), sample_key="t").content == "second answer"


def test_unknown_mode_is_a_clear_error(server) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import fake_config

    with pytest.raises(ConfigError, match="replay, record, auto"):
        ChatModel(fake_config(server), mode="sometimes")  # type: ignore[arg-type]


def test_concurrency_bound_is_honoured(make_model, server) -> None:  # type: ignore[no-untyped-def]
    server.latency_s = 0.3
    m = make_model(concurrency=3)

    async def burst() -> None:
        await asyncio.gather(*(m.complete(user(f"q{i}"), sample_key="t") for i in range(12)))

    asyncio.run(burst())
    assert server.n_requests == 12
    assert 2 <= server.max_in_flight <= 3


def test_retries_5xx_then_succeeds(make_model, server) -> None:  # type: ignore[no-untyped-def]
    server.script(Reply(status=500), Reply(status=503), "finally")
    m = make_model(max_retries=3)
    r = m.complete_sync(user("q"), sample_key="t")
    assert r.content == "finally" and r.retries == 2
    assert server.n_requests == 3 and m.usage.retries == 2


def test_gives_up_after_max_retries_with_a_clear_message(make_model, server) -> None:  # type: ignore[no-untyped-def]
    server.script(*[Reply(status=500)] * 3)
    m = make_model(max_retries=2)
    with pytest.raises(ModelCallFailed, match=r"after 3 attempt\(s\): HTTP 500"):
        m.complete_sync(user("q"), sample_key="t")
    assert server.n_requests == 3 and m.usage.failures == 1
    assert len(m.store) == 0


def test_non_retryable_4xx_fails_at_once(make_model, server) -> None:  # type: ignore[no-untyped-def]
    server.script(Reply(status=400))
    with pytest.raises(ModelCallFailed, match="not transient"):
        make_model().complete_sync(user("q"), sample_key="t")
    assert server.n_requests == 1


def test_429_honours_retry_after(make_model, server) -> None:  # type: ignore[no-untyped-def]
    server.script(Reply(status=429, headers={"Retry-After": "1"}), "ok now")
    r = make_model(backoff_base_s=0.01, backoff_max_s=0.01).complete_sync(user("q"), sample_key="t")
    assert r.content == "ok now"
    t0, t1 = (req["_t"] for req in server.requests)
    # Our own backoff here is at most 0.015 s, so a gap of a second can only come from Retry-After.
    assert t1 - t0 >= 0.95


@pytest.mark.parametrize("bad", [Reply(body=b"<html>gateway hiccup</html>"), Reply(truncate=True)])
def test_malformed_or_truncated_json_is_retried(make_model, server, bad) -> None:  # type: ignore[no-untyped-def]
    server.script(bad, "clean")
    r = make_model().complete_sync(user("q"), sample_key="t")
    assert r.content == "clean" and r.retries == 1


def test_timeout_is_retried_then_reported(make_model, server) -> None:  # type: ignore[no-untyped-def]
    server.script(Reply(delay_s=2.0), "fast")
    assert make_model(timeout_s=0.3).complete_sync(user("q"), sample_key="t").content == "fast"
    server.script(Reply(delay_s=2.0), Reply(delay_s=2.0))
    with pytest.raises(ModelCallFailed, match=r"timed out after 0.3 s"):
        make_model(timeout_s=0.3, max_retries=1).complete_sync(user("other"), sample_key="t")


def test_connection_refused_is_retried_then_reported(make_model, server) -> None:  # type: ignore[no-untyped-def]
    m = make_model(max_retries=1)
    server.stop()
    with pytest.raises(ModelCallFailed, match="connection error"):
        m.complete_sync(user("q"), sample_key="t")


def test_token_budget_stops_new_live_calls_but_not_replays(make_model, server) -> None:  # type: ignore[no-untyped-def]
    m = make_model()
    m.budget = Budget(max_tokens=5)
    m.complete_sync(user("one two three four five six"), sample_key="t")  # spends > 5 tokens
    with pytest.raises(BudgetExceeded, match="Token budget spent") as info:
        m.complete_sync(user("another"), sample_key="t")
    assert "larger budget" in str(info.value) and "resumes without repeating" in str(info.value)
    assert server.n_requests == 1
    assert m.complete_sync(user("one two three four five six"), sample_key="t").cache_hit


def test_money_budget_uses_configured_prices(make_model, server) -> None:  # type: ignore[no-untyped-def]
    m = make_model(price_per_1k_input=1000.0, price_per_1k_output=1000.0)
    m.budget = Budget(max_usd=0.5)
    m.complete_sync(user("q"), sample_key="t")
    assert m.usage.cost_usd > 0.5
    with pytest.raises(BudgetExceeded, match="Money budget spent"):
        m.complete_sync(user("r"), sample_key="t")


def test_money_budget_without_prices_says_so(make_model, server, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TOMLIB_TEST_PAID_KEY", "k" * 20)
    m = make_model(api_key_env="TOMLIB_TEST_PAID_KEY")  # a paid endpoint whose prices we do not know
    m.budget = Budget(max_usd=1.0)
    with pytest.raises(BudgetExceeded, match="no prices"):
        m.complete_sync(user("q"), sample_key="t")
    assert server.n_requests == 0
    free = make_model()  # no key: a self-hosted endpoint costs nothing, so a money budget does not block it
    free.budget = Budget(max_usd=1.0)
    assert free.complete_sync(user("q"), sample_key="t").content
    assert free.usage.cost_usd == 0


def test_key_comes_from_env_and_is_never_stored(make_model, server, monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    secret = "sk-" + secrets.token_hex(16)  # a fresh key-shaped value: no key-like literal in the repo
    monkeypatch.setenv("TOMLIB_TEST_PROVIDER_KEY", secret)
    m = make_model(api_key_env="TOMLIB_TEST_PROVIDER_KEY")
    m.complete_sync(user("q"), sample_key="t")
    assert server.headers[0]["authorization"] == f"Bearer {secret}"
    out = tmp_path / "t.jsonl.gz"
    m.store.export(out)
    m.store.close()
    for path in [m.store.path, out]:
        assert secret.encode() not in path.read_bytes()
    assert secret.encode() not in gzip.decompress(out.read_bytes())
    for wal in m.store.path.parent.glob("*-wal"):
        assert secret.encode() not in wal.read_bytes()


def test_a_provider_is_sent_no_name_of_the_call(make_model, server) -> None:  # type: ignore[no-untyped-def]
    from tomlib.sim import CALL_HEADER

    make_model().complete_sync(user("q"), sample_key="t")
    assert server.headers and CALL_HEADER.lower() not in server.headers[0]  # only a `sim` endpoint is told


def test_missing_key_names_the_variable(make_model, server, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("TOMLIB_TEST_ABSENT_KEY", raising=False)
    m = make_model(api_key_env="TOMLIB_TEST_ABSENT_KEY")
    with pytest.raises(MissingKeyError, match="TOMLIB_TEST_ABSENT_KEY"):
        m.complete_sync(user("q"), sample_key="t")


def test_usable_with_await_inside_a_running_loop_and_from_sync_code(make_model, server) -> None:  # type: ignore[no-untyped-def]
    m = make_model()

    async def notebook_cell() -> tuple[str, str]:
        a = await m.complete(user("awaited"), sample_key="t")
        b = m.complete_sync(user("sync inside a running loop"), sample_key="t")  # like a sync helper in Jupyter
        return a.content, b.content

    a, b = asyncio.run(notebook_cell())
    assert a == "fake reply to: awaited" and b.startswith("fake reply to: sync")


def test_same_store_shared_by_two_models_on_different_ports(server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import fake_config
    from tomlib.testing import FakeOpenAIServer

    store = ResponseStore(tmp_path / "shared.sqlite")
    first = ChatModel(fake_config(server), store=store)
    assert first.store is store  # regression: an empty store is falsy (it has __len__) and was swapped out
    first.complete_sync(user("q"), sample_key="t")
    assert len(store) == 1
    with FakeOpenAIServer() as other:  # a new random port, same endpoint_id
        r = ChatModel(fake_config(other), store=store, mode="replay").complete_sync(user("q"), sample_key="t")
    assert r.cache_hit


def test_the_notebooks_imports_leave_the_sdk_until_a_live_call() -> None:
    """Replay never sends a request, so every notebook's imports leave openai unloaded (about 0.4 s of each
    notebook's start in the offline series); a live call imports it (the tests above)."""
    import subprocess
    import sys

    code = (
        "import sys, tomlib.experiments.adaptive_tom, tomlib.experiments.coalition_programming, "
        "tomlib.experiments.coalition_debate, tomlib.experiments.coalition_reasoning, tomlib.experiments.tom_ib, "
        "tomlib.claims, tomlib.report, tomlib.widgets, tomlib.quickstart; print('openai' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "False", done.stderr


def test_a_stores_first_write_imports_no_pandas() -> None:
    """The first response a store writes reads the model registry (the key names to redact), which checks each
    ``sim:`` entry with :class:`tomlib.sim.SimSpec`: that must not import the simulated model's server and declared
    truth, and pandas with them (over half a second of a client's first live call)."""
    import subprocess
    import sys

    code = (
        "import sys, tempfile\nfrom pathlib import Path\nfrom tomlib.llm import ResponseStore\n"
        "from tomlib.llm._config import read_models\n"
        "assert any(m.sim for m in read_models()[0].values()), 'the registry has a sim: entry to check'\n"
        "store = ResponseStore(Path(tempfile.mkdtemp()) / 's.sqlite')\n"
        "store.put({'model': {'endpoint': 'e', 'model': 'm'}, 'messages': [{'role': 'user', 'content': 'q'}], "
        "'sampling': {}, 'response_format': None, 'sample_key': {'experiment': 'x', 'step': 0}}, {'choices': []})\n"
        "print(sorted(m for m in ('pandas', 'tomlib.sim._declared', 'tomlib.sim._server') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
