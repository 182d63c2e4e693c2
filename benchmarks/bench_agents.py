"""Your agent (issue 57): how long the conformance check takes per task for a formal agent (target: under 10 s), and
what notebook 15 with its default agent costs the offline series (target: at most 30 s).

(1) ``tomlib.agents.check_agent`` on ``FormalToMAgent(2)`` and on the Bayesian agent, every task, in this process,
after one warm-up check of the kitchen (the exact kitchen model is solved once per machine, not per agent): each
task's seconds from the check's own timing, and the slowest task against the 10 s target; then the command
itself from a fresh process (imports and the kitchen read from its cache included).
(2) Notebook 15 through the runner into a fresh results folder (kernel start, imports, the run, its HTML page), the
way the series runs it, against the 30 s target; and the series' notebook 01 run the same way beside it, for scale.

    .venv/bin/python benchmarks/bench_agents.py [--reps 3] [--no-notebook]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tomlib.agents import check_agent  # noqa: E402

AGENTS = ("tomlib.agents.formal:FormalToMAgent(order=2)", "tomlib.agents.bayes:BayesToMAgent")
CHECK_TARGET_S = 10.0
NOTEBOOK_TARGET_S = 30.0
TASKS = ("memory_1", "memory_n", "game1", "game2", "overcooked")


def check_times(spec: str, reps: int) -> list[dict[str, float]]:
    """The seconds per task of each of ``reps`` checks of ``spec`` in this process (the first is the one a user
    waits for; later ones reuse the games' memos of best responses)."""
    out = []
    for _ in range(reps):
        result = check_agent(spec)
        assert result.passed, f"{spec} failed its check: {result.failures[:1]}"
        out.append(dict(result.seconds))
    return out


def _median(runs: list[dict[str, float]]) -> dict[str, float]:
    return {t: statistics.median(r[t] for r in runs) for t in runs[0]}


def notebook_seconds(stem: str) -> float:
    """Wall seconds of ``tomlib run <stem>`` into a fresh results folder (kernel and page included)."""
    with tempfile.TemporaryDirectory() as results:
        started = time.perf_counter()
        subprocess.run(
            [str(ROOT / ".venv" / "bin" / "tomlib"), "run", stem, "--results", results],
            check=True,
            capture_output=True,
            cwd=ROOT,
        )
        return time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-notebook", action="store_true", help="skip timing notebook 15 through the runner")
    args = ap.parse_args()
    check_agent(AGENTS[0], tasks=["overcooked"])  # warm-up: the exact kitchen, once per machine
    print("| agent | " + " | ".join(TASKS) + " | slowest / 10 s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for spec in AGENTS:
        runs = check_times(spec, args.reps)
        for label, times in (("first", runs[0]), (f"median of {len(runs)}", _median(runs))):
            cells = " | ".join(f"{times[t]:.2f}" for t in TASKS)
            print(f"| `{spec}`, {label} | {cells} | {max(times.values()) / CHECK_TARGET_S:.2f} |")
    print("seconds per task of `tomlib check-agent`'s five checks in one process, after the kitchen's warm-up")
    started = time.perf_counter()
    tool = str(ROOT / ".venv" / "bin" / "tomlib")
    subprocess.run([tool, "check-agent", AGENTS[0]], check=True, capture_output=True, cwd=ROOT)
    whole = time.perf_counter() - started
    print(f"`tomlib check-agent {AGENTS[0]}` from a fresh process, all five tasks: {whole:.1f} s")
    if args.no_notebook:
        return
    ours, table1 = notebook_seconds("15"), notebook_seconds("01")
    print(
        f"notebook 15 through the runner: {ours:.1f} s ({ours / NOTEBOOK_TARGET_S:.2f} of the 30 s target); "
        f"notebook 01 the same way: {table1:.1f} s (15 / 01 = {ours / table1:.2f})"
    )


if __name__ == "__main__":
    main()
