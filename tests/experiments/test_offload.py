"""Formal conditions played in worker processes (issue 35): the same tables, units, weights and run logs as in one
process, the events in the same order; the runner shares the cores among the notebooks it runs at once."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.experiments._logs import run_events
from tomlib.errors import UsageError
from tomlib.experiments import adaptive_tom as at
from tomlib.experiments.adaptive_tom import _offload, _played
from tomlib.workers import ENV_WORKERS, formal_workers, per_notebook

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def _play(monkeypatch: pytest.MonkeyPatch, tmp: Path, workers: int) -> tuple[list[at.Reproduction], Any, Path]:
    """Table 3 with the stand-in and A-ToM's losses carried, a Table 1 with the shared tie model, and the stand-in's
    playing rules, into their own results folder."""
    results = tmp / f"results-{workers}"
    monkeypatch.setattr(_offload, "START_AFTER_S", 0.0)  # workers from the first condition on
    monkeypatch.setenv("TOMLIB_RESULTS", str(results))
    monkeypatch.setenv(ENV_WORKERS, str(workers))

    async def all_of_it() -> tuple[list[at.Reproduction], Any]:
        agents = ["ToM-1", "Greedy", "PBT", "A-ToM (Hedge)"]
        t3 = await at.table3(agents=agents, episodes=3, progress=False, pbt="ppo-selfplay", carry_losses=True)
        t1 = await at.table1(tasks=["memory_n", "game1"], episodes=3, progress=False, tie_break="shared")
        rules = {"default": {}, "argmax": {"ppo_deterministic": True}}
        stand_in = await at.stand_in_sensitivity(agents=agents, episodes=2, variants=rules, progress=False)
        return [t3, t1], stand_in

    runs, stand_in = asyncio.run(all_of_it())
    return runs, stand_in, results


def test_worker_processes_give_the_same_tables_units_and_run_logs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    played: list[Any] = []

    def counting(job: _offload.ConditionJob, log: Any, pool: Any, on_episode: Any, *rest: Any) -> Any:
        played.append(job.condition)
        return elsewhere(job, log, pool, on_episode, *rest)

    elsewhere = _offload.play_elsewhere
    monkeypatch.setattr(_offload, "play_elsewhere", counting)
    one, one_rules, one_dir = _play(monkeypatch, tmp_path, 1)
    assert played == []  # one worker: everything in this process
    _played.forget()  # the second run plays every condition again, in the workers
    two, two_rules, two_dir = _play(monkeypatch, tmp_path, 2)
    # every formal condition to workers, in two parts unless carried (none is replayed: the stand-in's rules play 2
    # episodes a pair, Table 3 played 3)
    assert len(played) == 6 + 2 * (6 + 18 + 12)
    for a, b in zip(one, two, strict=True):
        pd.testing.assert_frame_equal(a.table, b.table)
        pd.testing.assert_frame_equal(a.episodes, b.episodes)
        pd.testing.assert_frame_equal(a.weights, b.weights)
        assert run_events(one_dir, a.run_id) == run_events(two_dir, b.run_id)  # every event, in the same order
    pd.testing.assert_frame_equal(one_rules, two_rules)
    units = sorted(p.relative_to(one_dir) for p in (one_dir / "units").rglob("*") if p.is_file())
    assert units and units == sorted(p.relative_to(two_dir) for p in (two_dir / "units").rglob("*") if p.is_file())
    for rel in units:
        assert (one_dir / rel).read_bytes() == (two_dir / rel).read_bytes(), rel


def test_a_worker_that_dies_leaves_the_condition_to_the_caller(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    monkeypatch.setenv(ENV_WORKERS, "2")
    monkeypatch.setattr(_offload, "START_AFTER_S", 0.0)
    pairs = [("ToM-0", "ToM-1"), ("ToM-1", "ToM-0")]
    first = asyncio.run(at.table1(tasks=["memory_1"], pairs=pairs, episodes=2, progress=False))
    pool = _offload.executor()
    assert pool is not None
    pool.submit(os._exit, 1).exception()  # a worker gone (killed, out of memory): the pool is broken
    _played.forget()  # else the table is replayed from this process, never asking the workers
    again = asyncio.run(at.table1(tasks=["memory_1"], pairs=pairs, episodes=2, progress=False))
    pd.testing.assert_frame_equal(first.table, again.table)
    assert "a formal worker process stopped; playing the rest here" in capsys.readouterr().err
    assert formal_workers() == 1  # for the rest of this process
    _offload.close()


def test_the_runner_shares_the_cores_among_the_notebooks_it_runs_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from tomlib.runner._cluster import driver_env
    from tomlib.workers import cores

    monkeypatch.delenv(ENV_WORKERS, raising=False)
    assert formal_workers() == min(8, cores())
    assert per_notebook(1) == {ENV_WORKERS: str(cores())}
    assert driver_env(2)[ENV_WORKERS] == str(max(1, cores() // 2))
    assert driver_env(4 * cores())[ENV_WORKERS] == "1"
    assert ENV_WORKERS not in driver_env(None)  # a remote cluster: its machines' own cores
    monkeypatch.setenv(ENV_WORKERS, "3")  # the user's choice stands, and reaches remote workers too
    assert driver_env(2)[ENV_WORKERS] == driver_env(None)[ENV_WORKERS] == "3"
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv(ENV_WORKERS, bad)
        with pytest.raises(ValueError, match=f"{ENV_WORKERS} must be a whole number of worker processes"):
            formal_workers()
        with pytest.raises(UsageError, match=f"{ENV_WORKERS} must be"):  # the runner: before any kernel starts
            driver_env(1)


def test_the_workers_end_when_the_process_that_started_them_is_killed(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    script = (
        "import os, time\n"
        "from tomlib.experiments.adaptive_tom import _offload\n"
        "_offload.START_AFTER_S = 0\n"
        "pool = _offload.executor()\n"
        "print(*{pool.submit(os.getpid).result() for _ in range(8)}, flush=True)\n"
        "time.sleep(600)\n"
    )
    env = {**os.environ, ENV_WORKERS: "2"}
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
    assert parent.stdout is not None
    workers = [int(pid) for pid in parent.stdout.readline().split()]
    assert workers and parent.pid not in workers
    parent.send_signal(signal.SIGKILL)  # no atexit, no shutdown of the pool
    parent.wait()

    def alive(pid: int) -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        with open(f"/proc/{pid}/stat") as f:  # reaped by init yet? a zombie has ended
            return f.read().split(") ", 1)[1][0] != "Z"

    deadline = time.monotonic() + 30  # how long to wait for them, not a measure of speed
    while any(alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(alive(p) for p in workers), "a worker outlived the process that started it"


def test_an_interrupt_of_the_kernels_process_group_prints_nothing_from_the_workers() -> None:
    # jupyter_client sends SIGINT to a kernel's whole process group before it shuts the kernel down
    import os
    import signal
    import subprocess
    import sys

    script = (
        "import os, signal, time\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)  # as a kernel does, whatever it inherited\n"
        "from tomlib.experiments.adaptive_tom import _offload\n"
        "_offload.START_AFTER_S = 0\n"
        "pool = _offload.executor()\n"
        "pids, deadline = set(), time.monotonic() + 60\n"
        "while len(pids) < 2 and time.monotonic() < deadline:  # both workers up (they start on demand)\n"
        "    pids |= {f.result() for f in [pool.submit(os.getpid) for _ in range(4)]}\n"
        "try:\n"
        "    print(len(pids), flush=True)\n"
        "    time.sleep(60)\n"
        "except KeyboardInterrupt:\n"
        "    time.sleep(1)\n"
        "    print('still working:', pool.submit(sum, [1, 2]).result(), flush=True)\n"
    )
    env = {**os.environ, ENV_WORKERS: "2"}
    kernel = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    assert kernel.stdout is not None
    assert int(kernel.stdout.readline()) == 2
    os.killpg(kernel.pid, signal.SIGINT)
    out, err = kernel.communicate(timeout=60)
    assert "still working: 3" in out
    assert "KeyboardInterrupt" not in err and "Traceback" not in err, err
