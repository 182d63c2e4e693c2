"""What the full-scale rehearsal found (issue 25): episodes in flight were capped at 8 per condition (adaptive ToM:
one condition at a time) and 8 per experiment (coalition), so a 64-slot endpoint ran a fraction full. They now
follow the model's concurrency."""

from __future__ import annotations

import asyncio

import pytest

from tomlib.experiments import adaptive_tom as at
from tomlib.experiments import coalition_programming as cp
from tomlib.programming import TeamConfig
from tomlib.sim import SimServer, SimSpec

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

SLOW = SimSpec(name="slow", latency_median_s=0.15, latency_sigma=0.1)
SLOWER = SimSpec(name="slow", latency_median_s=0.5, latency_sigma=0.1)
"""For 33 calls in flight at once: at 0.15 s a call, a loaded machine (the suite's other worker) started only 29."""


@pytest.mark.sim
@pytest.mark.parametrize("sim", [SLOW], indirect=True)
def test_adaptive_tom_conditions_share_the_models_slots(sim: SimServer) -> None:
    # nine ToM-k pairings of two episodes each: one condition at a time kept at most 2 episodes x 2 players busy
    asyncio.run(at.table1(model="sim", llm_mode="auto", tasks=["memory_1"], episodes=2, progress=False))
    assert not sim.refused and sim.max_in_flight > 16, sim.max_in_flight


@pytest.mark.sim
@pytest.mark.parametrize("sim", [SLOWER], indirect=True)
def test_programming_episodes_in_flight_follow_the_models_concurrency(sim: SimServer) -> None:
    # 12 episodes of four engineers each: 8 episodes at once held it to 32 calls in flight of the model's 64
    asyncio.run(
        cp.run_programming(
            [TeamConfig(pm_tom=1, matching=False), TeamConfig(pm_tom=2, matching=False)],
            model="sim",
            llm_mode="auto",
            benchmarks=["humaneval"],
            humaneval_tasks=6,
            progress=False,
            on_sandbox=None,
        )
    )
    assert not sim.refused and sim.max_in_flight > 32, sim.max_in_flight
