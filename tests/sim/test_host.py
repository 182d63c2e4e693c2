"""Issue 30, item 6: the simulated model's server (and the fake OpenAI server it is built on) answers only requests
addressed to it, so a web page cannot reach it through DNS rebinding (its browser sends the page's own host)."""

from __future__ import annotations

import http.client
import json

import pytest

from tests.conftest import fake_config, user
from tomlib.llm import ChatModel
from tomlib.sim import SimServer
from tomlib.testing import FakeOpenAIServer

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

CHAT = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hello"}]}).encode()


def ask(port: int, method: str, path: str, host: str | None, body: bytes | None = None) -> tuple[int, bytes]:
    """A real HTTP/1.1 request to 127.0.0.1:port carrying ``host`` as its Host header (none when None)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        if host is not None:
            conn.putheader("Host", host)
        if body is not None:
            conn.putheader("Content-Type", "application/json")
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


@pytest.mark.parametrize("server", [FakeOpenAIServer, SimServer], ids=["fake-openai", "sim"])
def test_a_request_for_another_host_is_refused(server: type[FakeOpenAIServer]) -> None:
    with server() as srv:
        port = srv.port
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}"):  # its own address
            assert ask(port, "GET", "/v1/models", host)[0] == 200, host
        forged = [f"evil.example:{port}", "evil.example", f"127.0.0.1:{port + 1}", f"127.0.0.1.evil.example:{port}"]
        for host in [*forged, "", None]:
            status, body = ask(port, "GET", "/v1/models", host)
            assert status == 421 and b"Host" in body, (host, status, body)
            status, body = ask(port, "POST", "/v1/chat/completions", host, CHAT)
            assert status == 421 and b"Host" in body, (host, status, body)
        assert srv.n_requests == 0  # a refused request reaches no responder


def test_the_sdk_client_still_reaches_the_server(server: FakeOpenAIServer) -> None:
    model = ChatModel(fake_config(server), mode="record")
    try:
        assert model.complete_sync(user("hi"), sample_key="host").content == "fake reply to: hi"
    finally:
        model.close()
    assert server.n_requests == 1 and server.headers[0]["host"] == f"127.0.0.1:{server.port}"
