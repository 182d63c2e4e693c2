"""Overcooked on the overcooked-ai library (``adaptive-tom-aaai2026.txt`` §4.1, after Carroll et al. 2019).

Two cooks share a kitchen: three onions go into the pot, the soup cooks for 20 steps, then someone carries it
in a dish to the delivery window. The metric is the number of steps until the first soup is delivered
(100, the step limit, on failure). The library's own transition function runs every step; we add one rule the
paper states and overcooked-ai 1.1.0 lacks: **the pot starts cooking by itself once it holds three onions**
("the pot automatically cooks three onions into soup over 20 time steps"), and so an empty-handed interact no
longer starts a pot with fewer than three onions, which overcooked-ai 1.1.0 allows.

Formal ToM-k agents value joint actions with an exact model of the one-soup task that leaves the counters out
(:mod:`tomlib.envs._kitchen`): Q(s, a_0, a_1) = -(1 + V*(s')), with V*(s') the fewest steps to the first delivery
from the next state when both cooks play optimally. A joint action that would set an item on a counter is valued
-inf (the task never needs one), so formal agents never do it. A state in which a partner has left items on the
counters is valued as if they were not there (an upper bound on the time still needed).
"""

from __future__ import annotations

import ast
import contextlib
import copy
import functools
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from tomlib.envs._base import Game, GameInfo, IllegalAction, check_preference
from tomlib.paths import data_dir

ACTION_NAMES = ("up", "down", "left", "right", "stay", "interact")
_ACTION_INDEX = {name: i for i, name in enumerate(ACTION_NAMES)}
FACING = {(0, -1): "up", (0, 1): "down", (-1, 0): "left", (1, 0): "right"}
TERRAIN = {
    "X": "a kitchen counter",
    "P": "the pot",
    "O": "an onion dispenser",
    "D": "a dish dispenser",
    "S": "the delivery window",
    " ": "the floor",
}


def overcooked_lib() -> Any:
    """overcooked-ai's ``actions`` and ``overcooked_mdp`` modules, imported quietly; a clear error if missing."""
    try:
        # overcooked-ai registers a gym env on import; gym then prints an "unmaintained" notice we already know
        with contextlib.redirect_stderr(io.StringIO()):
            from overcooked_ai_py.mdp import actions, overcooked_mdp
    except ImportError as exc:  # pragma: no cover - a dependency, but say what to do
        raise ImportError(f"Overcooked needs the overcooked-ai package ({exc}); reinstall with ./reproduce.sh") from exc
    return actions, overcooked_mdp


def _held(obj: Any) -> tuple[Any, ...] | None:
    if obj is None:
        return None
    soup = obj.name == "soup"
    return (
        obj.name,
        obj.position,
        tuple(obj.ingredients) if soup else (),
        obj._cooking_tick if soup else None,
        obj._cook_time if soup else None,
    )


def lib_key(lib: Any) -> tuple[Any, ...]:
    """An overcooked-ai state as a value, without its time step and orders: the cooks' cells, facings and held items
    and the objects on counters and in pots, with their ingredients and cooking ticks (all that the library's
    transition and ``featurize_state`` read, besides the time)."""
    players = tuple((p.position, p.orientation, _held(p.held_object)) for p in lib.players)
    return players, tuple(sorted((pos, _held(obj)) for pos, obj in lib.objects.items()))


_NEXT_LIMIT = 50_000  # next states kept per game before the memo starts over (~2.7 kB each: ~140 MB at most)


@dataclass(frozen=True, eq=False)
class KitchenState:
    """overcooked-ai's state plus our step counter and whether a soup has been delivered. Two are equal when their
    ``t``, ``delivered`` and ``key`` are."""

    lib: Any = field(repr=False)
    t: int
    delivered: bool
    mdp: Any = field(default=None, repr=False)

    @cached_property
    def key(self) -> str:
        """The library's picture of the state on one line, made when first asked for (most states never are)."""
        return " ".join(self.mdp.state_string(self.lib).split())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, KitchenState):
            return NotImplemented
        return (self.t, self.delivered, self.key) == (other.t, other.delivered, other.key)

    def __hash__(self) -> int:
        return hash((self.t, self.delivered, self.key))

    def __repr__(self) -> str:
        return f"KitchenState(t={self.t}, delivered={self.delivered}, {self.key})"


