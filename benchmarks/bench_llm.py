"""Model-client throughput against the fake OpenAI server, and replay throughput from the store.

400 calls at 100 ms server latency with concurrency 1, 8 and 32: calls/s, speedup over concurrency 1 as a
fraction of the ideal (min(concurrency, calls)), and client CPU per call; each beside the raw ``openai.AsyncOpenAI``
client making the same calls at the same concurrency in the same run (no store, no retries of ours, no parsing), so
the figure says what is ours and what is the SDK's. Then the same 400 calls replayed from the store.
The server runs in its own process so its CPU is not billed to the client.

    .venv/bin/python benchmarks/bench_llm.py [--calls 400] [--latency 0.1]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TOMLIB_TRANSCRIPTS", tempfile.mkdtemp())  # benchmark on an empty store only

from tomlib.llm import ChatModel, ModelConfig, ResponseStore

SERVER = """
import sys, time
from tomlib.testing import FakeOpenAIServer
srv = FakeOpenAIServer(latency_s=float(sys.argv[1])).start()
print(srv.port, flush=True)
sys.stdin.read()
"""


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(latency)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    port = int(proc.stdout.readline())
    return proc, f"http://127.0.0.1:{port}/v1"


async def burst(model: ChatModel, calls: int) -> None:
    await asyncio.gather(
        *(
            model.complete(
                [{"role": "user", "content": f"question {i}"}], sample_key={"experiment": "bench", "step": i}
            )
            for i in range(calls)
        )
    )


async def raw_burst(base_url: str, concurrency: int, calls: int) -> None:
    """The SDK alone: ``calls`` chat completions through one ``AsyncOpenAI``, ``concurrency`` at a time."""
    from openai import AsyncOpenAI

    limit = asyncio.Semaphore(concurrency)
    async with AsyncOpenAI(base_url=base_url, api_key="unused-by-the-fake-server", max_retries=0) as client:

        async def one(i: int) -> None:
            async with limit:
                await client.chat.completions.create(
                    model="fake", messages=[{"role": "user", "content": f"question {i}"}]
                )

        await asyncio.gather(*(one(i) for i in range(calls)))


def measure_raw(base_url: str, concurrency: int, calls: int) -> tuple[float, float]:
    cpu0, t0 = time.process_time(), time.perf_counter()
    asyncio.run(raw_burst(base_url, concurrency, calls))
    return time.perf_counter() - t0, time.process_time() - cpu0


def measure(
    base_url: str, concurrency: int, calls: int, store: ResponseStore, mode: str = "auto"
) -> tuple[float, float]:
    cfg = ModelConfig(
        name="fake", kind="openai", model="fake", base_url=base_url, endpoint_id="fake", concurrency=concurrency
    )
    model = ChatModel(cfg, mode=mode, store=store)  # type: ignore[arg-type]
    cpu0, t0 = time.process_time(), time.perf_counter()
    asyncio.run(burst(model, calls))
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    expected_live = 0 if mode == "replay" else calls
    assert model.usage.live_calls == expected_live, model.usage
    model.close()
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--latency", type=float, default=0.1)
    args = ap.parse_args()
    proc, url = start_server(args.latency)
    tmp = Path(tempfile.mkdtemp())
    try:
        print(f"{args.calls} calls, server latency {args.latency * 1000:.0f} ms, {os.cpu_count()} CPUs")
        head = ("client", "concurrency", "wall s", "calls/s", "speedup", "of ideal", "client CPU ms/call")
        print("{:<10} {:>11} {:>8} {:>8} {:>8} {:>9} {:>19}".format(*head))
        base: dict[str, float] = {}
        ours_over_raw = []
        for c in (1, 8, 32):
            thr = {}
            for who in ("AsyncOpenAI", "tomlib"):
                if who == "tomlib":
                    wall, cpu = measure(url, c, args.calls, ResponseStore(tmp / f"c{c}.sqlite"))
                else:
                    wall, cpu = measure_raw(url, c, args.calls)
                thr[who] = args.calls / wall
                speedup = thr[who] / base.setdefault(who, thr[who])
                ideal = min(c, args.calls)
                cpu_ms = cpu / args.calls * 1000
                print(
                    f"{who:<10} {c:>11} {wall:>8.2f} {thr[who]:>8.1f} {speedup:>7.2f}x {speedup / ideal:>8.0%} "
                    f"{cpu_ms:>19.2f}"
                )
            ours_over_raw.append(f"{thr['tomlib'] / thr['AsyncOpenAI']:.2f} at {c}")
        print("tomlib's calls/s over the raw SDK's, same run: " + ", ".join(ours_over_raw))
        store = ResponseStore(tmp / "c32.sqlite")
        wall, cpu = measure(url, 32, args.calls, store, mode="replay")
        print(
            f"replay from the store: {args.calls / wall:,.0f} calls/s ({cpu / args.calls * 1000:.2f} ms CPU per call)"
        )
    finally:
        proc.kill()


if __name__ == "__main__":
    main()
