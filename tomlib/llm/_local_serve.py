"""Serve ``llama_cpp.server``'s app for :class:`tomlib.llm._local.LocalServer`, behind a guard.

Run by LocalServer only, as ``python -m tomlib.llm._local_serve --fd N --model PATH --alias NAME ...``. The parent
binds the listening socket on 127.0.0.1 and passes it down as file descriptor N, so the port is never free between
choosing it and serving on it: no other process can take it and answer tomlib's prompts in our place.

The guard refuses what a local OpenAI client never sends but a web page or another user can:

- a ``Host`` other than ``127.0.0.1:PORT`` / ``localhost:PORT`` (421): a page reaching us by DNS rebinding still
  sends its own host name;
- an ``Origin`` other than our own (403): the openai SDK sends none, a browser's cross-site request always does.
  llama_cpp's CORS middleware, which echoes any origin with credentials, is removed;
- a body over :data:`MAX_BODY_BYTES` (413), refused from ``Content-Length`` before any of it is read, or as soon as
  a chunked body passes the limit;

and answers a ``X-Tomlib-Challenge`` header with ``X-Tomlib-Proof`` (an HMAC under a key only the parent knows), so
the parent's health check can tell this server from anything else on the port. Every request also needs a bearer
token derived from the same per-start key (llama_cpp's ``api_key``; ``LocalServer.api_key``, which ``ChatModel``
uses), so another local user who connects cannot use the model.

Why the body cap is small: llama_cpp holds about 100 times a prompt's size in memory while it tokenizes (a 4 MB
body cost 310 MB and 6 s; 50 MB, 5 GB), so one large request could take the machine.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import socket
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

# The largest request body served. The bundled model's context is 2,048 tokens (~8 KB of prompt); 1 MiB holds the
# whole context of a 128k-token model in plain text, with room for JSON escaping and schemas. What llama_cpp does
# with a body grows ~100x in memory (a 1 MiB prompt: +95 MB peak, ~1 s of the only slot; 50 MB: 5 GB, a minute).
MAX_BODY_BYTES = 1 << 20

KEY_ENV = "TOMLIB_LOCAL_SERVER_KEY"  # the proof key, hex; read and removed from the environment at start
CHALLENGE_HEADER = "X-Tomlib-Challenge"
PROOF_HEADER = "X-Tomlib-Proof"


def proof(key: bytes, challenge: str) -> str:
    """What this server answers to ``challenge``: HMAC-SHA256 under ``key``, hex."""
    return hmac.new(key, challenge.encode(), hashlib.sha256).hexdigest()


def client_key(key: bytes) -> str:
    """The bearer token the server asks of every request (llama_cpp's ``api_key``), derived from the per-start
    ``key``: only the process that started it can use it, not another local user who finds the port."""
    return proof(key, "client")


class _TooLarge(Exception):
    pass


class Guard:
    """ASGI middleware around llama_cpp's app: Host, Origin and body-size checks, and the identity proof."""

    def __init__(self, app: App, *, port: int, key: bytes, max_body_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.key = key
        self.max_body_bytes = max_body_bytes
        self.hosts = {f"127.0.0.1:{port}".encode(), f"localhost:{port}".encode()}
        self.origins = {f"http://127.0.0.1:{port}".encode(), f"http://localhost:{port}".encode()}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # websockets: llama_cpp serves none
            return
        headers: list[tuple[bytes, bytes]] = scope["headers"]
        hosts = [v.lower() for k, v in headers if k == b"host"]
        if len(hosts) != 1 or hosts[0] not in self.hosts:
            await _refuse(send, 421, "this server answers only requests addressed to 127.0.0.1 or localhost")
            return
        if any(v.lower() not in self.origins for k, v in headers if k == b"origin"):
            await _refuse(send, 403, "cross-origin requests are refused")
            return
        lengths = [v for k, v in headers if k == b"content-length"]
        if lengths and (not lengths[0].isdigit() or int(lengths[0]) > self.max_body_bytes):
            await _refuse(send, 413, f"request body over {self.max_body_bytes} bytes")
            return
        try:
            body, first = await self._read_body(receive)
        except _TooLarge:
            await _refuse(send, 413, f"request body over {self.max_body_bytes} bytes")
            return
        challenge = next((v.decode("latin-1") for k, v in headers if k == CHALLENGE_HEADER.lower().encode()), None)
        await self.app(scope, _replay(body, first, receive), _with_proof(send, self.key, challenge))

    async def _read_body(self, receive: Receive) -> tuple[bytes, Message | None]:
        """The whole body (at most max_body_bytes of it), or the disconnect message that cut it short."""
        parts: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return b"".join(parts), message
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                raise _TooLarge
            parts.append(chunk)
            if not message.get("more_body", False):
                return b"".join(parts), None


def _replay(body: bytes, first: Message | None, receive: Receive) -> Receive:
    """A receive that hands the app the body already read, then defers to the connection (for disconnects)."""
    pending: list[Message] = [first or {"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> Message:
        if pending:
            return pending.pop()
        return await receive()

    return replay


def _with_proof(send: Send, key: bytes, challenge: str | None) -> Send:
    if challenge is None:
        return send

    async def send_with_proof(message: Message) -> None:
        if message["type"] == "http.response.start":
            extra = [(PROOF_HEADER.lower().encode(), proof(key, challenge).encode())]
            message = {**message, "headers": [*message.get("headers", []), *extra]}
        await send(message)

    return send_with_proof


async def _refuse(send: Send, status: int, reason: str) -> None:
    body = json.dumps({"error": {"message": reason, "code": status}}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _listening_socket(fd: int) -> socket.socket:
    """The socket the parent bound, checked to be TCP on 127.0.0.1 (a wrong fd must not serve elsewhere)."""
    sock = socket.socket(fileno=fd)  # family and type read from the descriptor
    host = sock.getsockname()[0] if sock.family == socket.AF_INET else None
    if sock.type != socket.SOCK_STREAM or host != "127.0.0.1":
        sys.exit(f"file descriptor {fd} is not a TCP socket bound to 127.0.0.1")
    return sock


def build_app(model: str, alias: str, *, port: int, n_ctx: int, n_threads: int, key: bytes) -> App:
    """llama_cpp.server's app for one model, without its CORS middleware, inside the :class:`Guard`."""
    from fastapi.middleware.cors import CORSMiddleware
    from llama_cpp.server.app import create_app
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    app = create_app(
        server_settings=ServerSettings(host="127.0.0.1", port=port, api_key=client_key(key)),
        model_settings=[ModelSettings(model=model, model_alias=alias, n_ctx=n_ctx, n_threads=n_threads)],
    )
    # the middleware stack is built at the first request, so dropping it here takes effect
    app.user_middleware = [m for m in app.user_middleware if m.cls is not CORSMiddleware]
    return Guard(app, port=port, key=key)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tomlib.llm._local_serve", description=__doc__)
    parser.add_argument("--fd", type=int, required=True, help="listening socket bound by the parent")
    parser.add_argument("--model", required=True, help="GGUF file")
    parser.add_argument("--alias", required=True, help="model name the server answers to")
    parser.add_argument("--n-ctx", type=int, required=True)
    parser.add_argument("--n-threads", type=int, required=True)
    args = parser.parse_args(argv)
    key = bytes.fromhex(os.environ.pop(KEY_ENV, ""))
    if not key:
        sys.exit(f"{KEY_ENV} is not set: run by tomlib's LocalServer only")
    sock = _listening_socket(args.fd)
    port = sock.getsockname()[1]

    import uvicorn

    app = build_app(args.model, args.alias, port=port, n_ctx=args.n_ctx, n_threads=args.n_threads, key=key)
    # proxy_headers off: nothing sits in front of this server, so X-Forwarded-* from a client is never trusted
    config = uvicorn.Config(app, proxy_headers=False, server_header=False, log_level="info")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
