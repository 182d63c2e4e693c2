"""Run the benchmarks and write ``benchmarks/RESULTS.md``: every figure with its date, commit and the machine's speed.

Each benchmark runs in its own process, as a user would run it (``.venv/bin/python benchmarks/bench_X.py``); its
printed output goes into RESULTS.md under its name, with the UTC date, the commit (``+ local changes`` when the work
tree differs from it), the bench's wall time, and the machine's loop time just before and just after it: the
seconds a fixed pure-Python loop of 10^7 additions takes (these machines are shared and noisy; compare a figure with
another only through ratios measured in one run, which the benchmarks print, or at similar loop times). Sections of
benchmarks not named keep what an earlier run wrote, with that run's date, commit and loop time.

    .venv/bin/python benchmarks/results.py                   # every benchmark but the slow ones
    .venv/bin/python benchmarks/results.py bench_llm series  # just these (names as listed by --list)
    .venv/bin/python benchmarks/results.py --all             # all, the slow ones too (about an hour more)
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "RESULTS.md"
LOOP_ADDITIONS = 10_000_000


@dataclass(frozen=True)
class Bench:
    """One section of RESULTS.md: a benchmark script, the arguments it runs with here, and what it measures."""

    name: str
    script: str
    args: tuple[str, ...]
    what: str
    slow: bool = False
    tail: int | None = None
    """Keep only the last lines of its output (the suite's progress dots say nothing)."""


BENCHES = (
    Bench("bench_llm", "bench_llm.py", (), "model-client throughput beside the raw openai SDK; replay throughput"),
    Bench("bench_malformed", "bench_malformed.py", (), "malformed replies at scale: crashes, lost replies, stalls"),
    Bench("bench_store", "bench_store.py", (), "bytes per model call of the response store and the run log"),
    Bench("bench_adaptive_tom", "bench_adaptive_tom.py", (), "formal adaptive-ToM tables played; the run log's share"),
    Bench(
        "bench_tom_ib",
        "bench_tom_ib.py",
        (),
        "ToM+IB: verifying a belief set with clingo, and the exact planner's solve time",
    ),
    Bench("bench_coalition", "bench_coalition.py", (), "exact stable coalitions: clingo against brute force"),
    Bench("bench_coalition_workers", "bench_coalition_workers.py", (), "notebook 07's checks: here vs on workers"),
    Bench("bench_sandbox", "bench_sandbox.py", (), "sandbox checks/s against OpenAI's human-eval harness"),
    Bench("bench_exercises", "bench_exercises.py", (), "the class's exercises idle and loaded; grading in the sandbox"),
    Bench(
        "bench_widgets",
        "bench_widgets.py",
        (),
        "the trace explorer opening a large run log: index against loading every event",
    ),
    Bench(
        "bench_claims",
        "bench_claims.py",
        ("--e2e-reps", "0"),
        "the claims engine calibrated on known truth (the end-to-end cases through the sim server: `--e2e-reps`)",
    ),
    Bench("bench_plan", "bench_plan.py", (), "stopping when decided against the fixed-n plan"),
    Bench(
        "bench_effective_order",
        "bench_effective_order.py",
        (),
        "the effective ToM order recovered from players of known order: noisy formal ToM-k and the simulated model",
    ),
    Bench(
        "bench_agents",
        "bench_agents.py",
        (),
        "your agent: the conformance check per task for a formal agent, and notebook 15 through the runner",
    ),
    Bench("sweep", "bench_sweep.py", (), "a sweep of notebook 03 with one local worker against two"),
    Bench(
        "series",
        "bench_sweep.py",
        ("--series-only",),
        "the offline series, `tomlib run --force`: one job as the runner sets it, without warm kernels, also "
        "without formal workers, and two jobs",
        slow=True,
    ),
    Bench(
        "bench_full_scale", "bench_full_scale.py", (), "the full profile rehearsed on the simulated model", slow=True
    ),
)


def loop_seconds() -> float:
    """Seconds for 10^7 pure-Python additions in a fresh process: the machine's speed at this moment."""
    code = (
        f"import time\nt = time.perf_counter()\ns = 0\nfor i in range({LOOP_ADDITIONS}):\n    s += i\n"
        "print(time.perf_counter() - t)"
    )
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


def commit() -> str:
    """The short commit of the work tree, marked when the tree has changes."""
    git = ["git", "-C", str(ROOT)]
    try:
        head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True)
        dirty = subprocess.run(  # RESULTS.md itself, written by this script, is not a change of the code measured
            [*git, "status", "--porcelain", "--untracked-files=no", "--", ".", ":!benchmarks/RESULTS.md"],
            capture_output=True,
            text=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git clone)"
    return head.stdout.strip() + (" + local changes" if dirty.stdout.strip() else "")


