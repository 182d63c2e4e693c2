"""Does the effective-order estimator (:func:`tomlib.tom.effective_order`) find the order of players whose order is
known? Issue 57's target: the MAP order is the true one in at least 95% of 30-episode runs on the grids.

(1) Formal ToM-k players (k = 0, 1, 2) that take a uniformly random legal action with probability ε = 0.1 (a stream of
their own), each run 30 episodes against formal partners of every order in turn: episode i's partner is ToM-(i mod 3)
and the seats swap every 3 episodes. That mix is what a user reading a player's order off a cross-play table has; one
partner order alone can leave two orders with the same choices at every step (the per-partner lines say where). R
runs (different seeds) per task and order, on game1 and game2 and, as extra rows, the two matrix games: the share of
runs whose MAP order is the true order, with its 95% Wilson interval. A run whose best orders tie exactly names no
order and counts as a miss ("tied"): in the 2-action matrix games ToM-0 and ToM-2 choose alike at every state (both
play against the partner's last or most frequent choice), so no log tells them apart there and those rows say so.
(2) The simulated model (:mod:`tomlib.sim`, ``tom_error`` 0.1: each call of the ToM-k chain takes another action with
that chance) as ``LLMToMAgent(k)`` on memory_1 and memory_n against the same partner mix: the recovery rate.
Then the time a 30-episode run's estimate takes on game2 and on Overcooked.

    .venv/bin/python benchmarks/bench_effective_order.py [--runs 20] [--sim-runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("TOMLIB_RESULTS", tempfile.mkdtemp())

from statsmodels.stats.proportion import proportion_confint

from tomlib.agents import Agent, Decision, Emit, FormalToMAgent, Site, no_emit, play_episode
from tomlib.envs import Game, rng_for
from tomlib.experiments.adaptive_tom import load_task
from tomlib.tom import ORDERS, EffectiveOrder, EpisodeOrders, effective_order, episode_orders

EPISODES = 30
NOISE = 0.1
GRIDS = ("game1", "game2")
MATRICES = ("memory_1", "memory_n")


class Noisy(Agent):
    """``inner``, except that with probability ``epsilon`` it takes a uniformly random legal action instead (drawn
    from a stream of its own, seeded by ``seed`` and the episode, so the inner agent's ties are unchanged)."""

    immediate = True

    def __init__(self, inner: Agent, epsilon: float, seed: int):
        self.inner, self.epsilon, self.seed = inner, epsilon, seed
        self.name = f"{inner.name}+noise"

    def start_episode(
        self, game: Game, player: int, rng: random.Random, emit: Emit = no_emit, site: Site | None = None
    ) -> None:
        super().start_episode(game, player, rng, emit, site)
        self.inner.start_episode(game, player, rng, emit, site)
        self.inner.history = self.history  # play_episode appends to the wrapper's
        self.noise = rng_for(self.seed, "noise", self.site.condition, self.site.episode, player)

    async def act(self, state: Any) -> Decision:
        self.inner.t = self.t
        decision = await self.inner.act(state)
        if self.noise.random() < self.epsilon:
            return Decision(self.noise.choice(self.game.legal_actions(state, self.player)), {"noise": True})
        return decision

    def observe(self, state: Any, joint: Sequence[str], next_state: Any) -> None:
        self.inner.observe(state, joint, next_state)


def partner_of(i: int) -> int:
    return ORDERS[i % len(ORDERS)]


def seat_of(i: int) -> int:
    return (i // len(ORDERS)) % 2


async def one_run(
    game: Game, task: str, make: Callable[[], Agent], order: int, seed: int, together: int = 1
) -> list[tuple[int, EpisodeOrders]]:
    """30 episodes of the player against the partner mix; (partner order, what the episode says of the player)."""

    async def episode(i: int) -> tuple[int, EpisodeOrders]:
        seat = seat_of(i)
        agents: list[Agent] = [make(), FormalToMAgent(partner_of(i))]
        if seat == 1:
            agents.reverse()
        got = await play_episode(game, agents, seed=seed, episode=i, condition=f"{task}:ToM-{order}:{seed}")
        return partner_of(i), episode_orders(game, seed, got.actions, seat)

    out: list[tuple[int, EpisodeOrders]] = []
    for start in range(0, EPISODES, together):
        out += await asyncio.gather(*(episode(i) for i in range(start, min(start + together, EPISODES))))
    return out


def wilson(k: int, n: int) -> str:
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    return f"{k:>3}/{n:<3} {k / n:6.1%}  [{lo:.2f}, {hi:.2f}]"


def summary(task: str, order: int, runs: list[list[tuple[int, EpisodeOrders]]]) -> tuple[str, list[str]]:
    """The line of one task and true order, and its per-partner lines."""
    found: list[EffectiveOrder] = [effective_order([e for _, e in run]) for run in runs]
    hit = sum(f.map_order == order for f in found)
    tied = sum(f.map_order is None for f in found)
    share = sum(f.informative_share for f in found) / len(found)
    line = f"{task:<9} ToM-{order}  {wilson(hit, len(found))}  tied {tied:>2}  informative steps {share:5.1%}"
    said = sorted({f.statement for f in found if f.map_order is None})
    per = [f"  a tied run says: {s}" for s in said]
    for partner in ORDERS:
        alone = [effective_order([e for p, e in run if p == partner]) for run in runs]
        k = sum(f.map_order == order for f in alone)
        ties = sum(f.map_order is None for f in alone)
        s = sum(f.informative_share for f in alone) / len(alone)
        per.append(
            f"  vs ToM-{partner} alone ({EPISODES // len(ORDERS)} episodes): recovered {k:>2}/{len(alone)}, "
            f"tied {ties:>2}, informative steps {s:5.1%}"
        )
    return line, per


def formal_part(runs: int) -> bool:
    print(
        f"(1) formal ToM-k players with ε = {NOISE} noise, {EPISODES} episodes a run against partners ToM-0/1/2 in "
        f"turn, {runs} runs per row"
    )
    print("task      true   MAP = true (95% Wilson CI)         ties     share of steps where the orders differ")
    grids_ok = True
    for task in (*GRIDS, *MATRICES):
        game = load_task(task)
        for order in ORDERS:
            got = []
            for r in range(runs):
                seed = 1000 + r

                def make(order: int = order, seed: int = seed) -> Agent:
                    return Noisy(FormalToMAgent(order), NOISE, seed)

                got.append(asyncio.run(one_run(game, task, make, order, seed)))
            line, per = summary(task, order, got)
            print(line)
            for p in per:
                print(p)
            if task in GRIDS:
                hits = sum(effective_order([e for _, e in run]).map_order == order for run in got)
                grids_ok &= hits / runs >= 0.95
    print(
        f"issue 57's target (MAP = true order in >= 95% of grid runs, every order): {'met' if grids_ok else 'NOT met'}"
    )
    return grids_ok


def sim_part(runs: int) -> None:
    from tomlib.agents.llm import LLMToM, LLMToMAgent
    from tomlib.llm import ChatModel
    from tomlib.paths import configs_dir, environ
    from tomlib.sim import SimServer, SimSpec

    print(
        f"\n(2) the simulated model (tom_error {NOISE}) as LLMToMAgent(k), {EPISODES} episodes a run against partners "
        f"ToM-0/1/2 in turn, {runs} runs per row"
    )
    with tempfile.TemporaryDirectory(prefix="bench-order-") as tmp:
        configs = Path(tmp) / "configs"
        shutil.copytree(configs_dir(), configs)
        scratch = {"TOMLIB_CONFIGS": str(configs), "TOMLIB_STORE": f"{tmp}/store.sqlite", "TOMLIB_RESULTS": tmp}
        with environ(scratch), SimServer(SimSpec(name="order", tom_error=NOISE)) as srv:
            with open(configs / "models.yaml", "a") as fh:
                fh.write(srv.model_entry("order"))
            chat = ChatModel.from_name("order", mode="auto")
            llm = LLMToM(chat, temperature=0.1)
            t0, calls = time.perf_counter(), 0
            print("task      true   MAP = true (95% Wilson CI)         ties     share of steps where the orders differ")
            for task in MATRICES:
                game = load_task(task)
                for order in ORDERS:
                    got = [
                        asyncio.run(
                            one_run(game, f"sim-{task}", lambda o=order: LLMToMAgent(o, llm), order, 2000 + r, EPISODES)
                        )
                        for r in range(runs)
                    ]
                    calls += runs * EPISODES * game.info.horizon * (order + 1)
                    line, per = summary(task, order, got)
                    print("\n".join([line, *per[: -len(ORDERS)]]))
            wall = time.perf_counter() - t0
    print(f"about {calls:,} model calls in {wall:.1f} s ({calls / wall:,.0f} calls/s)")


def timing() -> None:
    print("\ntime of one 30-episode run (formal noisy ToM-1 against the partner mix): playing, then the estimate")
    for task in ("game2", "overcooked"):
        game = load_task(task)
        for label in ("first (memos cold)", "second (memos warm)"):
            t0 = time.perf_counter()
            joints = []
            for i in range(EPISODES):
                agents: list[Agent] = [Noisy(FormalToMAgent(1), NOISE, 7), FormalToMAgent(partner_of(i))]
                seat = seat_of(i)
                if seat:
                    agents.reverse()
                joints.append((seat, asyncio.run(play_episode(game, agents, seed=7, episode=i)).actions))
            played = time.perf_counter() - t0
            t1 = time.perf_counter()
            found = effective_order([episode_orders(game, 7, j, seat) for seat, j in joints])
            estimate = time.perf_counter() - t1
            steps = sum(len(j) for _, j in joints)
            print(
                f"{task:<10} {label:<20} play {played:6.2f} s, estimate {estimate:6.2f} s for {steps:>5} steps "
                f"({steps / estimate:,.0f} steps/s): {found.statement}"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20, help="runs per task and order of the formal players (>= 20)")
    ap.add_argument("--sim-runs", type=int, default=3, help="runs per task and order on the simulated model")
    args = ap.parse_args()
    t0 = time.perf_counter()
    formal_part(args.runs)
    t1 = time.perf_counter()
    print(f"formal part: {t1 - t0:.1f} s")
    sim_part(args.sim_runs)
    timing()
    print(f"whole bench: {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
