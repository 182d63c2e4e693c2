"""One episode of a two-player game read back from a run log: its joint actions and the game and seed it was played
with, which is what replaying it needs (:func:`tomlib.tom.replay_states`, the effective order of its players).

The game is the spec string of the episode's first ``env_state`` (``game.spec()``, which ``load_game`` turns back into
the game); the seed is the run's, from its ``run_start`` line when the experiment wrote it there (every
adaptive-ToM table does). The five adaptive-ToM tasks start from the same state whatever the seed, so their episodes
replay without it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from tomlib.trace._index import log_in, read_index, read_lines

SEAT_NAMES = ("player1", "player2")


class LoggedGame(NamedTuple):
    """The game an episode was played on (a ``load_game`` spec) and the run's seed; None where the log holds none."""

    spec: str | None
    seed: int | None


def _log_path(log: str | os.PathLike[str]) -> Path:
    path = Path(log)
    found = log_in(path) if path.is_dir() else (path if path.exists() else None)
    if found is None:
        raise FileNotFoundError(f"no run log at {path}: give a run folder (results/runs/<run_id>) or its events file")
    return found


def _episode_events(
    log: str | os.PathLike[str] | pd.DataFrame, condition: str, episode: int
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The events of one episode (kind, step, agent, payload) and the run's ``run_start`` payload (empty if absent)."""
    if isinstance(log, pd.DataFrame):
        ep = log[(log["condition"] == condition) & (log["episode"] == episode)]
        starts = log.loc[log["kind"] == "run_start", "payload"]
        rows = ep[["kind", "step", "agent", "payload"]].to_dict("records")
        return rows, dict(starts.iloc[0]) if len(starts) else {}
    path = _log_path(log)
    idx = read_index(path)
    held = idx.episodes.get((condition, int(episode)))
    rows = read_lines(path, held.offsets, held.lengths, idx.blocks) if held is not None else []
    return rows, dict(idx.run_start or {})


def _step(value: Any) -> int | None:
    return None if value is None or pd.isna(value) else int(value)


def joint_actions(log: str | os.PathLike[str] | pd.DataFrame, condition: str, episode: int) -> list[tuple[str, str]]:
    """The joint actions of one episode in player order, step by step, as the run log holds them (each step's
    ``env_state`` after the move, else the two players' ``action`` events).

    Args:
        log: a run folder (``results/runs/<run_id>``), its events file, or a frame from :func:`tomlib.trace.load_runs`.
        condition: the condition's name in the log (``game2:ToM-1 vs ToM-0``).
        episode: the episode's number within its condition.
    """
    rows, start = _episode_events(log, condition, episode)
    if not rows:
        raise KeyError(f"no episode {episode} of condition {condition!r} in this run log")
    after: dict[int, tuple[str, str]] = {}
    acted: dict[int, dict[str, str]] = {}
    for ev in rows:
        step, p = _step(ev.get("step")), ev.get("payload") or {}
        if step is None:
            continue
        if ev.get("kind") == "env_state" and len(p.get("joint_action") or ()) == 2 and step > 0:
            a, b = p["joint_action"]
            after[step - 1] = (str(a), str(b))
        elif ev.get("kind") == "action" and ev.get("agent") in SEAT_NAMES and "action" in p:
            acted.setdefault(step, {})[str(ev["agent"])] = str(p["action"])
    for step, both in acted.items():
        if step not in after and len(both) == 2:
            after[step] = (both[SEAT_NAMES[0]], both[SEAT_NAMES[1]])
    if not after:
        kept = start.get("detail_episodes")
        why = f" (the run logs the steps of its first {kept} episodes per condition)" if kept is not None else ""
        raise ValueError(
            f"episode {episode} of condition {condition!r} kept no steps in this run log{why}; play it again with the "
            "table function's detail_episodes= above its number to log them"
        )
    steps = sorted(after)
    if steps != list(range(len(steps))):
        missing = sorted(set(range(steps[-1] + 1)) - set(steps))
        raise ValueError(
            f"episode {episode} of condition {condition!r} lacks the joint actions of steps {missing[:5]} in this run "
            "log (a run killed mid-write?); replay needs every step"
        )
    return [after[s] for s in steps]


def logged_game(log: str | os.PathLike[str] | pd.DataFrame, condition: str, episode: int) -> LoggedGame:
    """The game spec of one episode (its first ``env_state``) and the run's seed (its ``run_start``), None where the
    log holds none (module docstring).

    Args:
        log: a run folder, its events file, or a frame from :func:`tomlib.trace.load_runs` (holding the run's
            ``run_start`` for the seed).
        condition: the condition's name in the log.
        episode: the episode's number within its condition.
    """
    rows, start = _episode_events(log, condition, episode)
    states = sorted(
        ((_step(ev.get("step")) or 0, ev.get("payload") or {}) for ev in rows if ev.get("kind") == "env_state"),
        key=lambda sp: sp[0],
    )
    spec = next((str(p["game"]) for _, p in states if isinstance(p.get("game"), str) and p["game"]), None)
    seed = start.get("seed")
    return LoggedGame(spec, int(seed) if isinstance(seed, int | float) and not isinstance(seed, bool) else None)
