"""An exact model of the one-soup Overcooked task: both cooks, the pot, no counters; the value of every state.

The kitchen's full joint state (two cooks' cells, facings and held items, the pot, and four counters that may each
hold an item) is too large to solve here, but the task never needs a counter: nothing has to be set down to cook
and deliver one soup. So the model leaves the counters out. A joint action that would put an item on a counter
leaves the model (its value is -inf, so a formal agent never chooses it); every other joint action follows
overcooked-ai 1.1.0's transition exactly (interacts in player order, then movement with its collision rule, then
the cooking tick), plus the paper's rule that a full pot starts cooking by itself. ``tests/envs`` replays random
joint actions through both and compares every step.

A state is a tuple ``(pos0, facing0, held0, pos1, facing1, held1, pot)`` of small integers: a cell index into the
floor cells, a direction index, a held item (none, onion, dish, soup) and the pot (0-2 onions, then
``COOKING + tick`` while it cooks, then ``READY``). :func:`solve` enumerates every state reachable from the start
and computes V*(s), the fewest steps to the first delivery with both cooks playing optimally, by value iteration
over a transition table held in numpy.

Solving takes about 5 s (132,664 states from the symmetric kitchen's start) and is done once per process; the
solved model is kept in ``.tomlib/cache/kitchen-<hash>.npz`` (``TOMLIB_CACHE`` moves it), keyed by the layout, start,
cook time and this module's own source, written through a temporary file and a rename; a damaged or foreign file is
solved again. ``KitchenState.key`` is overcooked-ai's state string, which leaves out facings and the cooking tick:
never cache by it. With counters the model would have about 49 million states, out of reach here.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import itertools
import os
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

DIRS = ((0, -1), (0, 1), (-1, 0), (1, 0))  # up, down, left, right, as (dx, dy)
ACTIONS = ("up", "down", "left", "right", "stay", "interact")
NOTHING, ONION, DISH, SOUP = 0, 1, 2, 3
ITEMS = ("nothing", "onion", "dish", "soup")
COOKING = 3  # pot values 0-2: onions in an idle pot; COOKING + tick while cooking; READY when done
UNREACHABLE = np.iinfo(np.int32).max
OUT = -1  # a joint action that leaves the model (an item set on a counter)
DELIVERED = -2  # a joint action that delivers the soup

State = tuple[int, int, int, int, int, int, int]


@dataclass
class Kitchen:
    """The one-soup task on a layout with one pot: terrain, floor cells, the start, and the cook time."""

    grid: Sequence[str]
    start: State
    cook_time: int = 20
    floor: list[tuple[int, int]] = field(init=False)

    def __post_init__(self) -> None:
        self.grid = ["".join(" " if ch.isdigit() else ch for ch in row) for row in self.grid]  # start cells are floor
        self.floor = [(x, y) for y, row in enumerate(self.grid) for x, ch in enumerate(row) if ch == " "]
        self.cell = {xy: i for i, xy in enumerate(self.floor)}
        pots = [(x, y) for y, row in enumerate(self.grid) for x, ch in enumerate(row) if ch == "P"]
        if len(pots) != 1:
            raise ValueError(f"the exact kitchen model needs a layout with one pot; this one has {len(pots)}")
        self.ready = COOKING + self.cook_time

    def terrain(self, x: int, y: int) -> str:
        return self.grid[y][x] if 0 <= y < len(self.grid) and 0 <= x < len(self.grid[y]) else "#"

    # -- one step, as overcooked-ai takes it ------------------------------------------------------------------
    def _interact(self, cell: int, facing: int, held: int, pot: int) -> tuple[int, int] | int:
        """(held, pot) after one cook interacts, or OUT / DELIVERED."""
        x, y = self.floor[cell]
        dx, dy = DIRS[facing]
        kind = self.terrain(x + dx, y + dy)
        if kind == "X":
            return OUT if held != NOTHING else (held, pot)  # counters stay empty, so an empty hand finds nothing
        if kind == "O" and held == NOTHING:
            return ONION, pot
        if kind == "D" and held == NOTHING:
            return DISH, pot
        if kind == "P":
            if held == DISH and pot == self.ready:
                return SOUP, 0
            if held == ONION and pot < COOKING:
                return NOTHING, pot + 1  # the third makes COOKING (tick 0): the paper's pot starts by itself
        if kind == "S" and held == SOUP:
            return DELIVERED
        return held, pot

    def _move(self, cell: int, facing: int, action: int) -> tuple[int, int]:
        if action > 3:
            return cell, facing
        x, y = self.floor[cell]
        dx, dy = DIRS[action]
        return self.cell.get((x + dx, y + dy), cell), action

    def step(self, s: State, joint: tuple[int, int]) -> State | int:
        """The next state, or OUT / DELIVERED."""
        c0, f0, h0, c1, f1, h1, pot = s
        held = [h0, h1]
        for p, (c, f) in enumerate(((c0, f0), (c1, f1))):
            if joint[p] == 5:
                got = self._interact(c, f, held[p], pot)
                if isinstance(got, int):
                    return got
                held[p], pot = got
        just_full = pot == COOKING and s[6] < COOKING  # the third onion: full and idle until the step ends
        (n0, g0), (n1, g1) = self._move(c0, f0, joint[0]), self._move(c1, f1, joint[1])
        if n0 == n1 or (n0 == c1 and n1 == c0):  # the same cell, or a swap: both stay (facing still turns)
            n0, n1 = c0, c1
        if COOKING <= pot < self.ready and not just_full:  # the cooking tick; a pot filled now starts at tick 0
            pot += 1
        return (n0, g0, held[0], n1, g1, held[1], pot)


def solve(kitchen: Kitchen) -> tuple[dict[State, int], np.ndarray, np.ndarray]:
    """Every state reachable from the start (index), the transition table ``nxt[i, a0 * 6 + a1]`` (a state index,
    OUT or DELIVERED) and V*: the fewest steps to the first delivery (UNREACHABLE if none)."""
    index: dict[State, int] = {kitchen.start: 0}
    order: list[State] = [kitchen.start]
    rows: list[list[int]] = []
    joints = list(itertools.product(range(6), repeat=2))
    i = 0
    while i < len(order):
        s = order[i]
        row = []
        for j in joints:
            t = kitchen.step(s, j)
            if isinstance(t, tuple):
                k = index.get(t)
                if k is None:
                    k = index[t] = len(order)
                    order.append(t)
                row.append(k)
            else:
                row.append(t)
        rows.append(row)
        i += 1
    nxt = np.array(rows, dtype=np.int32)
    return index, nxt, steps_to_delivery(nxt)


def steps_to_delivery(nxt: np.ndarray) -> np.ndarray:
    """The fewest steps from each state to the first delivery when the joint action is chosen among ``nxt``'s
    columns (value iteration over the transition table; UNREACHABLE where none delivers)."""
    value = np.full(len(nxt), UNREACHABLE, dtype=np.int64)
    value[(nxt == DELIVERED).any(axis=1)] = 1
    targets = np.where(nxt >= 0, nxt, 0)
    while True:
        follow = np.where(nxt >= 0, value[targets], UNREACHABLE)
        best = np.minimum(value, np.where(follow.min(axis=1) < UNREACHABLE, follow.min(axis=1) + 1, UNREACHABLE))
        if np.array_equal(best, value):
            return value
        value = best


def _solo(nxt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`solo_steps` from the transition table."""
    stay = ACTIONS.index("stay")
    alone = (
        [a * len(ACTIONS) + stay for a in range(len(ACTIONS))],  # cook 0 moves, cook 1 stays
        [stay * len(ACTIONS) + a for a in range(len(ACTIONS))],
    )
    return steps_to_delivery(nxt[:, alone[0]]), steps_to_delivery(nxt[:, alone[1]])


