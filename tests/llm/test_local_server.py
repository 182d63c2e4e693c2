"""The local model's server is ours alone: its port is never free for a squatter, it answers only requests addressed
to 127.0.0.1 / localhost without a foreign Origin, and it refuses oversized bodies before reading them.

The live tests start the real server (SmolLM2 through llama_cpp, ~2 s) and are marked ``live_local``; the tests of the
port and of the health check need no model.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.llm._local import need_local
from tomlib.llm import ChatModel, LocalModelError, ResponseStore, SampleKey
from tomlib.llm._local import LocalServer, _bound_socket
from tomlib.llm._local_serve import MAX_BODY_BYTES
from tomlib.testing import FakeOpenAIServer

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

NOBODY = 65534
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--inh-caps=-all"]
NOBODY_PYTHON = "/usr/bin/python3.11"  # Debian's: nobody cannot enter the venv's interpreter under /root
nobody_python = pytest.mark.skipif(not os.access(NOBODY_PYTHON, os.X_OK), reason="needs /usr/bin/python3.11 for nobody")
ALIAS = "smollm2"
MB = 1 << 20
KEY = SampleKey(experiment="server_test", condition="c", episode=0, step=0, agent="a", purpose="p")


@pytest.fixture(scope="module")
def local() -> Iterator[LocalServer]:
    need_local()
    srv = LocalServer(None, ALIAS)
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


# -- helpers ---------------------------------------------------------------------------------------------------------


def _squat(port: int) -> list[str]:
    """Every way another user could try to bind ``port`` that succeeded (all should fail)."""
    won = []
    for host in ("127.0.0.1", "0.0.0.0"):
        for opt in (None, socket.SO_REUSEADDR, socket.SO_REUSEPORT):
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                if opt is not None:
                    s.setsockopt(socket.SOL_SOCKET, opt, 1)
                try:
                    s.bind((host, port))
                except OSError:
                    continue
                won.append(f"{host} {opt}")
    return won


def _watch_port(srv: LocalServer, until: threading.Event, on_port: Callable[[int], None]) -> threading.Thread:
    """Call ``on_port(port)`` as soon as ``srv`` has chosen its port (in a thread)."""

    def watch() -> None:
        while not until.is_set():
            if srv.port is not None:
                on_port(srv.port)
                return
            time.sleep(0.0005)

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    return t


def _request(
    port: int, method: str, path: str, headers: dict[str, str], body: bytes | None = None, token: str = ""
) -> tuple:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        if body is not None:
            headers = {"Content-Type": "application/json", **headers}
        if token:
            headers = {"Authorization": f"Bearer {token}", **headers}
        conn.request(method, path, body=body, headers=headers)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def _chat_body(text: str = "Say hi") -> bytes:
    return json.dumps({"model": ALIAS, "messages": [{"role": "user", "content": text}], "max_tokens": 5}).encode()


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for {pid}")


def _post_big(port: int, size: int, *, chunked: bool) -> tuple[int, int, float]:
    """POST a chat request of ``size`` bytes (one long prompt); (status, bytes sent, seconds to the answer)."""
    head = f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
    head += "Transfer-Encoding: chunked\r\n\r\n" if chunked else f"Content-Length: {size}\r\n\r\n"
    prefix = json.dumps({"model": ALIAS, "max_tokens": 5, "messages": [{"role": "user", "content": ""}]})
    prefix, suffix = prefix[:-4].encode(), prefix[-4:].encode()  # split inside the empty content: '"}]}'
    pieces = [prefix, *[b"x " * (MB // 2)] * ((size - len(prefix) - len(suffix)) // MB), suffix]
    pieces.insert(-1, b"x" * (size - sum(map(len, pieces))))
    sent = 0
    sock = socket.create_connection(("127.0.0.1", port), timeout=120)

    def send_body() -> None:
        nonlocal sent
        with contextlib.suppress(OSError):  # the server answers 413 and closes while we still send
            for piece in pieces:
                sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
                sent += len(piece)
            if chunked:
                sock.sendall(b"0\r\n\r\n")

    t0 = time.monotonic()
    sock.sendall(head.encode())
    sender = threading.Thread(target=send_body, daemon=True)
    sender.start()
    answer = b""
    with contextlib.suppress(ConnectionResetError):
        while b"\r\n" not in answer:
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
    elapsed = time.monotonic() - t0
    sock.close()
    sender.join(timeout=60)
    assert answer.startswith(b"HTTP/1.1 "), f"no answer from the server: {answer!r}"
    return int(answer.split()[1]), sent, elapsed


# -- the port --------------------------------------------------------------------------------------------------------


def test_the_socket_handed_to_the_server_holds_its_port_against_every_bind() -> None:
    with _bound_socket() as sock:
        host, port = sock.getsockname()
        assert host == "127.0.0.1" and port > 0
        assert _squat(port) == []


def test_the_health_check_refuses_a_server_that_cannot_prove_it_is_ours() -> None:
    """Whatever answers on the port must hold the key the server was started with; a look-alike is an error."""
    with FakeOpenAIServer() as fake:
        srv = LocalServer(__file__, "fake")  # any existing file: the server is never started
        srv.port = fake.port
        with pytest.raises(LocalModelError, match="Something other than tomlib's local model server"):
            srv._answers(b"k" * 32)


@pytest.mark.live_local
def test_no_one_can_bind_the_port_while_the_server_starts() -> None:
    """A squatter that knows the port the moment it is chosen tries every bind until the server answers: all fail."""
    need_local()
    srv = LocalServer(None, ALIAS)
    done = threading.Event()
    won: list[str] = []
    attempts = [0]

    def squat(port: int) -> None:
        while not done.is_set() and not won:
            won.extend(_squat(port))
            attempts[0] += 1
            time.sleep(0.001)

    watcher = _watch_port(srv, done, squat)
    try:
        srv.start()
        done.set()
        watcher.join(timeout=10)
        assert attempts[0] > 0
        assert won == [], f"bound the server's port during start-up: {won}"
        assert _squat(srv.port) == []  # and while it serves
    finally:
        done.set()
        srv.stop()


SQUATTER = r"""
import json, signal, socket, sys, time
from http.server import BaseHTTPRequestHandler, HTTPServer
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
report = {"bound": False, "tries": 0, "prompts": []}
try:
    port = int(sys.stdin.readline())
    while True:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        report["tries"] += 1
        try:
            s.bind(("127.0.0.1", port))
            break
        except OSError:
            s.close()
            time.sleep(0.001)
    report["bound"] = True

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass
        def _send(self, obj):
            body = json.dumps(obj).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        def do_GET(self):
            self._send({"object": "list", "data": [{"id": sys.argv[1], "object": "model"}]})
        def do_POST(self):
            req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            report["prompts"].append(req["messages"][-1]["content"])
            self._send({"id": "x", "object": "chat.completion", "created": 0, "model": sys.argv[1],
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": "SQUATTED"}}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

    httpd = HTTPServer(("127.0.0.1", port), Handler, bind_and_activate=False)
    httpd.socket.close()
    httpd.socket = s
    httpd.server_activate()
    httpd.serve_forever()
finally:
    print(json.dumps(report), flush=True)
"""


@pytest.mark.live_local
@pytest.mark.as_nobody
@nobody_python
def test_a_squatter_run_as_nobody_never_gets_the_prompts(tmp_path: Path) -> None:
    """``nobody`` learns the port as soon as it is chosen and binds it the moment it can, serving a look-alike
    OpenAI server; the model's replies are still the model's, and the squatter sees no prompt."""
    need_local()
    folder = Path(tempfile.mkdtemp(prefix="tomlib-squatter-"))
    try:
        folder.chmod(0o755)
        script = folder / "squatter.py"
        script.write_text(SQUATTER)
        script.chmod(0o644)
        squatter = subprocess.Popen(
            [*AS_NOBODY, NOBODY_PYTHON, str(script), ALIAS],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={"PATH": "/usr/bin:/bin"},
        )
        srv = LocalServer(None, ALIAS)
        done = threading.Event()

        def tell(port: int) -> None:
            assert squatter.stdin is not None
            squatter.stdin.write(f"{port}\n")
            squatter.stdin.flush()

        _watch_port(srv, done, tell)
        try:
            srv.start()
            import openai

            client = openai.OpenAI(base_url=srv.base_url, api_key=srv.api_key, max_retries=0, timeout=60)
            reply = client.chat.completions.create(
                model=ALIAS, messages=[{"role": "user", "content": "The secret prompt"}], max_tokens=5
            )
            assert reply.choices[0].message.content != "SQUATTED"
        finally:
            done.set()
            srv.stop()
            squatter.send_signal(signal.SIGTERM)
            out, _ = squatter.communicate(timeout=30)
        report = json.loads(out.strip().splitlines()[-1])
        assert report["tries"] > 0 and report["prompts"] == []
        assert not report["bound"], "nobody bound the server's port"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# -- the guard -------------------------------------------------------------------------------------------------------


@pytest.mark.live_local
@pytest.mark.parametrize("host", ["evil.example:{port}", "evil.example", "127.0.0.1:1", "127.0.0.1"])
def test_a_request_for_another_host_is_refused(local: LocalServer, host: str) -> None:
    """DNS rebinding: the browser connects to 127.0.0.1 but still names the page's host."""
    assert local.port is not None
    status, _, _ = _request(local.port, "GET", "/v1/models", {"Host": host.format(port=local.port)})
    assert status == 421
    status, _, _ = _request(
        local.port, "POST", "/v1/chat/completions", {"Host": host.format(port=local.port)}, _chat_body()
    )
    assert status == 421


@pytest.mark.live_local
@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST:{port}"])
def test_a_request_addressed_to_us_is_served(local: LocalServer, host: str) -> None:
    assert local.port is not None
    status, _, body = _request(
        local.port, "GET", "/v1/models", {"Host": host.format(port=local.port)}, token=local.api_key
    )
    assert status == 200 and json.loads(body)["data"][0]["id"] == ALIAS


@pytest.mark.live_local
@pytest.mark.parametrize("token", ["", "not-the-token"], ids=["none", "wrong"])
def test_a_request_without_the_servers_token_is_refused(local: LocalServer, token: str) -> None:
    """Another local user who finds the port cannot use the model: every request needs the per-start token."""
    assert local.port is not None and len(local.api_key) == 64
    host = {"Host": f"127.0.0.1:{local.port}"}
    assert _request(local.port, "GET", "/v1/models", host, token=token)[0] == 401
    assert _request(local.port, "POST", "/v1/chat/completions", host, _chat_body(), token=token)[0] == 401


@pytest.mark.live_local
@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1:1", "https://localhost:{port}"])
def test_a_cross_origin_request_is_refused_without_a_cors_echo(local: LocalServer, origin: str) -> None:
    assert local.port is not None
    origin = origin.format(port=local.port)
    host = {"Host": f"127.0.0.1:{local.port}", "Origin": origin}
    status, headers, _ = _request(
        local.port, "POST", "/v1/chat/completions", {**host, "Content-Type": "application/json"}, _chat_body()
    )
    assert status == 403 and "access-control-allow-origin" not in headers
    preflight = {**host, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}
    status, headers, _ = _request(local.port, "OPTIONS", "/v1/chat/completions", preflight)
    assert status == 403 and not any(k.startswith("access-control-") for k in headers)


@pytest.mark.live_local
def test_our_own_origin_is_served_and_no_cors_headers_are_sent(local: LocalServer) -> None:
    assert local.port is not None
    own = {"Host": f"127.0.0.1:{local.port}", "Origin": f"http://127.0.0.1:{local.port}"}
    status, headers, _ = _request(local.port, "GET", "/v1/models", own, token=local.api_key)
    assert status == 200 and not any(k.startswith("access-control-") for k in headers)


@pytest.mark.live_local
@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_50_mb_body_is_refused_without_reading_it(local: LocalServer, chunked: bool) -> None:
    assert local.port is not None and local._proc is not None
    pid = local._proc.pid
    before = _rss_mb(pid)
    peak = [before]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], _rss_mb(pid))
            time.sleep(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        status, sent, elapsed = _post_big(local.port, 50 * MB, chunked=chunked)
    finally:
        stop.set()
        sampler.join()
    after = _rss_mb(pid)
    print(
        f"50 MB {'chunked' if chunked else 'with Content-Length'}: {status} after {elapsed:.3f} s, "
        f"{sent / MB:.0f} MB sent; server RSS {before:.0f} MB before, peak {peak[0]:.0f}, after {after:.0f}"
    )
    assert status == 413
    assert peak[0] - before < 50, f"the server's memory grew by {peak[0] - before:.0f} MB"
    # and it still serves
    status, _, body = _request(
        local.port, "POST", "/v1/chat/completions", {"Host": f"127.0.0.1:{local.port}"}, _chat_body(), local.api_key
    )
    assert status == 200, body


@pytest.mark.live_local
def test_a_body_at_the_limit_is_still_read(local: LocalServer) -> None:
    """The limit refuses only what is over it: a body of exactly MAX_BODY_BYTES reaches llama_cpp (which answers
    that the prompt is longer than the context)."""
    assert local.port is not None
    body = _chat_body("")
    body = body.replace(b'"content": ""', b'"content": "' + b"x" * (MAX_BODY_BYTES - len(body)) + b'"')
    assert len(body) == MAX_BODY_BYTES
    host = {"Host": f"127.0.0.1:{local.port}"}
    status, _, answer = _request(local.port, "POST", "/v1/chat/completions", host, body, local.api_key)
    assert status == 400 and b"context" in answer


# -- what works still works ------------------------------------------------------------------------------------------


@pytest.mark.live_local
def test_a_chat_completion_through_tomlibs_client(tmp_path: Path) -> None:
    need_local()
    with ChatModel.from_name("local", mode="record", store=ResponseStore(tmp_path / "s.sqlite")) as model:
        reply = model.complete_sync([{"role": "user", "content": "Say hi"}], sample_key=KEY, max_tokens=10)
        assert reply.content and reply.completion_tokens > 0 and not reply.cache_hit
        assert isinstance(model._server, LocalServer) and model._server.running()
