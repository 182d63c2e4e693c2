"""Two-player cooperative games behind one interface, loadable by name with parameters.

>>> load_game("matrix(memory=n,actions=3)")      # doctest: +SKIP
>>> load_game("grid(layout=game2)")              # doctest: +SKIP
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from tomlib.envs._base import PREFERENCES, Game, GameInfo, IllegalAction, NoExactModel, check_preference, rng_for
from tomlib.envs.gridworld import GridState, GridWorld, Layout, load_layout
from tomlib.envs.matrix import MatrixState, RepeatedMatrixGame


def _overcooked(**params: Any) -> Game:
    from tomlib.envs.overcooked import OvercookedGame  # imports overcooked-ai only when asked for

    return OvercookedGame(**params)


_REGISTRY: dict[str, Callable[..., Game]] = {"matrix": RepeatedMatrixGame, "grid": GridWorld, "overcooked": _overcooked}


def register_game(name: str, factory: Callable[..., Game]) -> None:
    """Make ``load_game(name(...))`` build games with ``factory``."""
    _REGISTRY[name] = factory


def _value(text: str) -> Any:
    text = text.strip()
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if re.fullmatch(r"-?\d*\.\d+", text):
        return float(text)
    return text.strip("'\"")


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"matrix(memory=n,actions=3)"`` → ``("matrix", {"memory": "n", "actions": 3})``."""
    m = re.fullmatch(r"\s*([a-z_][a-z0-9_]*)\s*(?:\((.*)\))?\s*", spec)
    if not m:
        raise ValueError(f"cannot read game spec {spec!r}; write it like 'matrix(memory=n,actions=3)'")
    params: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in (m.group(2) or "").split(","))):
        if "=" not in part:
            raise ValueError(f"game spec {spec!r}: parameter {part!r} needs the form name=value")
        k, v = part.split("=", 1)
        params[k.strip()] = _value(v)
    return m.group(1), params


def load_game(spec: str, **overrides: Any) -> Game:
    """Build a game from a spec string (papermill-friendly) plus keyword overrides.

    Args:
        spec: the game and its parameters, ``name(key=value,...)`` (``"matrix(memory=n,actions=3)"``,
            ``"grid(layout=game2)"``); :func:`list_games` names the games.
        **overrides: parameters that replace the spec's, as typed values.
    """
    name, params = parse_spec(spec)
    if name not in _REGISTRY:
        raise ValueError(f"unknown game {name!r}; known: {', '.join(sorted(_REGISTRY))}")
    params.update(overrides)
    try:
        return _REGISTRY[name](**params)
    except TypeError as exc:
        raise ValueError(f"game {name!r} does not take these parameters: {params} ({exc})") from None


def list_games() -> list[str]:
    return sorted(_REGISTRY)


@functools.cache
def shared_game(spec: str) -> Game:
    """The game of ``spec``, one per process: everyone who plays or replays it (the tables, the conformance check, the
    explorer) shares what it keeps (the exact kitchen, best responses per state). Nothing changes a game once made.

    Args:
        spec: a game spec, as for :func:`load_game`.
    """
    return load_game(spec)


TASKS: dict[str, str] = {
    "memory_1": "matrix(memory=1)",
    "memory_n": "matrix(memory=n)",
    "game1": "grid(layout=game1)",
    "game2": "grid(layout=game2)",
    "overcooked": "overcooked",
}
"""The adaptive-ToM paper's five task settings (``adaptive-tom-aaai2026.txt`` §4.1), name -> game spec: what its
tables play (:mod:`tomlib.experiments.adaptive_tom`), and where an agent of yours is checked
(:func:`tomlib.agents.check_agent`)."""


__all__ = [
    "PREFERENCES",
    "TASKS",
    "Game",
    "GameInfo",
    "GridState",
    "GridWorld",
    "IllegalAction",
    "Layout",
    "MatrixState",
    "NoExactModel",
    "RepeatedMatrixGame",
    "check_preference",
    "list_games",
    "load_game",
    "load_layout",
    "parse_spec",
    "register_game",
    "rng_for",
    "shared_game",
]
