"""Side runs keep to themselves: where ``tomlib run`` writes when it is not the series.

The series is the default profile with no ``-p``/``-y`` value that changes a parameter, run in waves or not as the
default profile says: ``./reproduce.sh`` and plain ``tomlib run`` write ``results/`` as they always have. Any other
run (another profile, another model, other parameter values, ``--stop-when-decided``) is a side run: it writes a
results folder of its own, ``results/side/<what changed>/`` (``results/side/sim/``, ``results/side/seed=3/``), so
the series' tables, units, claims and stamps stay those of the series, and its next run skips what it skipped. Given
``--results DIR`` it writes there; given ``--replace-series`` it writes into the series' folder. Either way one line
says where before anything starts.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tomlib.runner._profiles import Profile, load_profile

SIDE_DIR = "side"
"""The folder of a series' results folder under which each side run gets its own."""


def _same_profile(profile: Profile, series: Profile) -> bool:
    keep = {"name", "description"}
    return profile.model_dump(exclude=keep) == series.model_dump(exclude=keep)


def _default_of(info: dict[str, Any]) -> Any:
    try:
        return ast.literal_eval(str(info.get("default")))
    except (ValueError, SyntaxError):
        return object()  # a default papermill cannot read back: any value given differs


def changed_values(profile: Profile, books: Sequence[Path], overrides: dict[str, Any]) -> dict[str, Any]:
    """The ``-p``/``-y`` values that change what some chosen notebook runs with: each differs from the value that
    notebook takes without it (the profile's for it, else its parameters cell's default)."""
    from tomlib.runner._execute import declared_parameters

    changed: dict[str, Any] = {}
    for nb in books:
        declared = declared_parameters(nb)
        given = {**profile.parameters, **profile.notebooks.get(nb.stem, {})}
        for name, value in overrides.items():
            if name not in declared or name == "results_dir":
                continue
            before = given[name] if name in given else _default_of(declared[name])
            if value != before or type(value) is not type(before):
                changed[name] = value
    return changed


def side_name(profile: Profile, changed: dict[str, Any], waves: bool = False) -> str:
    """The folder a side run writes under ``results/side/``, named after what changed: the profile's name when it is
    not the series' (``sim``; ``default-edited`` for a file named default that is not), then each changed value
    (``seed=3``, ``model=empty``), then ``waves`` for ``--stop-when-decided``, joined by ``-``."""
    parts = []
    if not _same_profile(profile, load_profile("default")):
        parts.append("default-edited" if profile.name == "default" else profile.name)
    for name, value in sorted(changed.items()):
        shown = "empty" if value == "" else ",".join(map(str, value)) if isinstance(value, list) else str(value)
        parts.append(f"{name}={shown}")
    if waves:
        parts.append("waves")
    name = re.sub(r"[^A-Za-z0-9._=,+-]+", "_", "-".join(parts)).strip("._-")[:100]
    return name or "side"


def _shown(path: Path) -> str:
    """``path`` relative to the working folder when it is inside it (as the user would type it)."""
    try:
        return os.path.relpath(path) if path.resolve().is_relative_to(Path.cwd().resolve()) else str(path)
    except ValueError:
        return str(path)


def where_to_write(
    profile: Profile,
    books: Sequence[Path],
    overrides: dict[str, Any],
    series: Path,
    *,
    results: str | os.PathLike[str] | None = None,
    replace_series: bool = False,
    waves: bool = False,
) -> tuple[Path, str | None]:
    """The results folder of ``tomlib run`` and the line it prints before it starts (None for the series itself).

    Args:
        profile: the run's profile.
        books: the notebooks it runs.
        overrides: its ``-p``/``-y`` values.
        series: the series' results folder (``results/``, ``TOMLIB_RESULTS`` or a class's own).
        results: ``--results``: the folder the user chose, used as given.
        replace_series: ``--replace-series``: a side run writes into ``series``, replacing the outputs of the
            notebooks it runs.
        waves: the run stops notebooks when decided (``--stop-when-decided`` or the profile's).
    """
    changed = changed_values(profile, books, overrides)
    same = _same_profile(profile, load_profile("default")) and not changed and not waves
    chosen = Path(results).resolve() if results else None
    if same:
        return (chosen or series), None
    name = side_name(profile, changed, waves)
    what = f"profile {profile.name}" + "".join(f", {k}={v!r}" for k, v in sorted(changed.items()))
    what += ", stopping when decided" if waves else ""
    stems = ", ".join(nb.stem[:2] for nb in books)
    replacing = (
        f"it replaces the series' outputs of {stems} there (tables, units, claims, stamps), and the next series run "
        "runs them again"
    )
    if chosen is not None and chosen != series.resolve():
        return chosen, f"side run ({what}): writing to {_shown(chosen)} (--results)"
    if chosen is not None or replace_series:
        flag = "--results" if chosen is not None else "--replace-series"
        return series, f"side run ({what}) into the series' results folder {_shown(series)} ({flag}): {replacing}"
    own = series / SIDE_DIR / name
    return own, (
        f"side run ({what}): writing to {_shown(own)}, leaving the series' folder {_shown(series)} as it is "
        "(--replace-series writes there instead)"
    )
