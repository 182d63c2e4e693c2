"""A fake OpenAI-compatible chat server on real loopback sockets, for tests and benchmarks.

Replies are scripted (a queue) or computed by a responder; latency, 429 with Retry-After, 5xx, malformed
and truncated JSON bodies, and bodies trickled a byte at a time can be injected. It records every request and
the peak number in flight. Responders see the request's headers under ``request["_headers"]``.

It answers only requests addressed to it (``Host: 127.0.0.1:PORT`` or ``localhost:PORT``) and refuses any other
with 421, so a web page cannot reach it by DNS rebinding: the browser still sends the page's own host name.

It runs inside a notebook's kernel (:class:`tomlib.sim.SimServer`), so what one client can make it hold is bounded:
a POST needs a valid ``Content-Length`` of at most :data:`MAX_REQUEST_BYTES` (else 411, 400 or 413, and the
connection closes), a connection that waits on its client for :data:`IDLE_TIMEOUT_S` is closed, and at most
:data:`MAX_CONNECTIONS` are served at once (each holds a thread; one more is answered 503 and closed).
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_REQUEST_BYTES = 16 * 2**20
"""The largest request body read (413 beyond). Our longest prompts are tens of KB and a model's whole context window
is well under 1 MB of JSON, so this leaves ample room while bounding what one request makes the server hold (the
body, then its parsed JSON at several times its size)."""
IDLE_TIMEOUT_S = 60.0
"""A connection whose client sends nothing for this long (between requests or in the middle of one) is closed: each
open connection holds a thread. It is a bound on each wait for the client's bytes (and for the client to take ours),
not on the time we take to answer, so slow and trickled replies are not cut. Longer than HTTP clients keep an idle
pooled connection (httpx: 5 s), so the client is the one that closes it in ordinary use."""
MAX_CONNECTIONS = 512
"""Connections served at once, one thread each: several clients at the largest concurrency we configure (64) stay
well below it. One more is answered 503 and closed at once, without a thread."""
_BUSY = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
_LENGTH = re.compile(r"[0-9]+")


@dataclass
class Reply:
    """One scripted answer."""

    content: str | None = None
    status: int = 200
    delay_s: float | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    truncate: bool = False
    trickle_s: float | None = None  # send the body one byte at a time, this many seconds apart


def _default_content(request: dict[str, Any]) -> str:
    last = next((m["content"] for m in reversed(request.get("messages", [])) if m["role"] == "user"), "")
    return f"fake reply to: {last[:200]}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], max_connections: int):
        self._slots = threading.BoundedSemaphore(max_connections)
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        """A thread for the connection while a slot is free; else a 503 written from here and the connection closed
        (a fresh socket's send buffer takes the few bytes without blocking)."""
        if not self._slots.acquire(blocking=False):
            with contextlib.suppress(OSError):
                request.sendall(_BUSY)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (a cancelled call, a killed run) is not the server's error: no traceback for it."""
        if isinstance(sys.exc_info()[1], ConnectionError):  # reset, broken pipe, aborted
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    """The HTTP side of a :class:`FakeOpenAIServer`: :meth:`FakeOpenAIServer.start` subclasses it with ``fake``, the
    server whose script, counts and limits it serves, and ``timeout``, the server's ``idle_timeout_s`` (the socket's:
    each read from, and write to, the client waits this long)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are separate writes; Nagle would add ~40 ms
    fake: FakeOpenAIServer

    def log_message(self, *args: Any) -> None:
        pass

    def _send(
        self, status: int, body: bytes, headers: dict[str, str] | None = None, trickle_s: float | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if trickle_s:
            for i in range(len(body)):
                self.wfile.write(body[i : i + 1])
                self.wfile.flush()
                time.sleep(trickle_s)
        else:
            self.wfile.write(body)

    def _addressed_here(self) -> bool:
        """The Host header names this server; anything else (or none) gets a 421 and the connection closes."""
        host = (self.headers.get("Host") or "").strip().lower()
        if host in (f"127.0.0.1:{self.fake.port}", f"localhost:{self.fake.port}"):
            return True
        body = json.dumps(
            {"error": {"message": f"Host {host!r} is not this server (127.0.0.1:{self.fake.port})", "type": "fake"}}
        ).encode()
        self.close_connection = True  # a POST body left unread must not be parsed as the next request
        self._send(421, body, {"Connection": "close"})
        return False

    def do_GET(self) -> None:
        if not self._addressed_here():
            return
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, json.dumps({"object": "list", "data": [{"id": "fake", "object": "model"}]}).encode())
        else:
            self._send(404, b'{"error": {"message": "not found"}}')

    def _refuse(self, status: int, message: str) -> None:
        """An error reply that closes the connection (the body, if any, is left unread)."""
        self.close_connection = True
        body = json.dumps({"error": {"message": message, "type": "fake", "code": None}}).encode()
        self._send(status, body, {"Connection": "close"})

    def _body(self) -> bytes | None:
        """The request body, read only when one valid ``Content-Length`` within the bound announces it; else
        None, with the error sent."""
        lengths = self.headers.get_all("Content-Length") or []
        if not lengths or "Transfer-Encoding" in self.headers:
            self._refuse(411, "a request body needs a Content-Length (no chunked encoding)")
            return None
        if len(lengths) > 1 or not _LENGTH.fullmatch(lengths[0].strip()):
            said = ", ".join(lengths)[:40]
            self._refuse(400, f"Content-Length must be one non-negative integer, not {said!r}")
            return None
        length = int(lengths[0])
        if length > self.fake.max_request_bytes:
            self._refuse(413, f"request body of {length} bytes; at most {self.fake.max_request_bytes} are read")
            return None
        body = self.rfile.read(length)
        if len(body) < length:  # the client went away mid-body (a killed run): no request to answer or keep
            self.close_connection = True
            return None
        return body

    def do_POST(self) -> None:
        if not self._addressed_here():
            return
        raw = self._body()
        if raw is None:
            return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, b'{"error": {"message": "not found"}}')
            return
        try:
            request = json.loads(raw or b"{}")
        except ValueError as exc:
            self._refuse(400, f"the body is not JSON: {exc}")
            return
        if not isinstance(request, dict):
            self._refuse(400, "the body must be a JSON object")
            return
        with self.fake._lock:
            self.fake.count += 1
            if self.fake.keep_requests:
                self.fake.requests.append({**request, "_t": time.monotonic()})
                self.fake.headers.append({k.lower(): v for k, v in self.headers.items()})
            self.fake.in_flight += 1
            self.fake.max_in_flight = max(self.fake.max_in_flight, self.fake.in_flight)
        try:
            reply = self.fake._next_reply({**request, "_headers": {k.lower(): v for k, v in self.headers.items()}})
            delay = self.fake.latency_s if reply.delay_s is None else reply.delay_s
            if delay > 0:  # sleep(0) still hands the GIL over: 5 ms a call while the client's threads work
                time.sleep(delay)
            self._answer(request, reply)
        finally:
            with self.fake._lock:
                self.fake.in_flight -= 1

    def _answer(self, request: dict[str, Any], reply: Reply) -> None:
        if reply.status != 200:
            body = (
                reply.body
                or json.dumps(
                    {"error": {"message": f"fake error {reply.status}", "type": "fake", "code": None}}
                ).encode()
            )
            self._send(reply.status, body, reply.headers)
            return
        if reply.body is not None:
            self._send(200, reply.body, reply.headers, reply.trickle_s)
            return
        content = reply.content if reply.content is not None else _default_content(request)
        prompt_tokens = sum(len(m.get("content", "").split()) for m in request.get("messages", []))
        body = json.dumps(
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": request.get("model", "fake"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": len(content.split()),
                    "total_tokens": prompt_tokens + len(content.split()),
                },
            }
        ).encode()
        if reply.truncate:
            body = body[: len(body) // 2]
        self._send(200, body, reply.headers, reply.trickle_s)


class FakeOpenAIServer:
    """``with FakeOpenAIServer(latency_s=0.1) as srv: ...`` then point a model at ``srv.base_url``."""

    def __init__(
        self,
        *,
        latency_s: float = 0.0,
        responder: Callable[[dict[str, Any]], Reply | str] | None = None,
        keep_requests: bool = True,
        max_request_bytes: int = MAX_REQUEST_BYTES,
        idle_timeout_s: float = IDLE_TIMEOUT_S,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        """Args:
        latency_s: seconds to wait before each reply (a scripted :class:`Reply` may set its own).
        responder: computes the reply to a request once the script is empty; else an echo of the last user message.
        keep_requests: keep every request and its headers (``requests``, ``headers``); False only counts them.
        max_request_bytes: the largest request body read; a larger ``Content-Length`` is answered 413.
        idle_timeout_s: how long a connection may wait on its client before it is closed.
        max_connections: connections served at once; one more is answered 503.
        """
        self.latency_s = latency_s
        self.max_request_bytes = max_request_bytes
        self.idle_timeout_s = idle_timeout_s
        self.max_connections = max_connections
        self.responder = responder
        self.keep_requests = keep_requests  # False: count requests without keeping them (long rehearsals)
        self.count = 0
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None

    # scripting ---------------------------------------------------------------------------------
    def script(self, *replies: Reply | str) -> None:
        """Queue replies for the next requests, in order; afterwards the responder answers."""
        with self._lock:
            self._script.extend(Reply(content=r) if isinstance(r, str) else r for r in replies)

    @property
    def n_requests(self) -> int:
        with self._lock:
            return self.count

    def reset_counts(self) -> None:
        with self._lock:
            self.requests.clear()
            self.headers.clear()
            self.count = 0
            self.max_in_flight = 0

    def _next_reply(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            if self._script:
                return self._script.popleft()
        if self.responder is not None:
            r = self.responder(request)
            return Reply(content=r) if isinstance(r, str) else r
        return Reply(content=_default_content(request))

    # lifecycle ---------------------------------------------------------------------------------
    @property
    def port(self) -> int:
        """The listening port (kept after stop, so a config can still point at the now-dead address)."""
        assert self._port is not None, "server not started"
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAIServer:
        """Listen on a free loopback port and serve from a daemon thread."""
        handler = type("Handler", (_Handler,), {"fake": self, "timeout": self.idle_timeout_s})
        self._httpd = _Server(("127.0.0.1", 0), handler, self.max_connections)
        self._port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