def run(bench: Bench) -> str:
    """Run one benchmark; its RESULTS.md section."""
    script = [bench.script] if bench.script.startswith("-") else [str(HERE / bench.script)]
    cmd = [sys.executable, *script, *bench.args]
    shown = " ".join([".venv/bin/python", script[0].replace(str(ROOT) + "/", ""), *bench.args])
    print(f"results.py: {shown}", flush=True)
    before, when, rev = loop_seconds(), dt.datetime.now(dt.UTC), commit()
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.perf_counter() - t0
    after = loop_seconds()
    sys.stdout.write(done.stdout)
    shown_out = "\n".join(done.stdout.rstrip().splitlines()[-bench.tail :]) if bench.tail else done.stdout.rstrip()
    status = "" if done.returncode == 0 else f"\n\n**It failed (exit {done.returncode}): its figures are not results.**"
    return (
        f"## {bench.name}\n\n{bench.what}. `{shown}`\n\n"
        f"| measured (UTC) | commit | loop time before / after | bench wall time |\n|---|---|---|---|\n"
        f"| {when:%Y-%m-%d %H:%M} | {rev} | {before:.2f} s / {after:.2f} s | {wall:,.0f} s |{status}\n\n"
        f"```text\n{shown_out}\n```\n"
    )


def sections(text: str) -> dict[str, str]:
    """The sections of an earlier RESULTS.md, by benchmark name."""
    parts = re.split(r"^(?=## )", text, flags=re.M)
    return {p.split("\n", 1)[0][3:].strip(): p.rstrip() + "\n" for p in parts if p.startswith("## ")}


HEADER = """# Benchmark results

Generated by `benchmarks/results.py`; do not edit by hand (run it again: it replaces the sections of the
benchmarks it runs and keeps the others). Each section gives the date, the commit and the machine's loop time (10^7
pure-Python additions in a fresh process, just before and just after the benchmark): these machines are shared and
noisy, so compare figures through the ratios each benchmark measures in one run, or at similar loop times. What each
benchmark does is in its docstring; how the suite and the series are timed is in `docs/development.md`.

"""


def main() -> None:
    names = [b.name for b in BENCHES]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help=f"benchmarks to run (default: all but the slow ones): {', '.join(names)}")
    ap.add_argument("--all", action="store_true", help="run the slow ones too")
    ap.add_argument("--list", action="store_true", help="list the benchmarks and stop")
    args = ap.parse_args()
    if args.list:
        for b in BENCHES:
            print(f"{b.name:<24} {'(slow) ' if b.slow else ''}{b.what}")
        return
    if unknown := [n for n in args.names if n not in names]:
        sys.exit(f"results.py: no benchmark named {', '.join(unknown)}; the names are {', '.join(names)}")
    chosen = [b for b in BENCHES if b.name in args.names or (not args.names and (args.all or not b.slow))]
    kept = sections(OUT.read_text()) if OUT.exists() else {}
    for bench in chosen:
        kept[bench.name] = run(bench)
        body = "\n".join(kept[n] for n in names if n in kept)  # written after each: a stopped run keeps what it made
        OUT.write_text(HEADER + body)
    print(f"results.py: wrote {OUT}")


if __name__ == "__main__":
    main()
