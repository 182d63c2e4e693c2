"""The full profile rehearsed on the simulated model: every LLM notebook of ``configs/profiles/full.yaml`` run by
papermill against :class:`tomlib.sim.SimServer` (its own process, lognormal latency, 429s and 503s), on a declared
part of the papers' work, with the projection to full scale printed. The part keeps what sets the parallelism: the
adaptive-ToM notebooks play the paper's 30 episodes a condition on their first task only (a few episodes of every
task would leave the endpoint idle behind each episode's chain of sequential calls); the others run ``--fraction``
of their tasks, questions, trials or debates. Each notebook is first started at full scale with a one-token budget,
so it announces its own estimate and is refused before any call: the projection is the measured calls times the
ratio of the two estimates.

Per notebook: calls answered vs the notebook's own pre-run estimate (scaled alike); calls/s vs the ideal
(concurrency / median latency); the kernel's CPU-ms per answered call (client, agents and notebook, without the
sandbox's children or the server); the kernel's peak RSS; response-store and run-log sizes, in MB and in bytes per
answered call (the logs compressed once the notebook has finished, as ``tomlib run`` leaves them; the log figure
holds the notebook's formal rows too); projected wall time at full scale on an endpoint with the same latency. The
last lines give store and log bytes per call over all notebooks, against issue 35's 1,500. Then the largest run log
is opened in the explorer, and one notebook is killed at about half its calls and rerun: every call answered and
stored before the kill is reused.

Each multi-model notebook runs its first model only (the others make the same calls again; the projection multiplies
by the number of models). The formal rows run at ``--formal-episodes`` (not what is timed here).

    .venv/bin/python benchmarks/bench_full_scale.py [--fraction 0.05] [--latency 1.0] [--concurrency 64]
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import yaml

from tomlib.trace._index import log_in
from tomlib.trace._runs import compress_finished

ROOT = Path(__file__).resolve().parents[1]
MODEL = "simbench"
FULL_COUNTS = {"humaneval_tasks": 164, "mbpp_tasks": 500, "aqua_questions": 254, "mmlu_questions": 131}


# -- the simulated endpoint, in a process of its own ---------------------------------------------------------------


def serve(spec: dict[str, Any], conn: Any) -> None:
    """Serve the simulation; answer ``stats`` with (answered, attempts, first answer time, last answer time)."""
    from tomlib.sim import SimServer, SimSpec
    from tomlib.testing import Reply

    stats = {"ok": 0, "all": 0, "first": None, "last": None}
    lock = threading.Lock()

    class Counted(SimServer):
        def _answer(self, request: dict[str, Any]) -> Reply:
            reply = super()._answer(request)
            with lock:
                stats["all"] += 1
                if reply.status == 200:
                    stats["ok"] += 1
                    done = time.time() + (reply.delay_s or 0.0)
                    stats["first"] = stats["first"] or time.time()
                    stats["last"] = max(stats["last"] or 0.0, done)
            return reply

    with Counted(SimSpec(**spec), keep_requests=False) as srv:
        conn.send(srv.base_url)
        while (msg := conn.recv()) != "stop":
            with lock:
                conn.send(dict(stats))
                if msg == "reset":
                    stats.update(ok=0, all=0, first=None, last=None)


class Endpoint:
    def __init__(self, spec: dict[str, Any]) -> None:
        self.conn, child = mp.Pipe()
        self.proc = mp.get_context("spawn").Process(target=serve, args=(spec, child), daemon=True)
        self.proc.start()
        self.base_url = self.conn.recv()

    def stats(self, reset: bool = False) -> dict[str, Any]:
        self.conn.send("reset" if reset else "stats")
        return self.conn.recv()

    def stop(self) -> None:
        self.conn.send("stop")
        self.proc.join(5)


# -- the notebooks -------------------------------------------------------------------------------------------------


def first_model(params: dict[str, Any]) -> dict[str, Any]:
    """The full profile's parameters on the simulated model: the first model of a list only."""
    out = {k: (MODEL if k in ("model", "models", "judge") else v) for k, v in params.items()}
    out["llm_mode"] = "auto"
    return out


