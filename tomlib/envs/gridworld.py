"""Grid-world navigation, Games 1 and 2 (``adaptive-tom-aaai2026.txt`` §4.1, after Kleiman-Weiner et al. 2016).

Both players move at once (up, down, left, right, or stay). A player cannot leave the grid, walk into a wall
or enter the other player's goal (those moves are illegal). Two players cannot end a step on the same cell or
swap cells: when their moves conflict, neither moves. The episode ends when both stand on their goals; after
``max_steps`` (30) it is a failure and scores ``max_steps``. Score = steps used.

Our decision, documented in ``data/layouts/README.md``: "stay" is a legal move. The paper lists four moves;
without "stay" a player who must wait could only step back and forth, and an agent standing on its goal could
never rest there. The Overcooked case study's ToM-1 agent also "selects to stay" (§5.3).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import yaml

from tomlib.envs._base import Game, GameInfo, IllegalAction, check_preference
from tomlib.paths import data_dir

MOVES: dict[str, tuple[int, int]] = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1), "stay": (0, 0)}
Cell = tuple[int, int]
INF = 10**6


@dataclass(frozen=True)
class GridState:
    """Positions (row, column) of both players and the steps taken."""

    pos: tuple[Cell, Cell]
    t: int


@dataclass(frozen=True)
class Layout:
    """A map: walls, each player's start and goal."""

    name: str
    rows: tuple[str, ...]
    starts: tuple[Cell, Cell]
    goals: tuple[Cell, Cell]
    description: str

    @classmethod
    def parse(cls, name: str, grid: str, description: str = "") -> Layout:
        """Characters: ``#`` wall, ``.`` floor, ``1``/``2`` starts, ``a``/``b`` goals of players 1/2."""
        rows = tuple(line.strip() for line in grid.strip().splitlines())
        if len({len(r) for r in rows}) != 1:
            raise ValueError(f"layout {name}: rows have different lengths")
        found: dict[str, Cell] = {}
        for r, line in enumerate(rows):
            for c, ch in enumerate(line):
                if ch not in "#.12ab":
                    raise ValueError(f"layout {name}: unknown character {ch!r} at row {r}, column {c}")
                if ch in "12ab":
                    if ch in found:
                        raise ValueError(f"layout {name}: {ch!r} appears twice")
                    found[ch] = (r, c)
        missing = [ch for ch in "12ab" if ch not in found]
        if missing:
            raise ValueError(f"layout {name}: missing {missing} (needs starts 1, 2 and goals a, b)")
        return cls(name, rows, (found["1"], found["2"]), (found["a"], found["b"]), description)

    def floor(self, cell: Cell) -> bool:
        r, c = cell
        return 0 <= r < len(self.rows) and 0 <= c < len(self.rows[0]) and self.rows[r][c] != "#"

    @cached_property
    def cells(self) -> tuple[Cell, ...]:
        return tuple((r, c) for r in range(len(self.rows)) for c in range(len(self.rows[0])) if self.floor((r, c)))


def layouts_dir() -> Path:
    return data_dir() / "layouts"


def load_layout(name: str) -> Layout:
    """A layout from ``data/layouts/<name>.yaml``."""
    path = layouts_dir() / f"{name}.yaml"
    if not path.exists():
        known = sorted(p.stem for p in layouts_dir().glob("*.yaml"))
        raise FileNotFoundError(f"No grid layout '{name}' in {layouts_dir()}; known: {', '.join(known)}.")
    raw = yaml.safe_load(path.read_text())
    return Layout.parse(name, raw["grid"], raw.get("description", ""))


