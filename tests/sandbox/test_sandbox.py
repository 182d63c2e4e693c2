"""The sandbox against code written to misbehave, and the harness against data no one here wrote.

Every adversarial test runs as this user and as ``nobody`` (see ``_users.py``): isolation must hold for a user who
is not root, not only on CI.
"""

from __future__ import annotations

import http.server
import os
import re
import secrets
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sandbox._users import ROOT, SEEN, Checker, open_to_all, skip_reason
from tomlib.datasets import CodeTask, humaneval, mbpp
from tomlib.errors import UsageError
from tomlib.sandbox import Limits, check_many, run_tests
from tomlib.sandbox._run import ISOLATION, SandboxUnavailable

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

FAST = Limits(timeout_s=3, cpu_s=2, memory_mb=512, file_mb=4)
BARE = Limits(
    timeout_s=3, cpu_s=2, memory_mb=512, file_mb=4, namespaces=False
)  # what a machine without namespaces gives

ADVERSARIAL = {
    "infinite loop": ("while True:\n    pass", "", "timed out|CPU time"),
    "fork bomb": ("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass", "", ""),
    "memory hog": ("x = bytearray(4 * 1024 ** 3)", "", "MemoryError"),
    "a 1 GB print": (
        "import sys\nb = 'x' * (1 << 20)\nfor _ in range(1024):\n    sys.stdout.write(b)",
        "",
        "too large|file-size",
    ),
    "sys.exit(0) before the asserts": ("import sys\nsys.exit(0)", "assert False", "before the tests finished"),
    "os._exit(0) before the asserts": ("import os\nos._exit(0)", "assert False", "before the tests finished"),
    "monkeypatching the checker": (
        "import builtins, sys\nbuiltins.print = lambda *a, **k: None\nsys.exit = lambda *a: None\n"
        "AssertionError = type('Quiet', (Exception,), {})",
        "assert 1 == 2",
        "AssertionError",
    ),
}


@pytest.fixture(params=["this user", pytest.param("nobody", marks=pytest.mark.as_nobody)])
def as_user(request: pytest.FixtureRequest) -> Checker:
    if request.param == "nobody" and (why := skip_reason()):
        pytest.skip(why)
    return Checker(request.param)


def _record(checker: Checker, isolation: list[str]) -> None:
    who = "nobody" if checker.who == "nobody" else f"this user (uid {os.geteuid()})"
    SEEN[who] = ", ".join(isolation)


@pytest.mark.parametrize("case", ADVERSARIAL)
def test_adversarial_code_is_contained_and_reported_as_a_failure(as_user: Checker, case: str) -> None:
    program, tests, reason = ADVERSARIAL[case]
    r = as_user.check(program, tests, limits=FAST)
    assert not r.passed and r.status in {"failed", "timeout"}
    if reason:
        assert re.search(reason, r.reason), r.reason
    assert len(r.stdout) <= FAST.output_chars + 10


def test_every_protection_applies_and_ordinary_code_still_passes(as_user: Checker) -> None:
    local = as_user.check("open('scratch.txt', 'w').write('ok')", "assert open('scratch.txt').read() == 'ok'")
    assert local.passed, local.reason
    _record(as_user, local.isolation)
    assert set(ISOLATION) <= set(local.isolation), local.isolation
    caps = as_user.check(
        "status = dict(line.split(':\\t') for line in open('/proc/self/status').read().splitlines() if ':\\t' in line)",
        "assert int(status['CapEff'], 16) == int(status['CapBnd'], 16) == 0, status\n"
        "assert status['NoNewPrivs'].strip() == '1'",
    )
    assert caps.passed, caps.reason
    task = humaneval()[0]
    assert as_user.check(task.reference, task.tests).passed


def test_a_key_in_the_environment_is_not_visible(as_user: Checker) -> None:
    r = as_user.check(
        "import os\nleaked = {k: v for k, v in os.environ.items() if 'KEY' in k}",
        "assert not leaked, leaked",
        TOMLIB_PLANTED_KEY=secrets.token_hex(8),  # any *KEY* variable of the caller's must stay out of the program
    )
    assert r.passed, r.reason


