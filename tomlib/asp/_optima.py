"""Exact optima, computed once per (rules, unit, encoding) and kept: a later request with the same parameters is
answered from disk. Committed optima live in ``data/asp_optima/`` (so a class's "change the rule and rerun" is
instant offline); new ones are written to ``.tomlib/asp_optima/`` beside the response store. An optimum read from
there decides a verdict, so that folder must be this user's alone (:func:`tomlib.paths.private_dir`) and a file in it
is read only when this user wrote it (:func:`tomlib.paths.read_own`)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from tomlib.envs.city import Action, CityParams
from tomlib.paths import data_dir, private_dir, read_own, store_path, write_atomic

FOLDER = "asp_optima"


def optimum_key(params: CityParams, unit: int, encoding: str) -> str:
    """A hash of everything the optimum depends on: the rules, the supply unit and the encoding's text."""
    what = json.dumps({"params": params.model_dump(mode="json"), "unit": unit, "encoding": encoding}, sort_keys=True)
    return hashlib.sha256(what.encode()).hexdigest()[:20]


def cache_dirs() -> list[Path]:
    """Where optima are looked up, committed first; the last is where new ones are written."""
    return [data_dir() / FOLDER, store_path().parent / FOLDER]


def _own_folder() -> Path:
    return private_dir(cache_dirs()[-1], parents=True, instead="set TOMLIB_STORE to a file in a folder of yours")


def load_optimum(key: str) -> dict[str, Any] | None:
    committed, own = cache_dirs()
    for folder in (committed, own):
        path = folder / f"{key}.json"
        if not path.exists():
            continue
        raw = path.read_bytes() if folder == committed else read_own(_own_folder() / path.name)
        try:
            return dict(json.loads(raw)) if raw is not None else None
        except (TypeError, ValueError):
            continue  # a damaged file is recomputed and rewritten
    return None


def save_optimum(key: str, record: dict[str, Any]) -> Path:
    path = _own_folder() / f"{key}.json"
    write_atomic(path, json.dumps(record, indent=1, sort_keys=True), mode=0o600)
    return path


def actions_to_json(actions: dict[int, dict[str, Action]]) -> dict[str, dict[str, list[Any]]]:
    return {str(t): {a: [act.kind, act.arg] for a, act in acts.items()} for t, acts in actions.items()}


def actions_from_json(raw: dict[str, dict[str, list[Any]]]) -> dict[int, dict[str, Action]]:
    return {int(t): {a: Action(kind, arg) for a, (kind, arg) in acts.items()} for t, acts in raw.items()}
