"""Notebooks on dask.distributed: real schedulers and worker processes on this machine."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from tomlib.llm import ResponseStore
from tomlib.runner import Profile, sweep
from tomlib.testing import FakeOpenAIServer

from .test_runner import write_nb

pytestmark = pytest.mark.cluster
distributed = pytest.importorskip("distributed")

TIMING = ["seconds", "started", "finished", "host", "output", "results_dir"]


def grid(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "grid.yaml"
    path.write_text(text)
    return path


@pytest.fixture
def cluster(isolated: Path) -> Iterator[distributed.LocalCluster]:
    """Two worker processes that record into their own response store, as workers on another machine would."""
    env = {"TOMLIB_STORE": str(isolated / "worker-store" / "responses.sqlite")}
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address="127.0.0.1:0",  # ":0" would listen on every interface
        env=env,
        local_directory=str(isolated / "dask"),  # not dask's shared $TMPDIR/dask-scratch-space (issue 30)
        scheduler_kwargs={"local_directory": str(isolated / "dask")},
    ) as lc:
        yield lc


def test_two_workers_give_the_serial_index_and_tables(isolated: Path) -> None:
    """A real notebook (04, the quickest of the formal tables; 03's sweep is in tests/runner/test_runner.py) over a
    grid of two points: the same index and the same long-form results, 1 or 2 workers (two points keep both workers
    busy at once)."""
    g = grid(isolated, "parameters:\n  episodes: [2, 3]\n  seed: [1]\nfixed:\n  model: ''\n")
    frames = {}
    for jobs in (1, 2):
        index = sweep("04", g, jobs=jobs, profile=Profile(name="t"), name=f"j{jobs}", progress=False)
        df = pd.read_csv(index, keep_default_na=False)
        assert list(df["status"]) == ["ok"] * 2, df.to_dict("records")
        assert len(set(df["tables"])) == 1 and "adaptive_tom.table4" in df["tables"].iloc[0].split(";")
        results = pd.read_csv(index.with_name("results.csv"))
        assert {"run_id", "params.episodes", "params.seed", "params.model", "inputs", "value"} <= set(results.columns)
        frames[jobs] = (df.drop(columns=TIMING), results.drop(columns=["started", "finished"]))
    pd.testing.assert_frame_equal(frames[1][0], frames[2][0])
    pd.testing.assert_frame_equal(frames[1][1], frames[2][1])
    assert set(frames[2][1]["params.episodes"]) == {2, 3}


def test_a_changed_notebook_makes_its_runs_stale(isolated: Path) -> None:
    nb = write_nb(isolated / "07_s.ipynb", "results_dir = ''\nseed = 1", "x = seed")
    g = grid(isolated, "parameters:\n  seed: [1, 2]\n")
    index = sweep(str(nb), g, profile=Profile(name="t"), name="s", progress=False)
    first = pd.read_csv(index).set_index("run_id")["finished"]
    assert sweep(str(nb), g, profile=Profile(name="t"), name="s", progress=False)
    assert pd.read_csv(index).set_index("run_id")["finished"].equals(first)  # unchanged: nothing reran
    write_nb(nb, "results_dir = ''\nseed = 1", "x = seed + 1")
    sweep(str(nb), g, profile=Profile(name="t"), name="s", progress=False)
    again = pd.read_csv(index).set_index("run_id")
    assert (again["status"] == "ok").all() and not again["inputs"].equals(first)


def test_a_table_written_before_a_failing_cell_is_recorded(isolated: Path) -> None:
    body = (
        "import pandas as pd\nfrom tomlib.report import write_table\n"
        "write_table(pd.DataFrame({'paper_id': ['adaptive_tom'], 'table_id': ['demo'], 'metric': ['reward'],"
        " 'source': ['formal'], 'value': [seed * 1.0]}), results_dir)\n"
        "raise RuntimeError('explorer could not open')"
    )
    nb = write_nb(isolated / "08_t.ipynb", "results_dir = ''\nseed = 1", body)
    index = sweep(str(nb), grid(isolated, "parameters:\n  seed: [5]\n"), profile=Profile(name="t"), progress=False)
    row = pd.read_csv(index).iloc[0]
    assert row["status"] == "failed" and row["tables"] == "adaptive_tom.demo" and "explorer" in row["error"]
    results = pd.read_csv(index.with_name("results.csv"))
    assert list(results["value"]) == [5.0] and list(results["run_status"]) == ["failed"]


def test_killing_a_worker_loses_no_completed_run(isolated: Path, cluster: distributed.LocalCluster) -> None:
    nb = write_nb(
        isolated / "09_slow.ipynb",
        "results_dir = ''\nseed = 1",
        "import time, pathlib\ntime.sleep(3)\n"
        "pathlib.Path(results_dir).mkdir(parents=True, exist_ok=True)\n"
        "(pathlib.Path(results_dir) / 'done.txt').write_text(str(seed))",
    )
    g = grid(isolated, "parameters:\n  seed: [1, 2, 3, 4, 5, 6]\n")
    client = distributed.Client(cluster)
    pids = list(client.run(os.getpid).values())

    def kill_one() -> None:
        time.sleep(5)  # the first runs are in their notebooks by now
        os.kill(pids[0], 9)

    killer = threading.Thread(target=kill_one)
    killer.start()
    index = sweep(str(nb), g, profile=Profile(name="t"), scheduler=cluster.scheduler_address, progress=False)
    killer.join()
    client.close()
    df = pd.read_csv(index)
    assert list(df["status"]) == ["ok"] * 6
    for row in df.itertuples():
        assert (index.parent / row.results_dir / "done.txt").read_text() == str(row.seed)


def test_remote_workers_ship_results_and_their_recorded_responses(
    isolated: Path, cluster: distributed.LocalCluster
) -> None:
    """Workers with their own store and no shared results folder: the driver ends with one complete store."""
    nb = write_nb(
        isolated / "10_llm.ipynb",
        "results_dir = ''\nbase_url = ''\nmode = 'record'\nseed = 1",
        "from pathlib import Path\n"
        "from tomlib.llm import ChatModel, ModelConfig\n"
        "cfg = ModelConfig(name='fake', kind='openai', model='fake-model-1', base_url=base_url, endpoint_id='e')\n"
        "m = ChatModel(cfg, mode=mode)\n"
        "answers = [m.complete_sync([{'role': 'user', 'content': f'q{seed}-{i}'}],"
        " sample_key={'experiment': 'merge', 'episode': seed, 'step': i}).content for i in range(3)]\n"
        "Path(results_dir).mkdir(parents=True, exist_ok=True)\n"
        "(Path(results_dir) / 'answers.txt').write_text('|'.join(answers))",
    )
    g = grid(isolated, "parameters:\n  seed: [1, 2, 3]\n")
    with FakeOpenAIServer() as srv:
        fixed = Profile(name="t", parameters={"base_url": srv.base_url})
        index = sweep(
            str(nb), g, profile=fixed, name="m", scheduler=cluster.scheduler_address, ship_results=True, progress=False
        )
        df = pd.read_csv(index)
        assert list(df["status"]) == ["ok"] * 3 and srv.n_requests == 9
        driver = {r["key"]: r["response"] for r in ResponseStore().iter_records(experiment="merge")}
        worker_store = ResponseStore(isolated / "worker-store" / "responses.sqlite")
        worker = {r["key"]: r["response"] for r in worker_store.iter_records(experiment="merge")}
        assert len(driver) == 9 and driver == worker  # exact: every recorded response, nothing else
        for row in df.itertuples():  # results came back to the driver's sweep folder
            assert len((index.parent / row.results_dir / "answers.txt").read_text().split("|")) == 3
            assert (index.parent / row.output).exists()
        # a rerun of the whole sweep, replaying from the driver's store on this machine's workers: no call repeated
        (index.parent / "index.csv").unlink()
        replay = Profile(name="t", parameters={"base_url": srv.base_url, "mode": "replay"})
        index = sweep(str(nb), g, profile=replay, name="m", jobs=2, progress=False)
        assert list(pd.read_csv(index)["status"]) == ["ok"] * 3 and srv.n_requests == 9


def test_sigterm_shuts_workers_and_kernels_down(isolated: Path) -> None:
    import signal
    import subprocess
    import sys

    import psutil

    nb = write_nb(
        isolated / "11_long.ipynb",
        "results_dir = ''\nseed = 1",
        "import pathlib, time\npathlib.Path(results_dir).mkdir(parents=True, exist_ok=True)\n"
        "(pathlib.Path(results_dir) / 'started').write_text('')\ntime.sleep(120)",
    )
    g = grid(isolated, "parameters:\n  seed: [1, 2, 3, 4]\n")
    cmd = [sys.executable, "-m", "tomlib", "sweep", str(nb), "--grid", str(g), "--jobs", "2", "--name", "long"]
    driver = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sweep_dir = isolated / "results" / "sweeps" / "long"
    deadline = time.time() + 90
    while len(list(sweep_dir.glob("*/started"))) < 2 and time.time() < deadline:
        time.sleep(0.5)
    assert len(list(sweep_dir.glob("*/started"))) == 2, "two notebooks should be running"
    tree = psutil.Process(driver.pid).children(recursive=True)
    assert any("ipykernel" in " ".join(p.cmdline()) for p in tree)
    driver.send_signal(signal.SIGTERM)
    out, _ = driver.communicate(timeout=60)
    assert driver.returncode == 130 and "stopped by SIGTERM" in out and "rerun" in out
    _gone, alive = psutil.wait_procs(tree, timeout=20)
    assert not alive, f"left running: {[p.cmdline() for p in alive]}"
    index = pd.read_csv(sweep_dir / "index.csv")
    assert list(index["status"]) == ["queued"] * 4  # nothing finished, so all four rerun next time


def test_a_sweep_over_the_tasks_of_notebook_01_has_no_failures(isolated: Path) -> None:
    """Each run opens its explorer on a condition it ran (the default one, game1, is not in every task list)."""
    g = grid(isolated, "parameters:\n  tasks: [memory_1, game2]\nfixed:\n  episodes: 2\n  model: ''\n")
    index = sweep("01", g, jobs=2, profile=Profile(name="t"), progress=False)
    df = pd.read_csv(index, keep_default_na=False)
    assert list(df["status"]) == ["ok", "ok"], df["error"].tolist()
    assert set(df["tables"]) == {"adaptive_tom.table1"}


def test_the_driver_hears_which_cell_each_worker_starts(isolated: Path) -> None:
    from tomlib.runner._cluster import NotebookTask, driver_env, open_client, run_tasks, watch_cells, write_token

    nb = write_nb(isolated / "12_cells.ipynb", "results_dir = ''\nseed = 1", "import time\ntime.sleep(0.2)")
    seen: list[str] = []
    token = write_token(isolated / "results")
    task = NotebookTask(
        "12_cells",
        str(nb),
        nb.read_bytes(),
        str(isolated / "out.ipynb"),
        str(isolated / "results"),
        {},
        driver_env(),
        token,
    )
    with open_client(1) as client:
        watch_cells(client, seen.append)
        run_tasks(client, [task], lambda t, o: None)
        deadline = time.time() + 10
        while len(seen) < 2 and time.time() < deadline:
            time.sleep(0.1)
    assert seen[:2] == ["12_cells cell 1/2: results_dir = ''", "12_cells cell 2/2: import time"], seen


def http_answer(host: str, port: int) -> bytes:
    """The first bytes a server at ``host:port`` sends back to a plain HTTP GET (b"" when it says nothing)."""
    import socket

    try:
        with socket.create_connection((host, port), timeout=5) as sock:
            sock.sendall(f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode())
            return sock.recv(64)
    except OSError:
        return b""


INTRUDER = """
import os, sys
from distributed import Client
from distributed.security import Security
where, own_certificate = sys.argv[1], sys.argv[2] == "1"
try:  # no credentials, or a certificate of its own
    client = Client(where, timeout=5, security=Security.temporary() if own_certificate else None)
except Exception:
    print("refused", flush=True)
else:
    print("ran", client.submit(int, 42).result(), flush=True)
os._exit(0)  # what is left of a refused client's loop must not hold the exit (it once took past 120 s on CI)
"""


def intrude(address: str) -> list[str]:
    """Four intruders at once (TLS and plain TCP, without and with a certificate of their own); one still waiting
    after a minute did not get in (dask's client can wait on a handshake the cluster never completes, as on CI)."""
    import subprocess
    import sys

    tries = [
        subprocess.Popen([sys.executable, "-c", INTRUDER, where, own], stdout=subprocess.PIPE, text=True)
        for where in (address, address.replace("tls://", "tcp://"))
        for own in ("0", "1")
    ]
    said = []
    for proc in tries:
        try:
            out, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            out = proc.communicate()[0] or "refused (no answer in 60 s)"
        said.append(out.strip().splitlines()[-1] if out.strip() else "no output")
    return said


def test_the_local_cluster_runs_only_the_sweeps_own_code() -> None:
    """Another process (any local user) cannot drive the sweep's cluster: TLS with a certificate made for this run,
    held in memory; nothing of it listens beyond loopback, and nothing of it answers HTTP (no dashboard, no worker
    status pages) unless asked for with --dashboard."""

    import psutil

    from tomlib.runner._cluster import open_client

    def listening() -> set:
        """What this process and its children listen on (earlier tests may have left servers of their own)."""
        me = psutil.Process()
        pids = {me.pid, *(c.pid for c in me.children(recursive=True))}
        conns = psutil.net_connections(kind="inet")
        return {c.laddr for c in conns if c.status == psutil.CONN_LISTEN and c.pid in pids}

    before = listening()
    with open_client(jobs=1) as client:
        address = client.scheduler.address
        assert address.startswith("tls://127.0.0.1:")
        assert client.submit(int, 41).result() == 41  # the sweep's own client works
        said = intrude(address)
        assert len(said) == 4 and all(x.startswith("refused") for x in said), said
        cluster = listening() - before  # the cluster's own sockets
        assert cluster and all(addr.ip == "127.0.0.1" for addr in cluster), cluster
        answers = {addr.port: http_answer(addr.ip, addr.port) for addr in cluster}
        assert not {port: first for port, first in answers.items() if first.startswith(b"HTTP/")}, answers
        assert not client.dashboard_link


def test_the_dashboard_is_served_only_when_asked_and_says_where(isolated: Path) -> None:
    """``--dashboard`` (or ``dashboard: true`` in a profile) starts the scheduler's dashboard on 127.0.0.1, and the
    runner prints one line with its address and who can read it."""
    import re
    import subprocess
    import sys

    flag = isolated / "probed"
    nb = write_nb(
        isolated / "13_wait.ipynb",
        "results_dir = ''\nseed = 1",
        f"import pathlib, time\nfor _ in range(600):\n    if pathlib.Path({str(flag)!r}).exists(): break\n"
        "    time.sleep(0.1)",
    )
    g = grid(isolated, "parameters:\n  seed: [1]\n")
    cmd = [sys.executable, "-m", "tomlib", "sweep", str(nb), "--grid", str(g), "--name", "dash", "--dashboard"]
    driver = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    assert driver.stdout is not None
    try:
        for line in driver.stdout:
            lines.append(line)
            if "dask dashboard" in line:
                break
        said = [line for line in lines if "dask dashboard" in line]
        assert len(said) == 1 and "any local user" in said[0], lines
        url = re.search(r"http://127\.0\.0\.1:(\d+)/\S*", said[0])
        assert url, said
        assert http_answer("127.0.0.1", int(url.group(1))).startswith(b"HTTP/1.1 "), said
    finally:
        flag.write_text("")
        out, _ = driver.communicate(timeout=120)
    assert driver.returncode == 0, "".join(lines) + out
    profile = isolated / "dash.yaml"
    profile.write_text("parameters: {}\ndashboard: true\n")
    (isolated / "books").mkdir()
    nb2 = write_nb(isolated / "books" / "14_quick.ipynb", "results_dir = ''", "x = 1")
    cmd = [sys.executable, "-m", "tomlib", "run", "14", "--notebooks-dir", str(nb2.parent), "--profile", str(profile)]
    out = subprocess.run([*cmd, "--no-html"], capture_output=True, text=True, timeout=300)
    said = [line for line in (out.stdout + out.stderr).splitlines() if "dask dashboard" in line]
    assert out.returncode == 0 and len(said) == 1 and "http://127.0.0.1:" in said[0], out.stdout + out.stderr


def test_the_command_line_and_profiles_carry_the_dashboard_switch(isolated: Path) -> None:
    from tomlib.__main__ import build_parser
    from tomlib.runner import load_profile

    parser = build_parser()
    assert parser.parse_args(["run"]).dashboard is None  # the profile decides
    assert parser.parse_args(["run", "--dashboard"]).dashboard is True
    assert parser.parse_args(["sweep", "01", "--grid", "g.yaml", "--dashboard"]).dashboard is True
    (isolated / "p.yaml").write_text("parameters: {}\ndashboard: true\n")
    assert load_profile(isolated / "p.yaml").dashboard is True
    assert load_profile("default").dashboard is False