class _Kitchen:
    """What every game on one layout and cook time shares in a process, whatever its ``prefer`` and horizon: the
    library's gridworld, its planner (built in about a second) and the next states :meth:`OvercookedGame.step` keeps
    (the library's transition reads neither)."""

    def __init__(self, layout: str, text: str, cook_time: int) -> None:
        _, mdp_mod = overcooked_lib()
        spec = ast.literal_eval(text)
        self.grid = [row.strip() for row in spec.pop("grid").split("\n")]
        spec["layout_name"] = layout
        self.mdp = mdp_mod.OvercookedGridworld.from_grid(self.grid, spec, {"cook_time": cook_time})
        self.next_states: dict[Any, tuple[Any, bool]] = {}

    @cached_property
    def planner(self) -> Any:
        with contextlib.redirect_stderr(io.StringIO()):
            from overcooked_ai_py.planning.planners import NO_COUNTERS_PARAMS, MediumLevelActionManager

        with contextlib.redirect_stdout(io.StringIO()):  # it narrates its motion-planner cache
            return MediumLevelActionManager(self.mdp, NO_COUNTERS_PARAMS)


@functools.lru_cache(maxsize=8)
def _shared_kitchen(layout: str, text: str, cook_time: int) -> _Kitchen:
    return _Kitchen(layout, text, cook_time)


def _kitchen(layout: str, cook_time: int) -> _Kitchen:
    """The :class:`_Kitchen` of a layout, by its file's text (a test's or a user's data folder may hold another
    file of that name)."""
    path = data_dir() / "layouts" / f"{layout}.layout"
    if not path.exists():
        raise FileNotFoundError(f"No Overcooked layout '{layout}' ({path} is missing).")
    return _shared_kitchen(layout, path.read_text(), cook_time)


