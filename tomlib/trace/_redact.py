"""Secret redaction applied to every trace event before it is written."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from typing import Any

REDACTED = "[REDACTED]"
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.I)
_PATTERNS = [
    re.compile(r"sk-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"(?i)bearer\s+[A-Za-z0-9_\-\.=]{12,}"),
    re.compile(r"(?i)(api[_-]?key[\"']?\s*[:=]\s*[\"']?)[A-Za-z0-9_\-\.]{12,}"),
]


def secret_values(environ: dict[str, str] | None = None) -> list[str]:
    """Values of environment variables whose names look secret (at least 8 characters long)."""
    env = os.environ if environ is None else environ
    return sorted({v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= 8}, key=len, reverse=True)


class Redactor:
    """Replaces known secret values and key-shaped strings in any JSON-like object."""

    def __init__(self, extra_secrets: Iterable[str] = ()) -> None:
        raw = [s for s in {*secret_values(), *extra_secrets} if s]
        # a secret may appear as-is or JSON-escaped (when redacting a serialized line)
        forms = {f for s in raw for f in (s, json.dumps(s, ensure_ascii=False)[1:-1])}
        self.secrets = sorted(forms, key=len, reverse=True)

    def text(self, s: str) -> str:
        for secret in self.secrets:
            if secret in s:
                s = s.replace(secret, REDACTED)
        for pat in _PATTERNS:
            if pat.search(s):
                s = pat.sub(lambda m: (m.group(1) if m.re.groups else "") + REDACTED, s)
        return s

    def __call__(self, obj: Any) -> Any:
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, dict):
            return {self.text(str(k)): self(v) for k, v in obj.items()}
        if isinstance(obj, list | tuple):
            return [self(v) for v in obj]
        return obj