def test_another_process_and_its_environment_are_out_of_sight(as_user: Checker) -> None:
    # the user's notebook kernel holds the API key in its environment; its /proc entry must not be readable
    marker = "sk-marker-" + secrets.token_hex(12)
    scan = (
        "import os\nhits, pids = [], [p for p in os.listdir('/proc') if p.isdigit()]\n"
        "for p in pids:\n    try:\n"
        f"        hits += [p] if {marker!r}.encode() in open(f'/proc/{{p}}/environ', 'rb').read() else []\n"
        "    except OSError:\n        pass\n"
    )
    neighbour = as_user.spawn(["sleep", "60"], OPENAI_API_KEY=marker)
    try:
        seen = as_user.check(scan, "assert not hits, hits\nassert len(pids) <= 3, pids")
        assert seen.passed, seen.reason
        bare = as_user.check(scan, "assert hits, 'not found'", limits=BARE, mode="rlimits-only")
        assert bare.passed, "without namespaces the same scan should find the neighbour: " + bare.reason
    finally:
        neighbour.kill()
        neighbour.wait()


def test_the_kernel_knobs_stay_read_only(as_user: Checker) -> None:
    # opened for writing, never written: the open itself must be refused
    r = as_user.check(
        "refused = []\nfor knob in ('/proc/sysrq-trigger', '/proc/sys/kernel/hostname'):\n"
        "    try:\n        open(knob, 'a').close()\n    except OSError as exc:\n        refused.append(exc.errno)\n",
        "assert len(refused) == 2, refused",
    )
    assert r.passed, r.reason


@pytest.fixture
def http_server() -> Iterator[str]:
    """An HTTP server on 127.0.0.1 (where the model endpoint would be) that anyone on this machine can reach."""

    class Quiet(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"reached")

        def log_message(self, *args: object) -> None:
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/"
    finally:
        srv.shutdown()
        srv.server_close()


def test_no_network_not_even_loopback(as_user: Checker, http_server: str) -> None:
    fetch = f"import urllib.request\nbody = urllib.request.urlopen({http_server!r}, timeout=2).read()"
    r = as_user.check(fetch, "assert body == b'reached'", limits=FAST)
    assert not r.passed and re.search("unreachable|refused|URLError", r.reason), r.reason
    bare = as_user.check(fetch, "assert body == b'reached'", limits=BARE, mode="rlimits-only")
    assert bare.passed, "without namespaces the server should be reachable: " + bare.reason


@pytest.fixture
def planted() -> Iterator[Path]:
    """A world-readable folder (with a secret file) and a world-writable one, both outside the check's folder."""
    base = Path(tempfile.mkdtemp(prefix="tomlib-planted-"))
    try:
        open_to_all(base)
        (base / "secret.txt").write_text("planted")
        (base / "secret.txt").chmod(0o644)
        open_to_all(base / "drop", 0o1777)
        yield base
    finally:
        import shutil

        shutil.rmtree(base, ignore_errors=True)


def test_files_outside_are_neither_read_nor_written(as_user: Checker, planted: Path) -> None:
    read = f"text = open({str(planted / 'secret.txt')!r}).read()"
    assert not as_user.check(read, "assert text == 'planted'").passed
    assert as_user.check(read, "assert text == 'planted'", limits=BARE, mode="rlimits-only").passed  # it is there
    target = planted / "drop" / "escaped.txt"
    r = as_user.check(f"open({str(target)!r}, 'w').write('x')", "", limits=FAST)
    assert not r.passed and not target.exists()
    # and on the file system the checkout lives on, where nothing is private
    project_drop = ROOT / ".tomlib" / f"escape-{secrets.token_hex(4)}"
    try:
        if open_to_all(project_drop, 0o1777) or as_user.who != "nobody":
            r = as_user.check(f"open({str(project_drop / 'x.txt')!r}, 'w').write('x')", "", limits=FAST)
            # read-only, or not there at all when the checkout sits under a folder the sandbox replaces (/tmp)
            assert not r.passed and re.search("Read-only|No such file", r.reason), r.reason
            assert not (project_drop / "x.txt").exists()
    finally:
        project_drop.rmdir()