class OvercookedGame(Game):
    """Time to the first delivered onion soup, two players, on an overcooked-ai layout."""

    has_exact_values = True

    def __init__(
        self, layout: str = "overcooked_symmetric", horizon: int = 100, cook_time: int = 20, prefer: str = "none"
    ):
        """``prefer`` (:data:`tomlib.envs.PREFERENCES`): what formal cooks prefer among equally good joint actions;
        ``none`` by default: the cooks share one soup (``adaptive-tom-aaai2026.txt`` l.215, "two agents need to
        collaborate to cook and deliver onion soup"), so eq. 9's team value is all a cook weighs and the tie model
        draws among what it leaves equal."""
        self.prefer = check_preference(prefer)
        actions, mdp_mod = overcooked_lib()
        self._A = actions.Action
        self.layout_name = layout
        self.horizon = int(horizon)
        self.cook_time = int(cook_time)
        self._kitchen = _kitchen(layout, self.cook_time)
        self.mdp = self._kitchen.mdp
        # overcooked-ai keeps its recipes (their cook time) in one class per process, set by the gridworld made last:
        # each game sets it again, as making its own gridworld did
        mdp_mod.Recipe.configure(self.mdp.recipe_config)
        self.grid = self._kitchen.grid
        self.params = {"layout": layout, "horizon": self.horizon, "prefer": self.prefer}
        self.info = GameInfo(
            name="overcooked",
            metric="time",
            better="lower",
            horizon=self.horizon,
            worst=float(self.horizon),
            description=f"Overcooked ({layout}): steps to the first delivered onion soup.",
        )
        self._to_lib = {
            "up": actions.Direction.NORTH,
            "down": actions.Direction.SOUTH,
            "left": actions.Direction.WEST,
            "right": actions.Direction.EAST,
            "stay": actions.Action.STAY,
            "interact": actions.Action.INTERACT,
        }

    # -- dynamics ------------------------------------------------------------------------------------
    def _wrap(self, lib: Any, t: int, delivered: bool) -> KitchenState:
        return KitchenState(lib=lib, t=t, delivered=delivered, mdp=self.mdp)

    @property
    def planner(self) -> Any:
        """overcooked-ai's medium-level action manager for this layout (used by the Greedy partner), one per layout and
        cook time in a process."""
        return self._kitchen.planner

    def action_name(self, lib_action: Any) -> str:
        """Our name of an overcooked-ai action."""
        return next(name for name, a in self._to_lib.items() if a == lib_action)

    def reset(self, seed: int | None = None) -> KitchenState:
        return self._wrap(self.mdp.get_standard_start_state(), 0, False)

    def legal_actions(self, state: KitchenState, player: int) -> tuple[str, ...]:
        return () if self.is_terminal(state) else ACTION_NAMES

    def step(self, state: KitchenState, joint: Sequence[str]) -> KitchenState:
        """:meth:`transition`'s next state, kept per (:func:`lib_key`, joint action): episodes that reach the same
        state share the next one, whatever the step (the library's transition does not read its time step; the state
        given back carries this episode's). A state is never changed once made."""
        if self.is_terminal(state):
            raise IllegalAction("the episode is over")
        a0, a1 = self.check_joint(state, joint)
        memo = self._kitchen.next_states
        key = (lib_key(state.lib), a0, a1)
        got = memo.get(key)
        if got is not None:
            lib = copy.copy(got[0])  # the remembered state's players and objects, shared, at this episode's time
            lib.timestep = state.lib.timestep + 1
            return self._wrap(lib, state.t + 1, got[1])
        nxt = self.transition(state, joint)[0]
        if len(memo) >= _NEXT_LIMIT:
            memo.clear()
        memo[key] = (nxt.lib, nxt.delivered)
        return nxt

    def transition(self, state: KitchenState, joint: Sequence[str]) -> tuple[KitchenState, dict[str, Any]]:
        """:meth:`step`, plus the library's event record (``event_infos``, ``shaped_reward_by_agent``: its reward
        shaping for onions into the pot, dish and soup pickups), which self-play training reads."""
        if self.is_terminal(state):
            raise IllegalAction("the episode is over")
        a0, a1 = self.check_joint(state, joint)
        lib_joint = tuple(
            self._to_lib["stay"] if self._starts_partial(state, p, a) else self._to_lib[a]
            for p, a in enumerate((a0, a1))
        )
        nxt, info = self.mdp.get_state_transition(state.lib, lib_joint)
        delivered = any(info["event_infos"]["soup_delivery"])
        for obj in nxt.objects.values():  # the paper's pot starts cooking by itself when full
            if obj.name == "soup" and obj.is_full and obj.is_idle:
                obj.begin_cooking()
        return self._wrap(nxt, state.t + 1, delivered), info

    def _starts_partial(self, state: KitchenState, player: int, action: str) -> bool:
        """An empty-handed interact at a pot holding fewer than three onions: overcooked-ai 1.1.0 starts cooking it
        (a one-onion soup, delivered, ends the episode); the paper's pot cooks three onions, so here it does nothing."""
        if action != "interact":
            return False
        p = state.lib.players[player]
        facing = (p.position[0] + p.orientation[0], p.position[1] + p.orientation[1])
        soup = state.lib.objects.get(facing)
        return p.held_object is None and soup is not None and soup.name == "soup" and soup.is_idle and not soup.is_full

    def is_terminal(self, state: KitchenState) -> bool:
        return state.delivered or state.t >= self.horizon

    def score(self, state: KitchenState) -> float:
        return float(state.t if state.delivered else self.horizon if self.is_terminal(state) else state.t)

    # -- ToM reasoning -----------------------------------------------------------------------------
    @cached_property
    def exact(self) -> tuple[Any, dict[Any, int], Any]:
        """The exact one-soup model (no counters), its reachable states and V* (solved once per process, ~5 s)."""
        from tomlib.envs._kitchen import solved

        return solved(tuple(self.grid), self.compact(self.reset(0)), self.cook_time)

    @cached_property
    def _solo(self) -> Any:
        """Each cook's own progress in every state of the exact model (solved once per process)."""
        from tomlib.envs._kitchen import solo_steps

        return solo_steps(tuple(self.grid), self.compact(self.reset(0)), self.cook_time)

    @cached_property
    def _floor(self) -> dict[tuple[int, int], int]:
        """Floor cells (start cells included) in the exact model's order."""
        cells = [(x, y) for y, r in enumerate(self.grid) for x, c in enumerate(r) if c == " " or c.isdigit()]
        return {xy: i for i, xy in enumerate(cells)}

    def compact(self, state: KitchenState) -> tuple[int, ...]:
        """The state as the exact model sees it: cells, facings, held items and the pot (counters left out)."""
        from tomlib.envs._kitchen import COOKING, DIRS, ITEMS

        floor = self._floor
        out: list[int] = []
        for p in state.lib.players:
            held = p.held_object.name if p.held_object is not None else "nothing"
            out += [floor[p.position], DIRS.index(p.orientation), ITEMS.index(held)]
        soup = state.lib.objects.get(self._features["pot"][0])
        if soup is None:
            pot = 0
        elif soup.is_idle:
            pot = len(soup.ingredients)
        else:
            pot = COOKING + min(soup._cooking_tick, self.cook_time)  # the library keeps the tick private
        return (*out, pot)

    @cached_property
    def _moves(self) -> Any:
        """The exact model's transition table (``nxt[state, a0 * 6 + a1]``), solved with V* once per process."""
        from tomlib.envs._kitchen import transitions

        return transitions(tuple(self.grid), self.compact(self.reset(0)), self.cook_time)

    def _compact_of(self, state: KitchenState) -> tuple[int, ...]:
        """:meth:`compact`, kept for the state last asked about (a decision asks about one state many times)."""
        last = self.__dict__.get("_last_compact")
        if last is not None and last[0] is state:
            return last[1]
        here = self.compact(state)
        self.__dict__["_last_compact"] = (state, here)
        return here

    def decision_key(self, state: KitchenState) -> tuple[bool, bool, tuple[int, ...]]:
        """Whether the episode is over, whether the soup is delivered, and the exact model's view of the state."""
        return self.is_terminal(state), state.delivered, self._compact_of(state)

    def _model_next(self, state: KitchenState, joint: Sequence[str]) -> int | None:
        """The exact model's next state index for ``joint`` (or OUT / DELIVERED); None for a state outside the
        model's reachable set (the table answers the states it holds, one row kept for the state last asked about: a
        decision values one state under every joint action; the step function answers the rest)."""
        from tomlib.envs._kitchen import DELIVERED, OUT

        a = _ACTION_INDEX[joint[0]] * len(ACTION_NAMES) + _ACTION_INDEX[joint[1]]
        last = self.__dict__.get("_last_row")
        if last is None or last[0] is not state:
            k = self.exact[1].get(self._compact_of(state))
            last = self.__dict__["_last_row"] = (state, None if k is None else self._moves[k].tolist())
        if last[1] is not None:
            return last[1][a]  # type: ignore[no-any-return]
        kitchen, index, _ = self.exact
        nxt = kitchen.step(self._compact_of(state), divmod(a, len(ACTION_NAMES)))  # type: ignore[arg-type]
        return nxt if nxt in (DELIVERED, OUT) else index.get(nxt)  # type: ignore[return-value]

    def joint_value(self, state: KitchenState, joint: Sequence[str]) -> float:
        """Q = -(1 + V*(s')) in the exact one-soup model; -inf for setting an item on a counter (see the module)."""
        from tomlib.envs._kitchen import DELIVERED, OUT, UNREACHABLE

        if state.delivered:
            return 0.0
        k = self._model_next(state, joint)
        if k == DELIVERED:
            return -1.0
        if k == OUT:
            return float("-inf")
        v = int(self.exact[2][k]) if k is not None else UNREACHABLE
        return -(1.0 + (v if v < UNREACHABLE else 10 * self.horizon))

    def preference(self, state: KitchenState, joint: Sequence[str], player: int) -> tuple[float, ...]:
        """Own progress (``prefer``): the fewest steps in which this cook alone could deliver the soup from the next
        state, its partner standing still (:func:`tomlib.envs._kitchen.solo_steps`); the fewer the better."""
        if self.prefer == "none" or state.delivered:
            return ()
        from tomlib.envs._kitchen import DELIVERED, OUT, UNREACHABLE

        k = self._model_next(state, joint)
        if k == DELIVERED:
            own = 0.0
        elif k == OUT or k is None:
            own = -float(UNREACHABLE)
        else:
            own = -float(self._solo[player][k])
        return self.preference_keys(self.prefer, own, joint[player])

    def environment_actions(self, state: KitchenState, player: int) -> tuple[str, ...]:
        """A ToM-0 cook treats its partner as a fixed part of the kitchen: it stays where it is."""
        return ("stay",)

    # -- text -----------------------------------------------------------------------------------------
    @cached_property
    def _features(self) -> dict[str, list[tuple[int, int]]]:
        m = self.mdp
        return {
            "pot": m.get_pot_locations(),
            "onion dispenser": m.get_onion_dispenser_locations(),
            "dish dispenser": m.get_dish_dispenser_locations(),
            "delivery window": m.get_serving_locations(),
        }

    def render(self, state: KitchenState) -> str:
        """The map with 1/2 for the cooks (their held item in the description, not here)."""
        rows = [list(r) for r in self.grid]
        for i, p in enumerate(state.lib.players):
            x, y = p.position
            rows[y][x] = str(i + 1)
        return "\n".join("".join(r) for r in rows)

    def status(self, state: KitchenState) -> str:
        """Held items, the pot and the counters, for replays (the map shows only positions)."""
        held = "; ".join(f"cook {i + 1} holds {self._holding(p)}" for i, p in enumerate(state.lib.players))
        counters = [f"({x},{y}) {o.name}" for (x, y), o in state.lib.objects.items() if self.grid[y][x] == "X"]
        return f"step {state.t}: {held}. {self._pot_text(state)}" + (
            f" Counters: {', '.join(counters)}." if counters else ""
        )

    def _holding(self, player: Any) -> str:
        obj = player.held_object
        if obj is None:
            return "nothing"
        if obj.name == "soup":
            return "a dish of onion soup"
        return {"onion": "an onion", "dish": "an empty dish"}.get(obj.name, f"a {obj.name}")

    def _pot_text(self, state: KitchenState) -> str:
        parts = []
        for pos in self._features["pot"]:
            soup = state.lib.objects.get(pos)
            where = f"column {pos[0]}, row {pos[1]}"
            if soup is None:
                parts.append(f"The pot ({where}) is empty; it needs 3 onions.")
            elif soup.is_ready:
                parts.append(f"The pot ({where}) holds finished soup: bring an empty dish to pick it up.")
            elif soup.is_cooking:
                parts.append(f"The pot ({where}) is cooking; the soup is ready in {soup.cook_time_remaining} steps.")
            else:
                parts.append(f"The pot ({where}) holds {len(soup.ingredients)} of 3 onions; it starts cooking at 3.")
        return " ".join(parts)

    def _interact_text(self, state: KitchenState, player: int) -> str:
        p = state.lib.players[player]
        fx, fy = p.position[0] + p.orientation[0], p.position[1] + p.orientation[1]
        what = TERRAIN.get(self.grid[fy][fx], "something") if 0 <= fy < len(self.grid) else "nothing"
        return f"You are facing {what} (column {fx}, row {fy}); interact acts on it."

    def describe(self, state: KitchenState, player: int) -> str:
        me, other = state.lib.players[player], state.lib.players[1 - player]
        counters = [
            f"column {x}, row {y}: {o.name}" for (x, y), o in state.lib.objects.items() if self.grid[y][x] == "X"
        ]
        places = "; ".join(
            f"{name}: " + ", ".join(f"column {x} row {y}" for x, y in locs) for name, locs in self._features.items()
        )
        return "\n".join(
            [
                f"Step {state.t + 1} (limit {self.horizon}). You are cook {player + 1} in a kitchen. Goal: deliver one "
                "onion soup as fast as possible. Put 3 onions in the pot; it then cooks for "
                f"{self.cook_time} steps; take the soup out with an empty dish and bring it to the delivery window.",
                "Map (row 0 at the top; X counter, P pot, O onions, D dishes, S delivery window, 1/2 cooks):",
                self.render(state),
                f"Places: {places}.",
                f"You are at column {me.position[0]}, row {me.position[1]}, facing {FACING[me.orientation]}, "
                f"holding {self._holding(me)}.",
                f"Your partner (cook {2 - player}) is at column {other.position[0]}, row {other.position[1]}, "
                f"facing {FACING[other.orientation]}, holding {self._holding(other)}.",
                self._pot_text(state),
                "Items on counters: " + ("; ".join(counters) if counters else "none") + ".",
                self._interact_text(state, player),
                "up/down/left/right move one cell, or turn to face that way if the cell is blocked; two cooks cannot "
                "share a cell. interact picks up or puts down what you face. stay does nothing.",
                f"Legal actions: {', '.join(self.legal_actions(state, player))}.",
            ]
        )
