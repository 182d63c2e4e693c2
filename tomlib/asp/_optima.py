"""Exact optima, computed once per (rules, unit, encoding) and kept: a later request with the same parameters is
answered from disk. Committed optima live in ``data/asp_optima/`` (so a class's "change the rule and rerun" is
instant offline); new ones are written to ``.tomlib/asp_optima/`` beside the response store."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from tomlib.envs.city import Action, CityParams
from tomlib.paths import data_dir, store_path

FOLDER = "asp_optima"


def optimum_key(params: CityParams, unit: int, encoding: str) -> str:
    """A hash of everything the optimum depends on: the rules, the supply unit and the encoding's text."""
    what = json.dumps({"params": params.model_dump(mode="json"), "unit": unit, "encoding": encoding}, sort_keys=True)
    return hashlib.sha256(what.encode()).hexdigest()[:20]


def cache_dirs() -> list[Path]:
    """Where optima are looked up, committed first; the last is where new ones are written."""
    return [data_dir() / FOLDER, store_path().parent / FOLDER]


def load_optimum(key: str) -> dict[str, Any] | None:
    for folder in cache_dirs():
        path = folder / f"{key}.json"
        if path.exists():
            try:
                return dict(json.loads(path.read_text()))
            except (OSError, ValueError):
                continue  # a damaged file is recomputed and rewritten
    return None


def save_optimum(key: str, record: dict[str, Any]) -> Path:
    folder = cache_dirs()[-1]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{key}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1, sort_keys=True))
    tmp.replace(path)
    return path


def actions_to_json(actions: dict[int, dict[str, Action]]) -> dict[str, dict[str, list[Any]]]:
    return {str(t): {a: [act.kind, act.arg] for a, act in acts.items()} for t, acts in actions.items()}


def actions_from_json(raw: dict[str, dict[str, list[Any]]]) -> dict[int, dict[str, Action]]:
    return {int(t): {a: Action(kind, arg) for a, (kind, arg) in acts.items()} for t, acts in raw.items()}
