"""The simulated model's server (and the fake OpenAI server it is built on) runs inside the notebook's kernel, so a
client cannot make it read without bound or hold threads forever: a POST needs one valid Content-Length within a
bound, a connection that waits on its client is closed, and the connections served at once are capped. Raw sockets
on 127.0.0.1, so each request says exactly what a misbehaving client would."""

from __future__ import annotations

import http.client
import json
import socket
import struct
import threading
import time

import pytest

from tomlib.sim import SimServer
from tomlib.testing import FakeOpenAIServer, Reply

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

WAIT_S = 10.0  # how long a test waits on the server before calling it a hang (never a timing assertion)
CHAT = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hello"}]}).encode()


def raw(port: int, head: str, body: bytes = b"") -> socket.socket:
    """A connection that has sent ``head`` (request line and headers, without the blank line) and ``body``, and is
    kept open for writing: a server that reads to the end of the stream waits on it."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT_S)
    sock.sendall(head.encode() + b"\r\n\r\n" + body)
    return sock


def answer(sock: socket.socket) -> bytes:
    """What the server sends until it closes the connection (``socket.timeout`` if it neither answers nor closes)."""
    got = b""
    while chunk := sock.recv(65536):
        got += chunk
    return got


def post(port: int, *headers: str) -> str:
    return "\r\n".join(["POST /v1/chat/completions HTTP/1.1", f"Host: 127.0.0.1:{port}", *headers])


BAD_LENGTHS = {"-1": 400, "-100000": 400, "12abc": 400, "": 400, "99999999999": 413, None: 411}


@pytest.mark.parametrize("server", [FakeOpenAIServer, SimServer], ids=["fake-openai", "sim"])
def test_a_post_without_a_valid_bounded_length_is_refused_at_once(server: type[FakeOpenAIServer]) -> None:
    with server() as srv:
        for length, status in BAD_LENGTHS.items():
            headers = ["Content-Type: application/json"] + ([] if length is None else [f"Content-Length: {length}"])
            with raw(srv.port, post(srv.port, *headers), CHAT) as sock:
                got = answer(sock)  # before: a negative length was read to the end of the stream, which never came
            assert got.startswith(f"HTTP/1.1 {status} ".encode()), (length, got[:80])
            assert b"connection: close" in got.lower()
        assert srv.n_requests == 0


def test_a_body_over_the_bound_is_not_read_and_one_within_it_is_answered() -> None:
    with FakeOpenAIServer(max_request_bytes=len(CHAT)) as srv:
        with raw(srv.port, post(srv.port, f"Content-Length: {len(CHAT) + 1}"), CHAT + b" ") as sock:
            assert answer(sock).startswith(b"HTTP/1.1 413 ")
        with raw(srv.port, post(srv.port, f"Content-Length: {len(CHAT)}", "Connection: close"), CHAT) as sock:
            got = answer(sock)
        assert got.startswith(b"HTTP/1.1 200 ") and b"fake reply to: hello" in got
        assert srv.n_requests == 1


def test_two_lengths_or_a_chunked_body_are_refused() -> None:
    with FakeOpenAIServer() as srv:
        n = len(CHAT)
        with raw(srv.port, post(srv.port, f"Content-Length: {n}", f"Content-Length: {n + 5}"), CHAT) as sock:
            assert answer(sock).startswith(b"HTTP/1.1 400 ")
        with raw(srv.port, post(srv.port, "Transfer-Encoding: chunked"), b"5\r\nhello\r\n0\r\n\r\n") as sock:
            assert answer(sock).startswith(b"HTTP/1.1 411 ")


def test_a_body_that_is_not_a_json_object_is_answered_400() -> None:
    with FakeOpenAIServer() as srv:
        for body in (b"{not json", b"[1, 2]"):
            with raw(srv.port, post(srv.port, f"Content-Length: {len(body)}"), body) as sock:
                assert answer(sock).startswith(b"HTTP/1.1 400 "), body


def test_an_idle_connection_is_closed_by_the_server() -> None:
    with FakeOpenAIServer(idle_timeout_s=0.3) as srv:
        with socket.create_connection(("127.0.0.1", srv.port), timeout=WAIT_S) as sock:
            assert sock.recv(1) == b""  # closed by the server; before, it stayed open until the client gave up
        with raw(srv.port, post(srv.port, f"Content-Length: {len(CHAT)}"), CHAT[:10]) as sock:
            assert answer(sock) == b""  # a body that stops coming: closed too, nothing answered
        with raw(srv.port, post(srv.port, f"Content-Length: {len(CHAT)}"), CHAT) as sock:
            got = answer(sock)  # kept alive after its answer, then closed once idle
        assert got.startswith(b"HTTP/1.1 200 ") and got.count(b"HTTP/1.1") == 1
        assert srv.n_requests == 1


def connection_threads(old: set[threading.Thread]) -> int:
    """The server's threads for its connections, less those in ``old`` (other servers' threads still ending)."""
    return sum("process_request_thread" in t.name and t not in old for t in threading.enumerate())


def test_idle_connections_hold_no_thread_after_the_timeout_and_never_more_than_the_cap() -> None:
    old = set(threading.enumerate())
    peak, done = [0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], connection_threads(old))
            time.sleep(0.005)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    with FakeOpenAIServer(idle_timeout_s=1.0, max_connections=8) as srv:
        socks = [socket.create_connection(("127.0.0.1", srv.port), timeout=WAIT_S) for _ in range(40)]
        try:
            got = [answer(s) for s in socks]  # each is answered 503 at once, or closed once idle
        finally:
            for s in socks:
                s.close()
        busy = sum(g.startswith(b"HTTP/1.1 503 ") for g in got)
        assert busy + got.count(b"") == 40 and busy >= 40 - 2 * 8
        deadline = time.monotonic() + WAIT_S
        while connection_threads(old) and time.monotonic() < deadline:
            time.sleep(0.02)
        done.set()
        sampler.join()
        assert connection_threads(old) == 0  # every idle connection's thread ended
        assert 0 < peak[0] <= 8  # one thread a connection, never more than the cap (before: one for each of 40)
        with raw(srv.port, post(srv.port, f"Content-Length: {len(CHAT)}", "Connection: close"), CHAT) as sock:
            assert answer(sock).startswith(b"HTTP/1.1 200 ")  # the slots came back


def test_slow_and_trickled_replies_outlast_the_idle_timeout() -> None:
    """The timeout bounds each wait for the client, not the time the server takes to answer."""
    with FakeOpenAIServer(idle_timeout_s=0.2) as srv:
        srv.script(Reply(content="slow", delay_s=0.6), Reply(body=b'{"trickled": true}', trickle_s=0.03))
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=WAIT_S)
        try:
            for want in (b"slow", b'{"trickled": true}'):
                conn.request("POST", "/v1/chat/completions", CHAT, {"Content-Type": "application/json"})
                response = conn.getresponse()
                body = response.read()
                assert response.status == 200 and want in body
        finally:
            conn.close()


def test_a_client_that_hangs_up_mid_reply_leaves_no_traceback(capfd: pytest.CaptureFixture[str]) -> None:
    """A cancelled call or a killed run resets its connection while the server writes: the client's doing, so the
    server drops it quietly instead of printing socketserver's traceback into the notebook's output."""
    with FakeOpenAIServer() as srv:
        srv.script(Reply(body=b"x" * 200, trickle_s=0.01))
        sock = raw(srv.port, f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {len(CHAT)}", CHAT)
        assert sock.recv(1)  # the reply has begun
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
        sock.close()
        slots = srv._httpd._slots  # released once the connection's thread, its error handling included, is done
        deadline = time.monotonic() + WAIT_S
        while slots._value < srv.max_connections and time.monotonic() < deadline:
            time.sleep(0.02)
        assert slots._value == srv.max_connections, "the server still holds the connection"
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception occurred" not in err, err