_ARRAYS = ("states", "nxt", "value", "solo0", "solo1")


def _cache_path(grid: tuple[str, ...], start: State, cook_time: int) -> Path | None:
    """The cache file of a solved kitchen: named by a hash of the layout, start and cook time and of this module's
    source, so a change to the model is never answered from an old file. None when the source cannot be read, or when
    the cache folder is not this user's alone (a kitchen planted there would decide Table 3's cells): then the kitchen
    is solved here, with a warning naming the fix."""
    from tomlib.errors import UnsafeLocation, UsageError
    from tomlib.paths import cache_dir, private_dir

    try:
        source = Path(__file__).read_bytes()
        folder = private_dir(cache_dir(), parents=True, instead="set TOMLIB_CACHE to a folder of yours")
    except UnsafeLocation as exc:
        warnings.warn(f"The solved kitchen is not cached: {exc}", stacklevel=3)
        return None
    except (OSError, UsageError):  # a folder that cannot be made only costs the solve
        return None
    digest = hashlib.sha256(repr((tuple(grid), tuple(start), int(cook_time))).encode() + b"\0" + source)
    return folder / f"kitchen-{digest.hexdigest()[:32]}.npz"


def _load(path: Path, start: State) -> tuple[dict[State, int], np.ndarray, np.ndarray, tuple[np.ndarray, ...]] | None:
    """A solved kitchen from ``path``; None when it is missing, partial, does not fit ``start``, or is not a file this
    user wrote (:func:`tomlib.paths.read_own`)."""
    from tomlib.paths import read_own

    try:
        raw = read_own(path)
        if raw is None:
            return None
        with np.load(io.BytesIO(raw), allow_pickle=False) as z:
            states, nxt, value, solo0, solo1 = (z[name] for name in _ARRAYS)
    except Exception:  # missing, truncated, not an npz, a key missing: solve again
        return None
    n = len(states)
    if (
        n == 0
        or states.shape != (n, len(start))
        or nxt.shape != (n, len(ACTIONS) ** 2)
        or any(a.shape != (n,) for a in (value, solo0, solo1))
        or tuple(states[0].tolist()) != tuple(start)
    ):
        return None
    index = dict(zip(map(tuple, states.tolist()), range(n), strict=True))
    if len(index) != n:
        return None
    return index, nxt.astype(np.int32, copy=False), value, (solo0, solo1)  # type: ignore[return-value]