def scaled(params: dict[str, Any], fraction: float, formal_episodes: int) -> dict[str, Any]:
    """The part of the work that is run (module docstring)."""
    out = first_model(params)
    if "llm_episodes" in out:  # adaptive ToM: the paper's episodes on the first task (or fewer agents in Table 3)
        out["episodes"] = formal_episodes
        if "llm_tasks" in out:
            out["llm_tasks"] = str(out["llm_tasks"]).split(",")[0]
        if "llm_agents" in out:
            out["llm_agents"] = ",".join(str(out["llm_agents"]).split(",")[:3])
        return out
    for key, full in FULL_COUNTS.items():
        if key in out:
            out[key] = max(1, round((full if int(out[key]) == 0 else int(out[key])) * fraction))
    for key in ("trials", "debates"):
        if key in out:
            out[key] = max(1, round(int(out[key]) * fraction))
    return out


def at_full_scale(params: dict[str, Any], formal_episodes: int) -> dict[str, Any]:
    out = first_model(params)
    if "llm_episodes" in out:
        out["episodes"] = formal_episodes
    return out


def models_in(params: dict[str, Any]) -> int:
    key = "models" if "models" in params else "model"
    return max(1, len([n for n in str(params.get(key, "")).split(",") if n]))


def run_notebook(nb: str, params: dict[str, Any], env: dict[str, str], out: Path, kill_at: int = 0, ep=None):  # type: ignore[no-untyped-def]
    """Execute one notebook with papermill in a child; watch its kernel (CPU, peak RSS). ``kill_at``: kill the
    whole run once the endpoint has answered that many calls."""
    code = (
        "import sys, json, papermill as pm; "
        f"pm.execute_notebook({str(ROOT / 'notebooks' / (nb + '.ipynb'))!r}, {str(out)!r}, "
        f"parameters=json.loads(sys.argv[1]), progress_bar=False, cwd={str(ROOT / 'notebooks')!r})"
    )
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", code, json.dumps(params)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    cpu: dict[int, float] = {}
    peak = 0
    killed = False
    parent = psutil.Process(proc.pid)
    while proc.poll() is None:
        try:
            for p in parent.children(recursive=True):
                if "ipykernel" in " ".join(p.cmdline()):
                    t = p.cpu_times()
                    cpu[p.pid] = t.user + t.system  # its own time; the sandbox's checks are its children's
                    peak = max(peak, p.memory_info().rss)
        except psutil.Error:
            pass
        if kill_at and ep is not None and ep.stats()["ok"] >= kill_at:
            os.killpg(proc.pid, signal.SIGKILL)
            killed = True
            proc.wait()
            break
        time.sleep(0.25)
    log = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
    return {
        "ok": proc.returncode == 0,
        "killed": killed,
        "seconds": time.perf_counter() - t0,
        "cpu_s": sum(cpu.values()),
        "peak_rss": peak,
        "log": log,
    }


def estimated_calls(path: Path, before: int) -> int:
    """Calls announced by the notebook's estimate lines (written to TOMLIB_ESTIMATES)."""
    import re

    if not path.exists():
        return 0
    lines = path.read_text().splitlines()[before:]
    return sum(int(m[1].replace(",", "")) for ln in lines if (m := re.search(r"([\d,]+) model calls", ln)))


def stored(store: Path) -> int:
    """Responses of the simulated model in a store (the committed transcripts it imports are not counted)."""
    if not store.exists():
        return 0
    with sqlite3.connect(store) as db:
        return int(db.execute("select count(*) from responses where model like ?", (f"%#{MODEL}",)).fetchone()[0])


