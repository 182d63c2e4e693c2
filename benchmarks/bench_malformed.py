"""Malformed replies at scale: N replies of K kinds against the fake server, then the same calls replayed.

Prints, measured in this run: crashes (any exception other than the two documented ones), answered replies lost
(a 200 reply that is not in the store afterwards), attempts missing from the run log, replay misses, and the
longest stall of the engine loop during the live run (a ticker runs on the loop beside the calls). A replay has
no network wait, so its calls run back to back on the loop by design; its stall is its whole synchronous work.
A live call that failed for good has nothing recorded, so its replay is a ReplayMiss, counted as that failure.

    .venv/bin/python benchmarks/bench_malformed.py [--per-kind 100]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections import Counter
from pathlib import Path

from pydantic import BaseModel

from tomlib.llm import ChatModel, ModelCallFailed, ModelConfig, ReplayMiss, ResponseStore, StructuredOutputError
from tomlib.llm._loop import on_engine
from tomlib.testing import FakeOpenAIServer, Reply
from tomlib.trace import RunLog, load_runs


class Answer(BaseModel):
    action: str
    reason: str = ""


def _body(content: object) -> bytes:
    msg = {"role": "assistant", "content": content}
    return json.dumps({"choices": [{"index": 0, "message": msg, "finish_reason": "stop"}]}).encode()


# kind -> (reply, answered): `answered` is False for replies the HTTP layer rejects (they are retried, not stored)
KINDS: dict[str, tuple[Reply, bool]] = {
    "prose": (Reply(content="I would rather move left, honestly."), True),
    "wrong_schema": (Reply(content='{"move": "left"}'), True),
    "wrong_type": (Reply(content='{"action": 5}'), True),
    "array": (Reply(content='["left", "right"]'), True),
    "empty": (Reply(content=""), True),
    "fenced_then_prose": (Reply(content='Sure.\n```json\n{"action": "left"}\n```\nHope that helps {'), True),
    "control_chars": (Reply(content='{"action": "le\u0000ft\u001b[31m"}'), True),
    "nested_5000": (Reply(content="[" * 5000), True),
    "lone_surrogate": (Reply(content='{"action": "wave \ud83d"}'), True),
    "long_string_500k": (Reply(content=json.dumps({"action": "x" * 500_000})), True),
    "braces_1mb": (Reply(content="{" * 1_000_000), True),
    "runaway_2mb": (Reply(content='{"action": "' + "y" * 2_000_000), True),
    "null_content": (Reply(body=_body(None)), False),
    "html_body": (Reply(body=b"<html>502 gateway</html>"), False),
    "truncated_body": (Reply(content='{"action": "left"}', truncate=True), False),
    "http_500": (Reply(status=500), False),
}
HEAVY = {"long_string_500k", "braces_1mb", "runaway_2mb"}


async def _ticker(stop: asyncio.Event, gaps: list[float]) -> None:
    last = time.perf_counter()
    while not stop.is_set():
        await asyncio.sleep(0.005)
        now = time.perf_counter()
        gaps.append(now - last - 0.005)
        last = now


def run(per_kind: int, heavy_per_kind: int) -> None:
    plan = [(kind, i) for kind in KINDS for i in range(heavy_per_kind if kind in HEAVY else per_kind)]
    answered_200 = Counter()

    def responder(request: dict) -> Reply:  # type: ignore[type-arg]
        user = next(m["content"] for m in request["messages"] if m["role"] == "user")
        kind = user.split()[1]
        reply, answered = KINDS[kind]
        if answered:
            answered_200[kind] += 1
        return reply

    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(responder=responder) as srv:
        store = ResponseStore(Path(tmp) / "s.sqlite")
        cfg = ModelConfig(
            name="fake", kind="openai", base_url=srv.base_url, endpoint_id="fake", max_retries=1,
            backoff_base_s=0.001, backoff_max_s=0.002, concurrency=8, timeout_s=30,
        )  # fmt: skip

        def once(mode: str) -> tuple[Counter[str], float, float]:
            chat = ChatModel(cfg, mode=mode, store=store, sync_transcripts=False)  # type: ignore[arg-type]
            outcomes: Counter[str] = Counter()
            with RunLog("malformed", run_id=f"malformed-{mode}", results=tmp) as log:
                log.observe(chat)

                async def one(kind: str, i: int) -> None:
                    try:
                        await chat.complete_json(
                            [{"role": "user", "content": f"kind {kind} number {i}"}],
                            Answer,
                            sample_key={"experiment": "malformed", "condition": kind, "episode": i},
                            max_tokens=64,
                        )
                        outcomes["valid"] += 1
                    except (StructuredOutputError, ModelCallFailed) as exc:
                        outcomes[type(exc).__name__] += 1
                    except ReplayMiss:  # expected for calls that failed live: nothing was answered to record
                        outcomes["ModelCallFailed"] += 1
                    except Exception as exc:
                        outcomes[f"CRASH {type(exc).__name__}"] += 1

                async def main() -> float:
                    stop, gaps = asyncio.Event(), []
                    tick = asyncio.ensure_future(_ticker(stop, gaps))
                    await asyncio.gather(*(one(k, i) for k, i in plan))
                    stop.set()
                    await tick
                    return max(gaps, default=0.0)

                t0 = time.perf_counter()
                stall = asyncio.run(on_engine(main()))
                return outcomes, time.perf_counter() - t0, stall

        live, live_s, live_stall = once("auto")
        events = load_runs(tmp, run_ids=["malformed-auto"], kinds=["llm_call"])
        replay, replay_s, replay_stall = once("replay")
        crashes = sum(v for k, v in {**live, **replay}.items() if k.startswith("CRASH"))
        answered = sum(answered_200.values())
        lost = answered - len(store)
        print(f"{len(plan)} calls over {len(KINDS)} kinds of malformed reply ({per_kind} each, {heavy_per_kind} of the "
              f"{len(HEAVY)} multi-megabyte kinds), concurrency 8, up to 3 attempts each")  # fmt: skip
        print(f"  live:   {dict(live)} in {live_s:.1f} s; longest engine-loop stall {live_stall * 1000:.0f} ms")
        print(f"  replay: {dict(replay)} in {replay_s:.1f} s; longest engine-loop stall {replay_stall * 1000:.0f} ms")
        print(f"  server requests {srv.n_requests}, of them answered with a reply body: {answered}")
        print(f"  crashes: {crashes}; answered replies lost: {lost}; attempts in the run log: {len(events)} "
              f"of {answered} answered; replay outcomes equal live: {live == replay}")  # fmt: skip


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-kind", type=int, default=80)
    ap.add_argument("--heavy-per-kind", type=int, default=5)
    args = ap.parse_args()
    run(args.per_kind, args.heavy_per_kind)