def _store(
    path: Path, index: dict[State, int], nxt: np.ndarray, value: np.ndarray, solo: tuple[np.ndarray, ...]
) -> None:
    """Write a solved kitchen to ``path`` whole or not at all (a temporary file, then an atomic rename), so parallel
    readers never see half a file; a cache folder that cannot be written is skipped silently."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp", delete=False) as f:
            tmp = f.name
            states = np.array(list(index), dtype=np.int32)
            np.savez(f, states=states, nxt=nxt, value=value, solo0=solo[0], solo1=solo[1])
        os.replace(tmp, path)
    except OSError:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


@functools.lru_cache(maxsize=4)
def _solved(
    grid: tuple[str, ...], start: State, cook_time: int
) -> tuple[Kitchen, dict[State, int], np.ndarray, np.ndarray, tuple[np.ndarray, ...] | None]:
    """The kitchen, its index, transition table, V* and (when read from or written to the disk cache) the solo
    steps: from the cache when it holds them, else solved and cached."""
    kitchen = Kitchen(grid, start, cook_time)
    path = _cache_path(grid, start, cook_time)
    got = _load(path, start) if path is not None else None
    if got is not None:
        index, nxt, value, solo = got
        return kitchen, index, nxt, value, solo
    index, nxt, value = solve(kitchen)
    solo = None
    if path is not None:
        solo = _solo(nxt)
        _store(path, index, nxt, value, solo)
    return kitchen, index, nxt, value, solo


def solved(grid: tuple[str, ...], start: State, cook_time: int) -> tuple[Kitchen, dict[State, int], np.ndarray]:
    """The kitchen, its state index and V*, solved once for a layout, start and cook time and kept on disk
    (:func:`tomlib.paths.cache_dir`), so other processes read it instead of solving it again."""
    kitchen, index, _, value, _ = _solved(grid, start, cook_time)
    return kitchen, index, value


def transitions(grid: tuple[str, ...], start: State, cook_time: int) -> np.ndarray:
    """The transition table of :func:`solve` for a layout, start and cook time (solved once, see :func:`solved`)."""
    return _solved(grid, start, cook_time)[2]


@functools.lru_cache(maxsize=4)
def solo_steps(grid: tuple[str, ...], start: State, cook_time: int) -> tuple[np.ndarray, np.ndarray]:
    """Per cook, the fewest steps in which it alone delivers the soup from each state, its partner standing still
    where it is with what it holds (UNREACHABLE where it cannot): a cook's own progress."""
    _, _, nxt, _, solo = _solved(grid, start, cook_time)
    return (solo[0], solo[1]) if solo is not None else _solo(nxt)