def size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fraction", type=float, default=0.05, help="share of the papers' task counts to run")
    ap.add_argument("--latency", type=float, default=1.0, help="median reply time of the simulated endpoint (s)")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--rate-429", type=float, default=0.01)
    ap.add_argument("--rate-5xx", type=float, default=0.005)
    ap.add_argument("--formal-episodes", type=int, default=3)
    ap.add_argument("--notebooks", default="", help="comma-separated stems (default: every LLM notebook of full)")
    ap.add_argument("--kill", default="08_coalition_table1", help="the notebook killed at half and rerun")
    args = ap.parse_args()

    profile = yaml.safe_load((ROOT / "configs/profiles/full.yaml").read_text())
    chosen = [n for n in args.notebooks.split(",") if n] or [n for n in profile["notebooks"] if n != "00_quickstart"]
    spec = {
        "name": "bench",
        "latency_median_s": args.latency,
        "latency_sigma": 0.5,
        "rate_429": args.rate_429,
        "rate_5xx": args.rate_5xx,
        "retry_after_s": 0.5,
        "tom_error": 0.1,
    }
    ep = Endpoint(spec)
    work = Path(tempfile.mkdtemp(prefix="tomlib-fullscale-"))
    configs = work / "configs"
    shutil.copytree(ROOT / "configs", configs)
    with open(configs / "models.yaml", "a") as fh:
        fh.write(
            f"\n  {MODEL}:\n    kind: sim\n    base_url: {ep.base_url}\n    endpoint_id: sim-bench\n"
            f"    concurrency: {args.concurrency}\n    max_retries: 8\n    backoff_base_s: 0.05\n"
            f"    timeout_s: {max(30.0, 20 * args.latency)}\n"
        )
    estimates = work / "estimates.txt"
    base_env = {
        **os.environ,
        "TOMLIB_CONFIGS": str(configs),
        "TOMLIB_ESTIMATES": str(estimates),
        "TOMLIB_SPEND_TO_BUDGET": "1",
        "PYTHONPATH": str(ROOT),
        "TOMLIB_TRANSCRIPTS": str(work / "no-transcripts"),  # each store holds this run's calls, not the committed ones
    }
    (work / "no-transcripts").mkdir()
    ideal = args.concurrency / args.latency if args.latency else float("inf")
    mean_latency = args.latency * math.exp(0.5**2 / 2)
    print(
        f"simulated endpoint: median {args.latency:g} s (mean {mean_latency:.2f} s), concurrency {args.concurrency}, "
        f"429 {args.rate_429:.1%}, 503 {args.rate_5xx:.1%}; fraction {args.fraction:g} of the papers' counts; "
        f"ideal {ideal:.0f} calls/s (concurrency / median; / mean latency: {args.concurrency / mean_latency:.0f})"
    )
    head = (
        f"{'notebook':<27}{'calls':>8}{'est.':>8}{'act/est':>8}{'calls/s':>8}{'%ideal':>7}{'CPU ms':>7}"
        f"{'RSS MB':>7}{'store MB':>9}{'log MB':>7}{'B/call':>7}{'wall s':>7}{'full calls':>11}{'full h':>7}"
    )
    print(head)
    largest: tuple[int, str] = (0, "")
    total_calls = total_hours = 0.0
    sizes = {"calls": 0, "store": 0, "log": 0}
    for nb in chosen:
        full_params = profile["notebooks"][nb]
        params = scaled(full_params, args.fraction, args.formal_episodes)
        res = work / "results" / nb
        env = {**base_env, "TOMLIB_RESULTS": str(res), "TOMLIB_STORE": str(work / "store" / f"{nb}.sqlite")}
        # the notebook's own estimate at full scale: a one-token budget refuses it before its first call
        before = len(estimates.read_text().splitlines()) if estimates.exists() else 0
        refused = {**env, "TOMLIB_MAX_TOKENS": "1", "TOMLIB_SPEND_TO_BUDGET": "0"}
        full = {**at_full_scale(full_params, args.formal_episodes), "results_dir": str(work / "refused")}
        run_notebook(nb, full, refused, work / "refused.ipynb")
        full_est = estimated_calls(estimates, before) * models_in(full_params)
        before = len(estimates.read_text().splitlines()) if estimates.exists() else 0
        ep.stats(reset=True)
        got = run_notebook(nb, {**params, "results_dir": str(res)}, env, work / f"{nb}.ipynb")
        s = ep.stats()
        est = estimated_calls(estimates, before)
        calls = s["ok"]
        span = (s["last"] - s["first"]) if s["first"] else 0.0
        rate = calls / span if span else 0.0
        compress_finished(list((res / "runs").glob("*")))  # as the runner does once a notebook has finished
        logs = size(res / "runs")
        stored_bytes = size(work / "store" / f"{nb}.sqlite") + size(work / "store" / f"{nb}.sqlite-wal")
        sizes["calls"] += calls
        sizes["store"] += stored_bytes
        sizes["log"] += logs
        if logs > largest[0]:
            largest = (logs, str(res))
        full_calls = calls * full_est / est if est else float("nan")
        full_h = full_calls / rate / 3600 if rate else float("nan")
        total_calls += full_calls
        total_hours += full_h if rate else 0.0
        print(
            f"{nb:<27}{calls:>8,}{est:>8,}{(calls / est if est else float('nan')):>8.2f}{rate:>8.1f}"
            f"{100 * rate / ideal:>6.0f}%{1000 * got['cpu_s'] / max(calls, 1):>7.1f}{got['peak_rss'] / 2**20:>7.0f}"
            f"{stored_bytes / 2**20:>9.1f}{logs / 2**20:>7.1f}{(stored_bytes + logs) / max(calls, 1):>7,.0f}"
            f"{got['seconds']:>7.0f}"
            f"{full_calls:>11,.0f}{full_h:>7.1f}" + ("" if got["ok"] else "  FAILED")
        )
        if not got["ok"]:
            print("\n".join(got["log"].splitlines()[-15:]))
    print(f"projected full profile (every model): {total_calls:,.0f} calls, {total_hours:.1f} h at these rates")
    if sizes["calls"]:
        per = {k: sizes[k] / sizes["calls"] for k in ("store", "log")}
        print(
            f"storage per model call: store {per['store']:,.0f} B + run log {per['log']:,.0f} B = "
            f"{per['store'] + per['log']:,.0f} B (issue 35's target: at most 1,500 B) over {sizes['calls']:,} calls; "
            f"at the projected {total_calls:,.0f} calls: {(per['store'] + per['log']) * total_calls / 2**30:.2f} GB"
        )

    # the explorer on the largest run log: opening it (the index, three episodes drawn), then the summary plot
    if largest[1]:
        from tomlib.widgets import SummaryView, TraceExplorer

        logs = {p.name: size(p) for p in Path(largest[1], "runs").glob("*") if log_in(p) is not None}
        biggest = max(logs, key=logs.__getitem__)
        t0 = time.perf_counter()
        explorer = TraceExplorer([biggest], results=largest[1], prerender=3)
        opened = time.perf_counter() - t0
        t0 = time.perf_counter()
        summary = SummaryView(explorer)
        drawn = time.perf_counter() - t0
        print(
            f"explorer on the largest run log ({logs[biggest] / 2**20:.0f} MB, {len(summary.frame):,} episodes): "
            f"open {opened:.2f} s; summary plot {drawn:.2f} s"
        )

    # kill at about half and rerun: nothing answered and stored is asked again
    if args.kill:
        nb = args.kill
        params = scaled(profile["notebooks"][nb], args.fraction, args.formal_episodes)
        res, store = work / "kill" / "results", work / "kill" / "store.sqlite"
        env = {**base_env, "TOMLIB_RESULTS": str(res), "TOMLIB_STORE": str(store)}
        full = stored(work / "store" / f"{nb}.sqlite") if nb in chosen else 0
        if not full:
            raise SystemExit(f"--kill {nb}: run it first (add it to --notebooks) so its number of calls is known")
        ep.stats(reset=True)
        first = run_notebook(nb, {**params, "results_dir": str(res)}, env, work / "kill.ipynb", full // 2, ep)
        answered_first = ep.stats(reset=True)["ok"]
        kept = stored(store)
        second = run_notebook(nb, {**params, "results_dir": str(res)}, env, work / "kill2.ipynb")
        answered_second = ep.stats()["ok"]
        final = stored(store)
        print(
            f"kill {nb} at {answered_first:,} of {full:,} answered calls (killed: {first['killed']}): {kept:,} stored; "
            f"rerun {'ok' if second['ok'] else 'FAILED'} made {answered_second:,} calls, {final:,} stored in all; "
            f"answered-and-stored calls asked again: {kept + answered_second - final:,}; answered in flight at the "
            f"kill (not stored, asked again): {answered_first - kept:,}"
        )
    ep.stop()
    print(f"(work files in {work})")


if __name__ == "__main__":
    main()