class GridWorld(Game):
    """Two players walk to their own goals without blocking each other."""

    def __init__(self, layout: str | Layout = "game1", max_steps: int = 30, prefer: str = "own"):
        """``prefer`` (:data:`tomlib.envs.PREFERENCES`): what formal agents prefer among equally good joint moves;
        ``own`` by default, each player's own goal (``adaptive-tom-aaai2026.txt`` l.197: "The goal is for both agents
        to reach their own target locations")."""
        self.layout = load_layout(layout) if isinstance(layout, str) else layout
        self.max_steps = int(max_steps)
        self.prefer = check_preference(prefer)
        self.params = {"layout": self.layout.name, "max_steps": self.max_steps, "prefer": self.prefer}
        self.info = GameInfo(
            name="grid",
            metric="time",
            better="lower",
            horizon=self.max_steps,
            worst=float(self.max_steps),
            description=f"Grid world {self.layout.name}: both players reach their goals; time in steps.",
        )

    # -- dynamics ------------------------------------------------------------------------------------
    def reset(self, seed: int | None = None) -> GridState:
        return GridState(pos=self.layout.starts, t=0)

    def _target(self, cell: Cell, action: str) -> Cell:
        dr, dc = MOVES[action]
        return (cell[0] + dr, cell[1] + dc)

    def _legal_from(self, cell: Cell, player: int) -> tuple[str, ...]:
        other_goal = self.layout.goals[1 - player]
        return tuple(
            a for a in MOVES if (t := self._target(cell, a)) == cell or (self.layout.floor(t) and t != other_goal)
        )

    def legal_actions(self, state: GridState, player: int) -> tuple[str, ...]:
        return () if self.is_terminal(state) else self._legal_from(state.pos[player], player)

    def _resolve(self, pos: tuple[Cell, Cell], joint: Sequence[str]) -> tuple[Cell, Cell]:
        t0, t1 = self._target(pos[0], joint[0]), self._target(pos[1], joint[1])
        if t0 == t1 or (t0 == pos[1] and t1 == pos[0]):
            return pos  # the same cell, or a swap: neither moves
        return (t0, t1)

    def step(self, state: GridState, joint: Sequence[str]) -> GridState:
        if self.is_terminal(state):
            raise IllegalAction("the episode is over")
        self.check_joint(state, joint)
        return GridState(pos=self._resolve(state.pos, joint), t=state.t + 1)

    def solved(self, state: GridState) -> bool:
        return state.pos == self.layout.goals

    def is_terminal(self, state: GridState) -> bool:
        return self.solved(state) or state.t >= self.max_steps

    def score(self, state: GridState) -> float:
        return float(state.t if self.solved(state) else self.max_steps if self.is_terminal(state) else state.t)

    # -- exact search ---------------------------------------------------------------------------------
    @cached_property
    def cost_to_go(self) -> dict[tuple[Cell, Cell], int]:
        """V*(positions): fewest joint steps until both stand on their goals (BFS over joint positions)."""
        cells = self.layout.cells
        preds: dict[tuple[Cell, Cell], set[tuple[Cell, Cell]]] = {}
        for p0 in cells:
            for p1 in cells:
                if p0 == p1:
                    continue
                for a0 in self._legal_from(p0, 0):
                    for a1 in self._legal_from(p1, 1):
                        nxt = self._resolve((p0, p1), (a0, a1))
                        preds.setdefault(nxt, set()).add((p0, p1))
        goal = self.layout.goals
        dist = {goal: 0}
        queue = deque([goal])
        while queue:
            cur = queue.popleft()
            for prev in preds.get(cur, ()):
                if prev not in dist:
                    dist[prev] = dist[cur] + 1
                    queue.append(prev)
        return dist

    def joint_value(self, state: GridState, joint: Sequence[str]) -> float:
        """Q = -(1 + V*(s')): minus the steps to finish if this joint move is followed by an optimal pair."""
        if self.solved(state):
            return 0.0
        nxt = self._resolve(state.pos, joint)
        return -(1.0 + self.cost_to_go.get(nxt, INF))

    @cached_property
    def own_distance(self) -> tuple[dict[Cell, int], dict[Cell, int]]:
        """Each player's shortest walk to its goal on the empty map (the partner ignored)."""
        out = []
        for player in (0, 1):
            goal = self.layout.goals[player]
            dist, queue = {goal: 0}, deque([goal])
            while queue:
                cur = queue.popleft()
                for a in MOVES:
                    nxt = self._target(cur, a)
                    if nxt not in dist and self.layout.floor(nxt) and nxt != self.layout.goals[1 - player]:
                        dist[nxt] = dist[cur] + 1
                        queue.append(nxt)
            out.append(dist)
        return out[0], out[1]

    def decision_key(self, state: GridState) -> tuple[tuple[Cell, Cell], bool]:
        """The positions and whether the episode is over: all the values and preferences read."""
        return state.pos, self.is_terminal(state)

    def preference(self, state: GridState, joint: Sequence[str], player: int) -> tuple[float, ...]:
        """Own progress is ending the step closer to one's own goal (``prefer``)."""
        if self.prefer == "none":
            return ()
        own = -float(self.own_distance[player].get(self._resolve(state.pos, joint)[player], INF))
        return self.preference_keys(self.prefer, own, joint[player])

    def environment_actions(self, state: GridState, player: int) -> tuple[str, ...]:
        """A ToM-0 agent treats its partner as a fixed part of the map: it stays where it is."""
        return ("stay",)

    # -- text -----------------------------------------------------------------------------------------
    def render(self, state: GridState) -> str:
        """The map with ``1``/``2`` for the players and ``a``/``b`` for their goals (a player hides its goal)."""
        out = []
        for r, line in enumerate(self.layout.rows):
            row = []
            for c, ch in enumerate(line):
                cell = (r, c)
                if cell == state.pos[0]:
                    row.append("1")
                elif cell == state.pos[1]:
                    row.append("2")
                elif cell == self.layout.goals[0]:
                    row.append("a")
                elif cell == self.layout.goals[1]:
                    row.append("b")
                else:
                    row.append("#" if ch == "#" else ".")
            out.append("".join(row))
        return "\n".join(out)

    def describe(self, state: GridState, player: int) -> str:
        me, other = player, 1 - player
        (r, c), (pr, pc) = state.pos[me], state.pos[other]
        (gr, gc), (qr, qc) = self.layout.goals[me], self.layout.goals[other]
        legal = self.legal_actions(state, player)
        return "\n".join(
            [
                f"Step {state.t + 1} (limit {self.max_steps}). You are Player {me + 1}. Map (row 0 at the top, "
                "column 0 at the left; # wall, . floor, 1/2 players, a/b goals of players 1/2):",
                self.render(state),
                f"You are at row {r}, column {c}; your goal is at row {gr}, column {gc}.",
                f"Your partner (Player {other + 1}) is at row {pr}, column {pc}; its goal is at row {qr}, column {qc}.",
                "Both of you move at the same time. You may not enter your partner's goal. If you both try to enter "
                "the same cell, or to swap cells, neither of you moves.",
                f"Legal actions: {', '.join(legal)}.",
            ]
        )
