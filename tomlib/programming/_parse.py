"""An engineer's free-text reply → (code, one-line action, belief), tolerant of what models actually send."""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)(?:```|\Z)", re.S)
_LABEL = re.compile(r"^\W{0,3}(action|belief|description)\W{0,3}\s*[:：-]\s*(.*)$", re.I)
_CODE_START = re.compile(r"^(def |class |import |from \S+ import |async def |@)", re.M)
MAX_DESCRIPTION = 240
NO_ACTION = "(no description given)"


@dataclass(frozen=True)
class EngineerReply:
    code: str
    action: str
    belief: str
    problem: str = ""  # why the reply could not be fully used ("" when it could)


def _label(text: str, name: str) -> str:
    for line in text.splitlines():
        m = _LABEL.match(line.strip())
        said = m.group(2).strip(" *_`") if m else ""
        if m and m.group(1).lower() == name and said:
            return said[:MAX_DESCRIPTION]
    return ""


def parse_engineer(text: str) -> EngineerReply:
    """Code = the last fenced block that looks like Python (or, unfenced, from the first ``def``/``import`` on);
    action = the ``Action:`` line (else ``Description:``, else the first prose line)."""
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(text)]
    code, problem = "", ""
    python = [b for lang, b in blocks if lang in ("python", "py", "python3", "")]
    if python:
        code = max(python, key=lambda b: ("def " in b, len(b)))
    else:
        m = _CODE_START.search(text)
        if m:
            code = text[m.start() :]
    code = code.strip("\n")
    if not code.strip():
        problem = "no code in the reply"
    prose = _FENCE.sub("", text)
    action = _label(prose, "action") or _label(prose, "description")
    if not action:
        first = next((ln.strip() for ln in prose.splitlines() if ln.strip() and not _CODE_START.match(ln)), "")
        action = first[:MAX_DESCRIPTION] or NO_ACTION
        problem = problem or "no 'Action:' line; used the first line of prose"
    return EngineerReply(code=code, action=action, belief=_label(prose, "belief"), problem=problem)
