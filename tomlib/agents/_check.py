"""A conformance check for an agent (after PettingZoo's ``api_test``): what every agent must do to play in the
adaptive-ToM games, checked against the formal ToM-0/1/2 partners in both seats of each task.

The five checks (:data:`CHECKS`):

- ``legal_actions``: every decision is a :class:`Decision` whose action is one of ``game.legal_actions(state,
  seat)``, in the states the partners lead to and in states off their paths (random legal rollouts fed to ``act``);
  ``act``, ``start_episode`` and ``observe`` raise nothing.
- ``determinism``: two fresh agents on the same seed choose the same actions (all randomness from ``self.rng``).
- ``no_shared_state``: an agent that played seed s1 first plays s2 as a fresh agent does, and two agents playing side
  by side, step by step, do not change each other's choices (class attributes are shared by every instance).
- ``no_blocking``: ``act`` is a coroutine that never holds the event loop longer than ``block_limit_s`` (a
  heartbeat task measures it) and answers within ``act_timeout_s``.
- ``episode_end``: an episode ends within the game's horizon and within ``episode_limit_s`` of wall time.

A check that cannot be judged because another failed (a nondeterministic agent cannot show carried state) is
``skip``, with the reason. Each failure is one line: the check, task, seat, partner, seed, step, what happened and the
fix; the first failure of each (check, task) is kept, with a count of the others.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tomlib.agents._base import SEATS, Agent, Decision, Site, no_emit
from tomlib.agents._episode import wrong_decision
from tomlib.agents._load import AgentSpecError, _one_line, agent_factory, display_name
from tomlib.agents.formal import FormalToMAgent
from tomlib.envs import TASKS, Game, rng_for, shared_game
from tomlib.errors import UsageError

CHECKS = ("legal_actions", "determinism", "no_shared_state", "no_blocking", "episode_end")
PARTNER_ORDERS = (0, 1, 2)
FIXES = {
    "legal_actions": "return Decision(action) with an action from game.legal_actions(state, self.player), in every "
    "state a game can reach",
    "determinism": "draw every random choice from self.rng (set by start_episode), never from random's or numpy's "
    "global streams, the clock or id()",
    "no_shared_state": "keep memory on the instance and reset it in start_episode (after super().start_episode); a "
    "class attribute is shared by every instance",
    "no_blocking": "make act async and await slow work (asyncio.to_thread for computing or blocking I/O, an async "
    "client for a model) instead of blocking the event loop",
    "episode_end": "answer faster: an episode must end within the game's horizon and the wall-clock limit",
}


@dataclass(frozen=True)
class CheckFailure:
    """One failure: where it happened, what happened and how to fix it."""

    check: str
    task: str
    what: str
    seat: int | None = None
    partner: str = ""
    seed: int | None = None
    step: int | None = None
    fix: str = ""

    def line(self) -> str:
        """The failure in one line."""
        where = [f"task {self.task}"]
        if self.seat is not None:
            where.append(f"seat {SEATS[self.seat]}" + (f" vs {self.partner}" if self.partner else ""))
        if self.seed is not None:
            where.append(f"seed {self.seed}")
        if self.step is not None:
            where.append(f"step {self.step}")
        return f"{self.check} ({', '.join(where)}): {self.what}. Fix: {self.fix or FIXES[self.check]}"


@dataclass
class AgentCheck:
    """What :func:`check_agent` found: a verdict per (check, task), the failures and how long each task took."""

    agent: str
    tasks: tuple[str, ...]
    verdicts: dict[tuple[str, str], str] = field(default_factory=dict)
    """(check, task) -> ``pass``, ``FAIL`` or ``skip``."""
    failures: list[CheckFailure] = field(default_factory=list)
    """The first failure of each failing (check, task)."""
    more: dict[tuple[str, str], int] = field(default_factory=dict)
    """(check, task) -> how many further failures were like the one kept."""
    skipped: dict[tuple[str, str], str] = field(default_factory=dict)
    """(check, task) -> why it was not judged."""
    seconds: dict[str, float] = field(default_factory=dict)
    """Wall time per task."""

    @property
    def passed(self) -> bool:
        """Whether no check failed."""
        return "FAIL" not in self.verdicts.values()

    def failed(self, check: str | None = None, task: str | None = None) -> list[CheckFailure]:
        """The failures kept, of one check and/or task."""
        return [f for f in self.failures if check in (None, f.check) and task in (None, f.task)]

    def failing_checks(self) -> set[str]:
        """The checks that failed in some task."""
        return {c for (c, _), v in self.verdicts.items() if v == "FAIL"}

    def table(self) -> str:
        """The verdicts as a text table, a row per check and a column per task."""
        width = max(len(c) for c in CHECKS) + 2
        cols = [max(len(t), 4) + 2 for t in self.tasks]
        rows = ["check".ljust(width) + "".join(t.ljust(w) for t, w in zip(self.tasks, cols, strict=True))]
        for c in CHECKS:
            cells = [self.verdicts.get((c, t), "skip").ljust(w) for t, w in zip(self.tasks, cols, strict=True)]
            rows.append(c.ljust(width) + "".join(cells))
        return "\n".join(r.rstrip() for r in rows)

    def lines(self) -> list[str]:
        """Each failure in one line (with how many more were like it), then why a check was skipped."""
        out = []
        for f in self.failures:
            more = self.more.get((f.check, f.task), 0)
            out.append("FAIL " + f.line() + (f" ({more} more like it in {f.task})" if more else ""))
        out += [f"skip {c} ({t}): {why}" for (c, t), why in self.skipped.items() if self.verdicts.get((c, t)) == "skip"]
        return out

    def __str__(self) -> str:
        timing = ", ".join(f"{t} {s:.1f} s" for t, s in self.seconds.items())
        n_fail = sum(v == "FAIL" for v in self.verdicts.values())
        failed = f"{n_fail} of {len(self.verdicts)} checks failed"
        head = f"{self.agent}: " + ("every check passed" if self.passed else failed)
        return "\n".join([head + f" ({timing})", self.table(), *self.lines()])


class _Aborted(Exception):
    """A task's remaining runs cannot be judged (an ``act`` that never answered)."""


