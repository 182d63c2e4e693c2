"""The base of every error a user can cause or meet; the command line prints these as one line, no traceback.

A :class:`TomlibError`'s message is redacted when it is made (``tomlib.redact``). When a wrapped exception may quote
a key (an SDK error carrying a 401 body), raise ours ``from None``: otherwise the traceback shows the original.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tomlib.redact import redact_text


class TomlibError(Exception):
    """An error whose message names the cause and the fix. Secrets in the message are redacted."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(redact_text(a) if isinstance(a, str) else a for a in args))


class UsageError(TomlibError, ValueError):
    """A command or call that names something that does not exist or cannot work (a notebook, a parameter)."""


class UnsafeLocation(UsageError):
    """A folder or file another local user could change (own, write, or swap through a folder above it), refused
    because what tomlib reads from it, or writes through it, would then be theirs to decide."""


class ConfigFileError(UsageError):
    """A configuration file (profile, grid, models.yaml) that is missing, unreadable or of the wrong shape."""


def closest(name: str, choices: Iterable[str]) -> str | None:
    """The closest of ``choices`` to ``name``, or None when none is close."""
    close = difflib.get_close_matches(name, list(choices), n=1)
    return close[0] if close else None


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` with the closest of ``choices``, or "" when none is close."""
    close = closest(name, choices)
    return f" (did you mean '{close}'?)" if close else ""


def edit_distance(a: str, b: str) -> int:
    """Edits (insert, delete, substitute, swap two neighbours) that make ``a`` into ``b``: ``tabel`` is one from
    ``table``, where difflib's ratio ranks ``table3`` nearer ``tabel2`` than ``table2_fig2``."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i]
        for j, cb in enumerate(b, 1):
            cost = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cost = min(cost, prev2[j - 2] + 1)
            row.append(cost)
        prev2, prev = prev, row
    return prev[-1]


def closest_by_parts(name: str, choices: Iterable[str], sep: str = "_") -> str | None:
    """The choice whose ``sep``-separated parts come nearest ``name``'s, or None when one of ``name``'s parts is
    near none of a choice's (each within a third of its length, at least one edit). A choice may have parts the
    name leaves out (``table2`` finds ``09_coalition_table2_fig2``); the fewest edits wins, then the fewest parts
    left out, then the first choice."""
    wanted = [p for p in name.lower().split(sep) if p]
    best: tuple[int, int, int] | None = None
    found = None
    for order, choice in enumerate(choices):
        parts = [p for p in choice.lower().split(sep) if p]
        if not wanted or not parts:
            continue
        edits = [min(edit_distance(w, p) for p in parts) for w in wanted]
        if any(e > max(1, len(w) // 3) for e, w in zip(edits, wanted, strict=True)):
            continue
        key = (sum(edits), len(parts) - len(wanted), order)
        if best is None or key < best:
            best, found = key, choice
    return found


def describe_validation(exc: Any, limit: int = 8) -> str:
    """A pydantic ValidationError in one line: ``field.path: problem; …``."""
    parts = []
    for err in exc.errors()[:limit]:
        loc = ".".join(str(x) for x in err["loc"]) or "(root)"
        parts.append(f"{loc}: {' '.join(str(err['msg']).split())}")  # a nested model's error spans lines
    return "; ".join(parts)


def load_yaml(path: str | os.PathLike[str], what: str) -> Any:
    """Parse a YAML file; a missing file or a syntax error names the file, the line and the column."""
    import yaml

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigFileError(f"{what} {p} does not exist.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigFileError(f"{what} {p} cannot be read: {exc}.") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{p}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(p)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigFileError(f"{where}: YAML syntax error in {what}: {problem}. Fix the file there.") from None
