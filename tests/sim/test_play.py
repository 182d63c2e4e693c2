"""The simulated model as a player (issue 25): A-ToM's choice of expert against a partner of known order, the city's
health under the declared policy, and the debate's win rates under the judge's declared bias."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.sim.conftest import within_ci
from tomlib.envs.city import AGENTS, ROLE, City
from tomlib.experiments import adaptive_tom as at
from tomlib.experiments import coalition_debate as cd
from tomlib.experiments import tom_ib
from tomlib.sim import SimServer, SimSpec
from tomlib.sim._play import CityView, city_policy
from tomlib.trace import load_runs

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def _table2(episodes: int, partners: tuple[str, ...] = at.TABLE2_PARTNERS) -> at.Reproduction:
    return asyncio.run(
        at.table2(
            model="sim",
            llm_mode="auto",
            tasks=["memory_1"],
            algorithms=["FTL"],
            partners=partners,
            episodes=episodes,
            progress=False,
        )
    )


def _expert_hits(results: Path, run_id: str | None, partner: str) -> list[list[bool]]:
    """Per A-ToM step against ``partner`` (either seat): whether each expert's prediction was the partner's action."""
    events = load_runs(results, run_ids=[run_id], kinds=["expert_weights", "alignment"])
    seats = {f"memory_1:A-ToM (FTL) vs {partner}": "player1", f"memory_1:{partner} vs A-ToM (FTL)": "player2"}
    mine = events[events["condition"].isin(seats) & (events["agent"] == events["condition"].map(seats))]
    at_step: dict[tuple[str, int, int], dict[str, dict]] = {}
    for r in mine.itertuples():
        at_step.setdefault((r.condition, r.episode, r.step), {})[r.kind] = r.payload
    return [
        [p == got["alignment"]["partner_action"] for p in got["expert_weights"]["predictions"]]
        for got in at_step.values()
    ]


@pytest.mark.sim
@pytest.mark.parametrize("sim", [SimSpec(name="tom", tom_error=0.0)], indirect=True)
def test_exact_tom_agents_on_the_simulation_are_the_formal_agents(sim: SimServer, isolated: Path) -> None:
    """With no errors the simulated chain is a formal ToM-k player (Memory-1 has no ties): every cell equals the
    formal cell, and A-ToM's expert of the partner's order never misses, so FTL settles on it."""
    llm = _table2(episodes=2)
    formal = asyncio.run(at.table2(tasks=["memory_1"], algorithms=["FTL"], episodes=2, progress=False))
    assert not sim.refused and set(llm.table["source"]) == {"sim:sim"}
    key = ["player1", "player2", "metric"]
    got = llm.table.set_index(key)["value"].sort_index()
    want = formal.table.set_index(key)["value"].sort_index()
    assert len(got) >= 12 and got.equals(want), (got, want)
    for partner, order in (("ToM-0", 0), ("ToM-1", 1)):
        hits = _expert_hits(isolated / "results", llm.run_id, partner)
        assert len(hits) == 2 * 2 * 15 and all(h[order] for h in hits), partner


@pytest.mark.sim
@pytest.mark.parametrize("sim", [SimSpec(name="tom", tom_error=0.1)], indirect=True)
def test_expert_accuracy_is_the_declared_error_rate(sim: SimServer, isolated: Path) -> None:
    """Two actions: an erring call flips its chain's output. Against a ToM-0 partner the ToM-0 expert's one call and
    the partner's agree with probability (1-e)^2 + e^2; against ToM-1 each two-call chain flips with q = 2e(1-e),
    so they agree with probability (1-q)^2 + q^2, whatever the state."""
    rep = _table2(episodes=6, partners=("ToM-0", "ToM-1"))  # the partners it checks: half the calls of all four
    e = sim.spec.tom_error
    q = 2 * e * (1 - e)
    for partner, order, truth in (("ToM-0", 0, (1 - e) ** 2 + e**2), ("ToM-1", 1, (1 - q) ** 2 + q**2)):
        hits = _expert_hits(isolated / "results", rep.run_id, partner)
        assert len(hits) == 2 * 6 * 15
        assert within_ci(sum(h[order] for h in hits), len(hits), truth), (partner, truth)


def _policy_health(city: City) -> float:
    """The declared policy played on the true state (what the simulated agents should do from their prompts)."""
    state = city.reset()
    roads = {d: tuple(city.adjacency[d]) for d in city.params.districts}
    while not city.is_over(state):
        agent = city.current_agent(state)
        here, resource = state.position[agent], ROLE[agent]
        view = CityView(
            agent=agent,
            resource=resource,
            here=here,
            carry=state.carry[agent],
            supply=city.params.supply_node,
            roads=roads,
            level_here=None if here == city.params.supply_node else state.levels[here][resource],
        )
        state = city.apply(state, agent, city.parse_action(city_policy(view)))
    return city.final_health(state)


@pytest.mark.parametrize("sim", [SimSpec(name="city")], indirect=True)
def test_the_citys_health_is_the_declared_policys(sim: SimServer) -> None:
    fig = asyncio.run(
        tom_ib.fig5(models=["sim"], configs=["Base", "ToM+IB"], trials=1, llm_mode="auto", progress=False)
    )
    assert not sim.refused
    truth = _policy_health(City())
    rows = fig.trials
    assert set(rows["configuration"]) == {"Base", "ToM+IB"} and (rows["final_health"] == truth).all(), (truth, rows)
    # the beliefs translate into true facts: no inconsistency, no failed translation, no lost turn
    counters = fig.trials.set_index("configuration")
    assert counters.loc["ToM+IB", "inconsistencies"] == 0 and counters.loc["ToM+IB", "invalid_translations"] == 0
    assert (counters["failed_turns"] == 0).all() and (counters["invalid_actions"] == 0).all()
    assert truth > 0 and len(AGENTS) == 3


@pytest.mark.parametrize("sim", [SimSpec(name="judge", judge_affirmative=0.8)], indirect=True)
def test_win_rates_are_the_judges_declared_bias(sim: SimServer) -> None:
    runs = asyncio.run(cd.run_debates(model="sim", llm_mode="auto", debates=2))
    assert not sim.refused
    t = cd.table4(runs)
    assert set(t["source"]) == {"sim:sim"}
    verdicts = [r.verdict for d in runs.debates for r in d.rounds]
    wins = sum(v == "affirmative" for v in verdicts)
    assert len(verdicts) >= 50 and within_ci(wins, len(verdicts), 0.8)