class _Heartbeat:
    """A task that wakes every ``tick`` seconds; the longest gap between its wake-ups (or the edges of one ``act``
    call) is how long that call held the event loop."""

    def __init__(self, tick: float) -> None:
        self.tick, self.last, self.worst = tick, time.perf_counter(), 0.0
        self.task: asyncio.Task[None] | None = None

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(self.tick)
            now = time.perf_counter()
            self.worst, self.last = max(self.worst, now - self.last), now

    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._beat())

    def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def begin(self) -> None:
        self.last, self.worst = time.perf_counter(), 0.0

    def end(self) -> float:
        return max(self.worst, time.perf_counter() - self.last)


def _class_state(cls: type) -> dict[str, str]:
    """The class-level data of ``cls`` and its bases (no methods or descriptors), as text to compare."""
    out = {}
    for klass in cls.__mro__:
        if klass is object:
            continue
        for key, value in vars(klass).items():
            if key.startswith("__") or callable(value) or isinstance(value, staticmethod | classmethod | property):
                continue
            try:
                out[f"{klass.__qualname__}.{key}"] = repr(value)
            except Exception:  # a repr that fails says nothing either way
                continue
    return out


def _first_difference(a: Sequence[Any], b: Sequence[Any]) -> int | None:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


class _TaskCheck:
    """The checks of one task: the partners, both seats, the seeds, and the probes off the partners' paths."""

    def __init__(self, result: AgentCheck, make: Callable[[], Agent], task: str, game: Game, options: dict[str, Any]):
        self.result, self.make, self.task, self.game = result, make, task, game
        self.seeds: tuple[int, ...] = options["seeds"]
        self.block_limit_s: float = options["block_limit_s"]
        self.act_timeout_s: float = options["act_timeout_s"]
        self.episode_limit_s: float = options["episode_limit_s"]
        self.beat = _Heartbeat(min(0.01, self.block_limit_s / 10))
        self.judged: dict[str, list[str]] = {c: [] for c in CHECKS}  # each check's verdicts in this task
        self.cls = type(make())

    # -- verdicts ---------------------------------------------------------------------------------------------------
    def fail(self, check: str, what: str, **where: Any) -> None:
        self.judged[check].append("FAIL")
        key = (check, self.task)
        if self.result.failed(check, self.task):
            self.result.more[key] = self.result.more.get(key, 0) + 1
        else:
            self.result.failures.append(CheckFailure(check, self.task, what, **where))

    def verdict(self, check: str, ok: bool | None, why: str = "") -> None:
        """``ok`` True: a pass; None: not judged (``why``)."""
        if ok is None:
            self.judged[check].append("skip")
            self.result.skipped.setdefault((check, self.task), why)
        elif ok:
            self.judged[check].append("pass")

    def close(self, aborted: str = "") -> None:
        for check, got in self.judged.items():
            if "FAIL" in got:
                verdict = "FAIL"
            elif "pass" in got and not aborted:
                verdict = "pass"
            else:
                verdict = "skip"
                self.result.skipped.setdefault((check, self.task), aborted or "nothing to judge")
            self.result.verdicts[(check, self.task)] = verdict

    # -- one agent's calls, each checked ----------------------------------------------------------------------------
    def fresh(self) -> Agent:
        return self.make()

    async def call_act(self, agent: Agent, state: Any, where: dict[str, Any]) -> tuple[Any, bool]:
        """The agent's decision in ``state`` (None when ``act`` raised) and whether the call went well: a legal
        Decision, from a coroutine that neither held the event loop too long nor took too long."""
        ok = True
        self.beat.begin()
        try:
            act = agent.act(state)
            if inspect.isawaitable(act):
                decision = await asyncio.wait_for(act, self.act_timeout_s)
            else:
                decision, ok = act, False
                what = f"act returned a {type(act).__name__}, not a coroutine: define it with `async def act`"
                self.fail("no_blocking", what, **where)
        except TimeoutError:
            self.fail("no_blocking", f"act did not answer within {self.act_timeout_s:g} s", **where)
            raise _Aborted(f"not judged: act did not answer within {self.act_timeout_s:g} s") from None
        except Exception as exc:
            self.fail("legal_actions", f"act raised {_one_line(exc)}", **where)
            return None, False
        held = self.beat.end()
        if held > self.block_limit_s:
            what = f"one act call held the event loop for {held:.2f} s (limit {self.block_limit_s:g} s)"
            self.fail("no_blocking", what, **where)
            ok = False
        elif ok:
            self.judged["no_blocking"].append("pass")
        why = wrong_decision(self.game, state, where["seat"], decision)
        if why:
            self.fail("legal_actions", why, **where)
            return decision, False
        self.judged["legal_actions"].append("pass")
        return decision, ok

    def guarded(self, what: str, call: Callable[[], Any], where: dict[str, Any]) -> bool:
        try:
            call()
        except Exception as exc:
            self.fail("legal_actions", f"{what} raised {_one_line(exc)}", **where)
            return False
        return True

    # -- episodes -----------------------------------------------------------------------------------------------------
    def episode(self, agent: Agent, order: int, seat: int, seed: int) -> _Episode:
        return _Episode(self, agent, order, seat, seed)

    async def play(self, agent: Agent, order: int, seat: int, seed: int) -> list[str]:
        ep = self.episode(agent, order, seat, seed)
        while await ep.step():
            pass
        return ep.actions

    async def interleaved(self, runs: Sequence[tuple[Agent, int, int, int]]) -> list[list[str]]:
        eps = [self.episode(*r) for r in runs]
        going = list(eps)
        while going:
            going = [ep for ep in going if await ep.step()]
        return [ep.actions for ep in eps]

    async def probe(self, seat: int, seed: int) -> None:
        """Feed a fresh agent the states of a random legal rollout (both actions drawn), checking each answer."""
        game, agent = self.game, self.fresh()
        where: dict[str, Any] = {"seat": seat, "partner": "random rollout", "seed": seed}
        condition = f"check:{self.task}:probe"
        if not self.guarded(
            "start_episode",
            lambda: agent.start_episode(
                game, seat, rng_for(seed, condition, 0, seat), no_emit, Site("check", condition)
            ),
            where,
        ):
            return
        draw = random.Random(f"probe|{self.task}|{seat}|{seed}")
        state = game.reset(seed)
        for step in range(game.info.horizon):
            if game.is_terminal(state):
                return
            decision, ok = await self.call_act(agent, state, {**where, "step": step})
            if not ok and decision is None:
                return
            joint = (draw.choice(game.legal_actions(state, 0)), draw.choice(game.legal_actions(state, 1)))
            nxt = game.step(state, joint)
            if not self.guarded("observe", lambda s=state, j=joint, n=nxt: agent.observe(s, j, n), where):
                return
            agent.history.append(joint)
            agent.t += 1
            state = nxt

    async def run(self) -> None:
        """Every check of this task: per partner and seat, one agent plays the seeds in turn (the last one again when
        there is one seed); fresh agents replay the first seed (determinism) and the last (no carried state), and
        two more play those side by side, a step each in turn (no state shared between instances)."""
        plan = list(self.seeds) if len(self.seeds) > 1 else [self.seeds[0], self.seeds[0]]
        first_seed, last_seed = plan[0], plan[-1]
        for order in PARTNER_ORDERS:
            for seat in (0, 1):
                where = {"seat": seat, "partner": f"ToM-{order}"}
                before = _class_state(self.cls)
                one = self.fresh()
                runs = [await self.play(one, order, seat, s) for s in plan]
                changed = sorted(k for k, v in _class_state(self.cls).items() if before.get(k) != v)
                again = await self.play(self.fresh(), order, seat, first_seed)
                alone = await self.play(self.fresh(), order, seat, last_seed)
                side = await self.interleaved(
                    [(self.fresh(), order, seat, first_seed), (self.fresh(), order, seat, last_seed)]
                )
                if not runs[0]:
                    why = "not judged: the agent played no step"
                    self.verdict("determinism", None, why)
                    self.verdict("no_shared_state", None, why)
                    continue
                at = _first_difference(runs[0], again)
                deterministic = at is None
                if deterministic:
                    self.verdict("determinism", True)
                elif changed:
                    self.verdict("determinism", None, "not judged: class-level data changed between the runs")
                else:
                    what = f"two fresh agents chose {_shown(runs[0], at)} and {_shown(again, at)} on the same seed"
                    self.fail("determinism", what, **where, seed=first_seed, step=at)
                problems = []
                if (at := _first_difference(runs[-1], alone)) is not None:
                    problems.append(
                        (
                            last_seed,
                            at,
                            f"after playing seed {first_seed}, it chose {_shown(runs[-1], at)} where a fresh agent "
                            f"chose {_shown(alone, at)}",
                        )
                    )
                for seed, mine, theirs in ((first_seed, side[0], runs[0]), (last_seed, side[1], alone)):
                    if (at := _first_difference(theirs, mine)) is not None:
                        what = f"beside another instance, step by step, it chose {_shown(mine, at)}"
                        what += f", alone {_shown(theirs, at)}"
                        problems.append((seed, at, what))
                if not problems:
                    self.verdict("no_shared_state", True)
                elif not deterministic and not changed:
                    self.verdict("no_shared_state", None, "not judged: the agent is not deterministic")
                else:
                    seed, step, what = problems[0]
                    if changed:
                        what += f"; class-level data changed while it played: {', '.join(changed[:3])}"
                    self.fail("no_shared_state", what, **where, seed=seed, step=step)
        for seat in (0, 1):
            for seed in self.seeds:
                await self.probe(seat, seed)