def test_data_outside_the_system_folders_is_hidden(as_user: Checker) -> None:
    # a world-readable file in the checkout (where results, the response store and a user's .env live): readable
    # by anyone outside the sandbox, out of sight inside it
    planted = ROOT / ".tomlib" / f"planted-{secrets.token_hex(4)}"
    try:
        reachable = open_to_all(planted, 0o755)
        (planted / "secret.txt").write_text("planted")
        (planted / "secret.txt").chmod(0o644)
        read = f"import os\nthere = os.path.exists({str(planted / 'secret.txt')!r})"
        if reachable or as_user.who != "nobody":  # it is there to be read
            assert as_user.check(read, "assert there", limits=BARE, mode="rlimits-only").passed
        r = as_user.check(read, "assert not there, 'read it'")
        assert r.passed, r.reason
        tops = "import os\nseen = {d: os.listdir(d) for d in ('/srv', '/opt', '/mnt', '/var') if os.path.isdir(d)}"
        r = as_user.check(tops, "assert seen.pop('/var', []) in ([], ['tmp']) and not any(seen.values()), seen")
        assert r.passed, r.reason
    finally:
        import shutil

        shutil.rmtree(planted, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/etc/shadow"), reason="needs root and /etc/shadow")
def test_roots_program_runs_as_a_uid_of_its_own_and_cannot_read_roots_files() -> None:
    # without capabilities uid 0 still owns /etc/shadow (mode 640, owner root): the program must not be uid 0
    r = run_tests("import os\nuid = os.getuid()\nopen('/etc/shadow').read()", "")
    assert not r.passed and "Permission denied" in r.reason, r.reason
    assert {"not-root", "own-process-limit"} <= set(r.isolation)
    # a uid of the launcher's own, not nobody's (whose process count every check would share)
    r = run_tests("import os\nuid = os.getuid()\nprint(uid)", "assert uid not in (0, 65534) and uid >= 0x7E000000")
    assert r.passed, r.reason


def test_home_and_run_are_hidden(as_user: Checker) -> None:
    prefix = Path(sys.base_prefix).resolve()  # the interpreter stays visible, nothing else of /root
    allowed = [prefix.relative_to("/root").parts[0]] if prefix.is_relative_to("/root") else []
    if as_user.who == "nobody":
        allowed = []  # nobody's interpreter is not the one under /root
    home = as_user.check(
        "import os\nseen = {d: os.listdir(d) for d in ('/root', '/home', '/run') if os.path.isdir(d)}",
        f"assert seen.pop('/root', []) in ([], {allowed!r}) and not any(seen.values()), seen",
        limits=FAST,
    )
    assert home.passed, home.reason


def test_nothing_a_fork_bomb_started_survives_it(as_user: Checker) -> None:
    marker = "tomlib-bomb-" + os.urandom(4).hex()
    program = (
        "import os, time\nfor _ in range(20):\n    if os.fork() == 0:\n"
        f"        os.setsid()  # {marker}: a child that leaves the process group\n        time.sleep(60)\n"
    )
    as_user.check(program + "time.sleep(60)", "", limits=Limits(timeout_s=1))
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert marker not in ps


def test_without_isolation_nothing_runs_unless_the_user_opts_in(as_user: Checker, planted: Path) -> None:
    # BARE stands for a machine without namespaces (user namespaces disabled, macOS)
    program = f"open({str(planted / 'drop' / 'ran.txt')!r}, 'w').write('x')"
    with pytest.raises(SandboxUnavailable, match="TOMLIB_SANDBOX=rlimits-only") as err:
        as_user.check(program, "", limits=BARE)
    assert "missing no-network" in str(err.value)
    assert not (planted / "drop" / "ran.txt").exists()  # refused before the program started
    opted = as_user.check(program, "", limits=BARE, mode="rlimits-only")
    assert opted.passed and opted.isolation == ["rlimits", "fresh-cwd", "clean-env"]
    assert (planted / "drop" / "ran.txt").exists()


def test_the_suite_goes_on_after_bad_code() -> None:
    results = check_many([("while True: pass", ""), ("x = 1", "assert x == 1")], limits=FAST, workers=2)
    assert [r.passed for r in results] == [False, True]


@pytest.mark.dataset
def test_every_humaneval_canonical_solution_passes_its_own_tests() -> None:
    tasks = humaneval()
    assert len(tasks) == 164
    results = check_many([(t.reference, t.tests) for t in tasks])
    failed = [(t.task_id, r.reason) for t, r in zip(tasks, results, strict=True) if not r.passed]
    assert not failed, failed


@pytest.mark.dataset
def test_every_mbpp_reference_solution_passes_its_own_tests() -> None:
    tasks = mbpp("all")
    assert (len(tasks), len(mbpp("test")), len(mbpp("sanitized"))) == (974, 500, 427)
    results = check_many([(t.reference, t.tests) for t in tasks])
    failed = [(t.task_id, r.reason) for t, r in zip(tasks, results, strict=True) if not r.passed]
    assert not failed, failed  # upstream references that fail would be listed here (none do in this revision)


def test_a_wrong_solution_fails_and_a_body_only_completion_gets_its_signature() -> None:
    task = humaneval()[0]
    body = task.reference[len(task.prompt) :]
    assert run_tests(task.program(body), task.tests).passed
    assert not run_tests(task.program("    return True\n"), task.tests).passed
    assert isinstance(task, CodeTask) and task.entry_point == "has_close_elements"


def test_an_interpreter_reached_through_tmp_still_runs_checks(tmp_path: Path) -> None:
    # a checkout (and its .venv) under /tmp: the program's /tmp is private and empty, so the launcher must exec the
    # real interpreter, not the link it was started through
    link = tmp_path / "python"
    link.symlink_to(sys.executable)
    code = "from tomlib.sandbox import run_tests\nr = run_tests('x = 1', 'assert x == 1')\nprint(r.passed, r.reason)"
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([str(link), "-c", code], capture_output=True, text=True, env={"PYTHONPATH": str(root)})
    assert out.stdout.startswith("True"), out.stdout + out.stderr


# ---- one launcher, many checks: what must stay per check ---------------------------------------------------------

LEAVE_BEHIND = """
import ctypes, os, time
for path in ('/tmp/left.txt', '/var/tmp/left.txt', '/dev/shm/left.txt', 'left.txt'):
    open(path, 'w').write('left by the previous check')
libc = ctypes.CDLL(None, use_errno=True)
segment = libc.shmget({key}, 4096, 0o1000 | 0o666)  # SysV shared memory: IPC_CREAT, outlives its process
if os.fork() == 0:  # a daemon: double fork, own session, no parent to wait for it
    os.setsid()
    if os.fork() == 0:
        os.execv('/usr/bin/sleep', [{marker!r}, '60'])
    os._exit(0)
time.sleep(0.2)
"""
LEFT_BEHIND_TESTS = "assert segment >= 0, ctypes.get_errno()\nassert os.path.exists('/dev/shm/left.txt')"
FIND_LEFTOVERS = """
import ctypes, os
left = [p for p in ('/tmp/left.txt', '/var/tmp/left.txt', '/dev/shm/left.txt', 'left.txt') if os.path.exists(p)]
shm = ctypes.CDLL(None, use_errno=True).shmget({key}, 0, 0)
others = [p for p in os.listdir('/proc') if p.isdigit() and int(p) not in (1, os.getpid())]
"""
NO_LEFTOVERS = "assert not left, left\nassert shm == -1, 'the SysV segment is still there'\nassert not others, others"


def test_nothing_a_check_leaves_reaches_the_next_one(as_user: Checker) -> None:
    # files in every writable place, a SysV segment and a daemon that left its session: the next check of the same
    # launcher sees none of them, and the daemon is dead by the time the first result comes back
    key, marker = secrets.randbelow(1 << 30) + 1, "tomlib-daemon-" + secrets.token_hex(4)
    first = {"program": LEAVE_BEHIND.format(key=key, marker=marker), "tests": LEFT_BEHIND_TESTS}
    second = {"program": FIND_LEFTOVERS.format(key=key), "tests": NO_LEFTOVERS}
    left, found = as_user.in_turn([first, second], limits=FAST, marker=marker)
    assert left["passed"], left["reason"]
    assert not left["marker_left"], "the daemon outlived its check"
    assert found["passed"], found["reason"]
    assert left["launcher"] is not None and left["launcher"] == found["launcher"], "not the same launcher"


def test_a_killed_launcher_takes_its_check_with_it_and_is_replaced(as_user: Checker) -> None:
    marker = "tomlib-orphan-" + secrets.token_hex(4)
    sleeper = f"import os, time\nif os.fork() == 0:\n    os.execv('/usr/bin/sleep', [{marker!r}, '60'])\ntime.sleep(60)"
    ok = {"program": "x = 1", "tests": "assert x == 1"}
    steps = [ok, {"program": sleeper, "tests": "", "kill_launcher_after_s": 0.5}, ok]
    before, killed, after = as_user.in_turn(steps, limits=Limits(timeout_s=20), marker=marker)
    assert before["passed"], before["reason"]
    assert killed["status"] == "error" and "launcher stopped" in killed["reason"], killed
    assert killed["seconds"] < 10, "the lost launcher was only noticed at the deadline"
    assert not killed["marker_stayed"], "the check outlived its launcher"
    assert after["passed"], after["reason"]
    assert after["launcher"] not in (None, killed["launcher"]), "the dead launcher was used again"


def test_checks_run_in_a_pre_forked_launcher_and_still_without_one(monkeypatch: pytest.MonkeyPatch) -> None:
    # the launcher per check is what runs where the pre-forked one cannot start: same protections, and it says so
    from tomlib.sandbox import describe_sandbox
    from tomlib.sandbox._run import _POOL

    assert "pre-forked launcher per worker" in describe_sandbox()
    monkeypatch.setattr(_POOL, "broken", "the pre-forked launcher could not start: a test says so")
    assert "one launcher process per check: the pre-forked launcher could not start" in describe_sandbox()
    r = run_tests("x = 1", "assert x == 1")
    assert r.passed and set(ISOLATION) <= set(r.isolation), r
    key = secrets.randbelow(1 << 30) + 1
    left = run_tests(LEAVE_BEHIND.format(key=key, marker="tomlib-daemon"), LEFT_BEHIND_TESTS, limits=FAST)
    found = run_tests(FIND_LEFTOVERS.format(key=key), NO_LEFTOVERS, limits=FAST)
    assert left.passed and found.passed, (left.reason, found.reason)


def test_a_program_runs_as_its_own_main_module() -> None:
    # the program runs in an already-started interpreter: it must still look like ``python main.py`` to itself
    r = run_tests(
        "import sys, __main__, atexit, threading\nran = []\nthreading.Thread(target=lambda: ran.append(1)).start()\n"
        "atexit.register(lambda: print('at exit'))",
        "assert __name__ == '__main__' and __main__.ran is ran and sys.argv == [__file__], sys.argv\n"
        "assert __file__ == '/tmp/check/main.py' and sys.flags.isolated == sys.flags.no_site == 1",
    )
    assert r.passed and r.stdout == "at exit\n", r
    failing = run_tests("def f():\n    raise ValueError('from the program')", "f()")
    assert failing.reason == "ValueError: from the program"
    assert "_launch.py" not in failing.stderr and failing.stderr.startswith("Traceback"), failing.stderr
    assert run_tests("import sys\nsys.exit(3)", "").reason == "exit code 3 before the tests finished"


# ---- the verdict, the keyring, memory and processes per check (issue 30) -----------------------------------------

FORGERIES = {
    # the harness's old completion function, called early
    "calling the completion function": "import os\n_tomlib_done()\nos._exit(0)",
    # a refusal written where the launcher once wrote its report: it stopped the whole batch
    "claiming a protection is missing": "import os\nos.write(3, b'missing:no-network\\n')\nos._exit(97)",
    # every inherited descriptor gets a would-be token and a refusal, then a clean exit
    "writing to every descriptor": "import os\nfor fd in range(3, 64):\n    try:\n"
    "        os.write(fd, b'\\n' + os.urandom(16).hex().encode() + b'\\nmissing:no-network\\n')\n"
    "    except OSError:\n        pass\nos._exit(0)",
    # the harness's own calls replaced before the tests run
    "replacing exec and settrace": "import builtins, sys\nbuiltins.exec = lambda *a, **k: None\n"
    "builtins.compile = lambda *a, **k: None\nsys.settrace = sys.setprofile = lambda f: None",
    # a trace function that jumps from the first line after the program to the file's last line
    "jumping over the asserts": "import sys\n"
    "END = len(open(__file__).read().splitlines())\n"
    "def skip(frame, event, arg):\n"
    "    if event == 'line' and frame.f_code.co_filename == __file__ and START < frame.f_lineno < END:\n"
    "        frame.f_lineno = END\n"
    "    return skip\n"
    "START = sys._getframe().f_lineno\nsys._getframe().f_trace = skip\nsys.settrace(skip)",
}


@pytest.mark.parametrize("forgery", FORGERIES)
def test_nothing_the_program_can_name_or_write_to_decides_the_verdict(as_user: Checker, forgery: str) -> None:
    # the tests fail; the program tries to make the check pass anyway, or to stop the batch (SandboxUnavailable)
    tests = "assert 1 == 2\nassert 2 == 3\npass\npass"
    r = as_user.check(FORGERIES[forgery], tests, limits=FAST)
    assert not r.passed and r.status == "failed", r
    assert set(ISOLATION) <= set(r.isolation), r.isolation  # what applied comes from the launcher, not the program


def test_code_that_reads_the_harness_frame_can_still_forge_a_pass() -> None:
    # the known limit of any checker that runs tests in the program's interpreter: the token is in memory, and code
    # written to find it (here in the caller's frame) can. README's "Running generated code" names this test.
    steal = (
        "import os, sys\n"
        "token = next(v for v in sys._getframe(1).f_locals.values() if isinstance(v, bytes) and len(v) == 32)\n"
        "os.write(3, token)\nos._exit(0)"
    )
    assert run_tests(steal, "assert 1 == 2").passed


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the planted key uses x86_64 system call numbers")
def test_a_key_in_the_callers_session_keyring_is_out_of_reach(as_user: Checker) -> None:
    secret = "sk-keyring-" + secrets.token_hex(8)
    read = (
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nlibc.syscall.restype = ctypes.c_long\n"
        "L = ctypes.c_long\n"
        "serial = libc.syscall(L(250), L(10), L(-3), b'user', b'tomlib-planted', L(0))  # KEYCTL_SEARCH, session\n"
        "buf = ctypes.create_string_buffer(256)\n"
        "n = libc.syscall(L(250), L(11), L(serial), buf, L(256)) if serial > 0 else -1  # KEYCTL_READ\n"
        "leaked = buf.raw[: max(n, 0)]\nerrno = ctypes.get_errno()"
    )
    r = as_user.check(read, "assert not leaked, leaked\nassert errno == 1, errno  # EPERM", key=secret)
    assert r.passed and "no-keyrings" in r.isolation, r
    bare = as_user.check(
        read, f"assert leaked == {secret.encode()!r}, leaked", limits=BARE, mode="rlimits-only", key=secret
    )
    assert bare.passed, "without the sandbox the planted key should be readable: " + bare.reason


HOG = """
import os, select, time
r, w = os.pipe()
kids = []
for _ in range(4):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        held = []
        try:
            while len(held) < 12:
                chunk = bytearray(32 << 20)
                chunk[::4096] = b"x" * len(range(0, len(chunk), 4096))
                held.append(chunk)
        except MemoryError:
            pass
        os.write(w, b"%d," % (32 * len(held)))
        time.sleep(30)
        os._exit(0)
    kids.append(pid)
got, end = b"", time.time() + 20
while got.count(b",") < len(kids) and time.time() < end:
    if select.select([r], [], [], 0.1)[0]:
        got += os.read(r, 64)
alive = [k for k in kids if os.waitpid(k, os.WNOHANG) == (0, 0)]
print(sum(int(x) for x in got.split(b",") if x), len(kids), len(alive))
"""


def test_a_checks_processes_together_stay_within_its_memory(as_user: Checker) -> None:
    # four children each try to hold 384 MB at once: under a per-process limit they did (1.5 GB in a 512 MB check)
    lim = Limits(timeout_s=40, cpu_s=30, memory_mb=512, file_mb=4)
    r = as_user.check(HOG, "", limits=lim)
    assert r.passed and "memory-per-check" in r.isolation, r
    held, children, alive = map(int, r.stdout.split())
    assert children >= 1 and alive == children, r.stdout
    assert held + 30 * (children + 1) <= lim.memory_mb, (
        f"{held} MB held by {children} children in a {lim.memory_mb} MB check"
    )


def test_a_limit_that_leaves_a_process_too_little_memory_is_refused() -> None:
    with pytest.raises(UsageError, match="Raise memory_mb or lower processes"):
        Limits(memory_mb=1024, processes=64)


FIVE = (
    "import subprocess\nprocs = [subprocess.Popen(['/bin/sleep', '2']) for _ in range(5)]\n"
    "codes = [p.wait() for p in procs]"
)
BOMB = (
    "import os, time\nstart = time.time()\nwhile time.time() - start < 6:\n    try:\n"
    "        if os.fork() == 0:\n            time.sleep(8)\n            os._exit(0)\n"
    "    except OSError:\n        time.sleep(0.005)"
)


def test_a_fork_bomb_next_door_leaves_a_checks_processes_alone(as_user: Checker) -> None:
    # as root every check's program once ran as nobody, so one check's fork bomb used up the other's process count
    lim = Limits(timeout_s=10, cpu_s=10, memory_mb=1024, processes=8)
    bomb, five = as_user.side_by_side(
        [{"program": BOMB, "tests": ""}, {"program": FIVE, "tests": "assert codes == [0] * 5, codes"}], limits=lim
    )
    assert five["passed"], five["reason"]
    assert bomb["status"] in {"passed", "failed", "timeout"}


def test_the_launcher_per_check_keeps_the_verdict_the_keyring_and_the_memory_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # where no launcher can be pre-forked, each check's launcher runs the program itself: the same rules hold
    from tomlib.sandbox._run import _POOL

    monkeypatch.setattr(_POOL, "broken", "the pre-forked launcher could not start: a test says so")
    me = Checker("this user")
    for name, program in FORGERIES.items():
        r = me.check(program, "assert 1 == 2\npass", limits=FAST)
        assert not r.passed and r.status == "failed", (name, r)
    if os.uname().machine == "x86_64":
        read = "import ctypes\nserial = ctypes.CDLL(None).syscall(250, 10, -3, b'user', b'tomlib-planted', 0)"
        r = me.check(read, "assert serial == -1, serial", key="sk-" + secrets.token_hex(8))
        assert r.passed, r.reason
    lim = Limits(timeout_s=40, cpu_s=30, memory_mb=512, file_mb=4)
    r = me.check(HOG, "", limits=lim)
    held, children, _ = map(int, r.stdout.split())
    assert r.passed and held + 30 * (children + 1) <= lim.memory_mb, r
    assert set(ISOLATION) <= set(r.isolation), r.isolation


def test_a_visible_folder_is_read_only_and_its_neighbours_stay_hidden() -> None:
    """What grading gives a student's answer (``visible``: the project and its environment): those folders to read,
    nothing to write there, and nothing beside them."""
    base = ROOT / ".tomlib" / f"visible-{secrets.token_hex(4)}"
    try:
        for name in ("shown", "beside"):
            (base / name).mkdir(parents=True)
            (base / name / "f.txt").write_text(name)
        program = (
            f"import os\ntext = open({str(base / 'shown' / 'f.txt')!r}).read()\n"
            f"beside = os.path.exists({str(base / 'beside' / 'f.txt')!r})\n"
            f"try:\n    open({str(base / 'shown' / 'new.txt')!r}, 'w')\n    wrote = True\n"
            "except OSError:\n    wrote = False"
        )
        r = run_tests(program, "assert text == 'shown' and not beside and not wrote", visible=[str(base / "shown")])
        assert r.passed, r.reason + r.stderr
        assert {"read-only-fs", "home-hidden"} <= set(r.isolation) and not (base / "shown" / "new.txt").exists()
    finally:
        import shutil

        shutil.rmtree(base, ignore_errors=True)
