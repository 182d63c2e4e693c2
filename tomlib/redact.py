"""One redaction policy for every boundary where text leaves the process or reaches disk.

A secret is the value (8+ characters) of an environment variable whose name looks secret (KEY, TOKEN, SECRET,
PASSWORD, CREDENTIAL, AUTH), of any variable that a configured model names as its ``api_key_env`` (the model
registry tells this module through :func:`register_secret_names`; this module imports nothing of tomlib), or a value
registered with :func:`register_secret` (every key a model reads). Key-shaped strings (``sk-…``, bearer tokens,
``api_key=…``) are redacted too. Applied by the response store, transcripts, run logs, error messages, executed
notebooks and their HTML, stamps, sweep indexes and the report.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable, Iterable
from typing import Any

REDACTED = "[REDACTED]"
MIN_SECRET_LEN = 8
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|(^|_)AUTH($|_)", re.I)
# (literal that must occur in the lower-cased text, pattern): the literal test is ~10x cheaper than the search
_PATTERNS = [
    ("sk-", re.compile(r"sk-[A-Za-z0-9_\-]{16,}")),
    ("bearer", re.compile(r"(?i)bearer\s+[A-Za-z0-9_\-\.=]{12,}")),
    # the optional backslashes: the same text inside a serialized JSON string (a run-log line)
    ("api", re.compile(r"(?i)(api[_-]?key\\?[\"']?\s*[:=]\s*\\?[\"']?)[A-Za-z0-9_\-\.]{12,}")),
]
_lock = threading.Lock()
_registered: set[str] = set()
_generation = [0]


def register_secret(value: str | None) -> None:
    """Treat ``value`` as a secret from now on (e.g. the API key a model just read)."""
    if value and len(value) >= MIN_SECRET_LEN and value not in _registered:
        with _lock:
            _registered.add(value)
            _generation[0] += 1


_name_sources: list[Callable[[], Iterable[str]]] = []


def register_secret_names(source: Callable[[], Iterable[str]]) -> None:
    """Be told of more variables whose values are secrets: ``source`` is asked each time secrets are collected, so
    it may follow a file that changes (the model registry registers its ``api_key_env`` names this way)."""
    if source not in _name_sources:
        _name_sources.append(source)


def _told_names() -> set[str]:
    return {name for source in _name_sources for name in source()}


def secret_values(environ: dict[str, str] | None = None) -> list[str]:
    """Every secret value known now, longest first."""
    env = os.environ if environ is None else environ
    names = {k for k in env if _SECRET_NAME.search(k)} | _told_names()
    values = {env[k] for k in names if len(env.get(k, "")) >= MIN_SECRET_LEN} | _registered
    return sorted(values, key=len, reverse=True)


class Redactor:
    """Replaces the secrets known when it was built (and any registered later) and key-shaped strings."""

    def __init__(self, extra_secrets: Iterable[str] = ()) -> None:
        self._extra = [s for s in extra_secrets if s]
        self._build()

    def _build(self) -> None:
        self._generation = _generation[0]
        raw = {*secret_values(), *self._extra}
        # a secret may appear as-is or JSON-escaped (when redacting a serialized line or file)
        forms = {f for s in raw for f in (s, json.dumps(s, ensure_ascii=False)[1:-1], json.dumps(s)[1:-1])}
        self.secrets = sorted(forms, key=len, reverse=True)
        self._secret_bytes = [f.encode("utf-8", "surrogateescape") for f in self.secrets]

    def text(self, s: str) -> str:
        if self._generation != _generation[0]:
            self._build()
        for secret in self.secrets:
            if secret in s:
                s = s.replace(secret, REDACTED)
        low = s.lower()
        for literal, pat in _PATTERNS:
            if literal in low and pat.search(s):
                s = pat.sub(lambda m: (m.group(1) if m.re.groups else "") + REDACTED, s)
        return s

    def suspect(self, data: bytes) -> bool:
        """Whether a known secret or a key-shaped pattern's literal occurs in ``data`` (UTF-8): when not, there is
        nothing to redact. Cheap per byte, so it pays to ask it once of a whole batch of lines."""
        if self._generation != _generation[0]:
            self._build()
        if self._secret_bytes and any(secret in data for secret in self._secret_bytes):
            return True
        low = data.lower()
        return b"sk-" in low or b"bearer" in low or b"api" in low  # the literals of _PATTERNS

    def line(self, data: bytes) -> bytes:
        """:meth:`text` for a UTF-8 line, decoding it only when it is :meth:`suspect`."""
        if not self.suspect(data):
            return data
        return self.text(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")

    def __call__(self, obj: Any) -> Any:
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, dict):
            return {self.text(str(k)): self(v) for k, v in obj.items()}
        if isinstance(obj, list | tuple):
            return [self(v) for v in obj]
        return obj


def redact_text(s: str) -> str:
    """``s`` with every secret known now replaced by ``[REDACTED]``."""
    return Redactor().text(s)


def redact(obj: Any) -> Any:
    """A copy of a JSON-like object with every secret known now redacted (keys and values)."""
    return Redactor()(obj)


def redact_file(path: str | os.PathLike[str]) -> bool:
    """Redact a text file in place (notebooks, HTML, reports); True when something was replaced."""
    p = os.fspath(path)
    with open(p, encoding="utf-8", errors="surrogateescape") as fh:
        text = fh.read()
    clean = redact_text(text)
    if clean == text:
        return False
    tmp = p + ".redact-tmp"
    with open(tmp, "w", encoding="utf-8", errors="surrogateescape") as fh:
        fh.write(clean)
    os.replace(tmp, p)
    return True
