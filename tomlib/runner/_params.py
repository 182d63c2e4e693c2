"""Notebook parameters from the command line (``-p NAME VALUE``, ``-y YAML``), checked against the parameters
cell before any notebook starts: an undeclared name or a value of the wrong type is an error naming the fix."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import Any

import yaml

from tomlib.errors import UsageError

_TYPES: dict[str, tuple[type, ...]] = {"int": (int,), "float": (int, float), "str": (str,), "bool": (bool,)}


def parse_cli(pairs: Sequence[Sequence[str]] = (), yaml_text: str | None = None) -> dict[str, Any]:
    """``-p NAME VALUE`` pairs (values read as papermill reads them: ``5`` is an int, ``five`` a str) over a ``-y``
    YAML mapping."""
    params: dict[str, Any] = {}
    if yaml_text:
        try:
            raw = yaml.safe_load(yaml_text)
        except yaml.YAMLError as exc:
            raise UsageError(f"-y is not valid YAML ({exc}); give a mapping such as -y 'episodes: 5'.") from None
        if not isinstance(raw, dict):
            raise UsageError(f"-y must be a YAML mapping such as 'episodes: 5', got {yaml_text!r}.")
        params.update(raw)
    for name, value in pairs:
        params[name] = _scalar(value)
    return params


def _scalar(text: str) -> Any:
    """A ``-p`` value as papermill reads it: true/false, None, an int, a float, else the text itself ('' stays '')."""
    if text in ("True", "true"):
        return True
    if text in ("False", "false"):
        return False
    if text == "None":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` with the closest of ``choices``, or "" when none is close."""
    close = difflib.get_close_matches(name, list(choices), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def check_values(notebook: str, declared: dict[str, dict[str, Any]], params: dict[str, Any], where: str) -> None:
    """Raise :class:`UsageError` for names ``notebook`` does not declare (with the closest declared name) and for
    values whose type differs from the parameters cell's type hint (``episodes: int = 30``)."""
    problems = []
    for name, value in params.items():
        info = declared.get(name)
        if info is None:
            problems.append(f"'{name}' is not a parameter of {notebook}{did_you_mean(name, declared)}")
            continue
        kind = info.get("inferred_type_name", "None")
        ok = _TYPES.get(kind)
        if ok is None or value is None:
            continue
        if not isinstance(value, ok) or (kind in ("int", "float") and isinstance(value, bool)):
            problems.append(f"'{name}' must be {kind} (default {info.get('default')}), got {value!r}")
    if problems:
        raise UsageError(f"{where}: " + "; ".join(problems) + f". {notebook} declares: {', '.join(sorted(declared))}.")