def _shown(actions: Sequence[str], at: int | None) -> str:
    if at is None or at >= len(actions):
        return "(no action: the episode had ended)"
    return repr(actions[at])


class _Episode:
    """One episode of the agent under check and a formal partner, played a step at a time."""

    def __init__(self, check: _TaskCheck, agent: Agent, order: int, seat: int, seed: int) -> None:
        self.check, self.agent, self.seat, self.seed = check, agent, seat, seed
        self.partner = FormalToMAgent(order)
        self.where: dict[str, Any] = {"seat": seat, "partner": f"ToM-{order}", "seed": seed}
        self.actions: list[str] = []
        self.players = [agent, self.partner] if seat == 0 else [self.partner, agent]
        game = check.game
        condition = f"check:{check.task}:ToM-{order}"
        self.state: Any = game.reset(seed)
        self.started = time.perf_counter()
        self.step_no = 0
        site = Site("check", condition)  # the streams are play_episode's: (seed, condition, episode, seat)
        self.partner.start_episode(game, 1 - seat, rng_for(seed, condition, 0, 1 - seat), no_emit, site)
        stream = rng_for(seed, condition, 0, seat)
        self.going = check.guarded(
            "start_episode", lambda: agent.start_episode(game, seat, stream, no_emit, site), self.where
        )

    async def step(self) -> bool:
        """Play one step; False when the episode is over (or cannot go on)."""
        check, game, state = self.check, self.check.game, self.state
        if not self.going or game.is_terminal(state):
            return False
        where = {**self.where, "step": self.step_no}
        if self.step_no >= game.info.horizon:
            check.fail("episode_end", f"the episode is not over after the horizon ({game.info.horizon} steps)", **where)
            return False
        decision, _ = await check.call_act(self.agent, state, where)
        if decision is None:
            return False
        legal = game.legal_actions(state, self.seat)
        own = decision.action if isinstance(decision, Decision) and decision.action in legal else legal[0]
        self.actions.append(decision.action if isinstance(decision, Decision) else repr(decision))
        theirs = (await self.partner.act(state)).action
        joint = (own, theirs) if self.seat == 0 else (theirs, own)
        nxt = game.step(state, joint)
        for player in self.players:
            if player is self.agent:
                if not check.guarded("observe", lambda: self.agent.observe(state, joint, nxt), where):
                    return False
            else:
                player.observe(state, joint, nxt)
            player.history.append(joint)
            player.t += 1
        self.state, self.step_no = nxt, self.step_no + 1
        took = time.perf_counter() - self.started
        if took > check.episode_limit_s:
            check.fail(
                "episode_end", f"the episode took {took:.1f} s, over the limit of {check.episode_limit_s:g} s", **where
            )
            return False
        if game.is_terminal(nxt):
            check.judged["episode_end"].append("pass")
            return False
        return True


def _maker(agent: str | Callable[[], Agent]) -> tuple[Callable[[], Agent], str]:
    """A zero-argument maker of fresh agents and the agent's label, from an import path or a class or function."""
    if isinstance(agent, str):
        return agent_factory(agent), agent
    if not callable(agent) or isinstance(agent, Agent):
        raise AgentSpecError(
            f"check_agent needs an import path, an Agent subclass or a function that makes an Agent; got {agent!r} "
            "(pass the class or a function, not an instance: each check needs fresh agents)"
        )
    made = agent()
    if not isinstance(made, Agent):
        raise AgentSpecError(f"check_agent: {agent!r} made a {type(made).__name__}, not a tomlib.agents.Agent")
    return agent, display_name(made)


def _task_names(tasks: str | Sequence[str] | None, known: Sequence[str]) -> tuple[str, ...]:
    names = (
        list(known) if tasks is None else [t.strip() for t in (tasks.split(",") if isinstance(tasks, str) else tasks)]
    )
    names = [t for t in names if t]
    wrong = [t for t in names if t not in known]
    if wrong or not names:
        raise UsageError(f"unknown task {(wrong or ['(none)'])[0]!r} to check on; known: {', '.join(known)}")
    return tuple(dict.fromkeys(names))


async def _check_all(result: AgentCheck, make: Callable[[], Agent], options: dict[str, Any]) -> AgentCheck:
    for task in result.tasks:
        began = time.perf_counter()
        game = shared_game(TASKS[task])
        warm = FormalToMAgent(2)  # the game's exact model is made (or read) at its first use: not the agent's time
        warm.start_episode(game, 0, random.Random(0))
        await warm.act(game.reset(0))
        one = _TaskCheck(result, make, task, game, options)
        one.beat.start()
        aborted = ""
        try:
            await one.run()
        except _Aborted as exc:
            aborted = str(exc)
        finally:
            one.beat.stop()
        one.close(aborted)
        result.seconds[task] = time.perf_counter() - began
    return result


def check_agent(
    agent: str | Callable[[], Agent],
    *,
    tasks: str | Sequence[str] | None = None,
    seeds: int = 2,
    block_limit_s: float = 1.0,
    act_timeout_s: float = 10.0,
    episode_limit_s: float = 60.0,
) -> AgentCheck:
    """Check that an agent can play the adaptive-ToM games (``adaptive-tom-aaai2026.txt`` §4.1's five tasks) against
    the formal ToM-0/1/2 partners (eq. 3-9) in both seats: legal actions everywhere, determinism, no state shared
    across episodes or instances, no blocking in ``act``, episodes that end (:data:`CHECKS`).

    Args:
        agent: an import path (``package.module:Class(key=value)``), or an Agent subclass or function that makes a
            fresh agent when called with no arguments.
        tasks: task names of :data:`tomlib.envs.TASKS` (a list or a comma-separated string;
            None: all five).
        seeds: how many seeds each pairing plays, and how many random rollouts per seat probe states off the
            partners' paths.
        block_limit_s: the longest one ``act`` call may hold the event loop.
        act_timeout_s: the longest one ``act`` call may take in all (awaiting included).
        episode_limit_s: the longest one episode may take.

    Raises:
        AgentSpecError: the agent cannot be made (the one line of :func:`tomlib.agents.load_agent`).
        UsageError: an unknown task, or a count or limit out of range.
    """
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise UsageError(f"seeds must be a whole number of at least 1; got {seeds!r}")
    for name, limit in (("block_limit_s", block_limit_s), ("act_timeout_s", act_timeout_s)):
        if not limit > 0:
            raise UsageError(f"{name} must be a positive number of seconds; got {limit!r}")
    if not episode_limit_s > 0:
        raise UsageError(f"episode_limit_s must be a positive number of seconds; got {episode_limit_s!r}")
    names = _task_names(tasks, list(TASKS))
    make, label = _maker(agent)
    options = {
        "seeds": tuple(range(seeds)),
        "block_limit_s": float(block_limit_s),
        "act_timeout_s": float(act_timeout_s),
        "episode_limit_s": float(episode_limit_s),
    }
    result = AgentCheck(label, names)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_check_all(result, make, options))
    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # a notebook's loop is running: time on a loop of our own
        return pool.submit(asyncio.run, _check_all(result, make, options)).result()
