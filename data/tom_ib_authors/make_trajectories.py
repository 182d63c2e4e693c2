"""Write ``trajectories.json``: fixed action scripts played in the tom_ib authors' own simulation, with the state
after every world update. tomlib's conformance test replays the same scripts under ``dynamics="authors"``.

Usage: ``python data/tom_ib_authors/make_trajectories.py PATH`` where PATH is a checkout of
feilaz/Evaluating-ToM-and-IB-in-LLM-Based-MAS (commit 44ab238). Only its ``game.py`` and
``disaster_response_integration.py`` are imported (they need nothing beyond the standard library); nothing of
theirs is copied here. The schedule is the one their ``main.py`` runs: 21 agent turns in the order FOOD, MEDICAL,
SECURITY, and ``game.run_turn()`` before turns 3, 6, ..., 18 (counting turns from 0).
"""

from __future__ import annotations

import json
import random
import sys
from collections import deque
from pathlib import Path

AGENTS = ("FOOD_AGENT", "MEDICAL_AGENT", "SECURITY_AGENT")
TURNS, PER_ROUND, RANDOM_SCRIPTS = 21, 3, 100


def snapshot(sim) -> dict:
    g = sim.game
    return {
        "health": {d.name: d.health for d in g.districts.values() if d.name != g.supply_node},
        "levels": {d.name: {r.name: v for r, v in d.resources.items()} for d in g.districts.values()},
        "carry": {a.agent_type.name: a.carrying_resource for a in g.agents},
        "positions": {a.agent_type.name: a.current_district.name for a in g.agents},
    }


def path_step(g, here: str, goal: str) -> str:
    """The first move of a shortest path (ties to the lower district number)."""
    seen, queue = {goal: 0}, deque([goal])
    while queue:
        cur = queue.popleft()
        for n in g.districts[cur].connections:
            if n not in seen:
                seen[n] = seen[cur] + 1
                queue.append(n)
    return min(g.districts[here].connections, key=lambda n: (seen[n], n))


def lowest_first(sim, agent) -> str:
    """Go to the district lowest in my resource, supply all I carry, go back to the supply node when empty."""
    g, here = sim.game, agent.current_district.name
    if agent.carrying_resource == 0:
        return "NONE" if here == g.supply_node else f"MOVE({path_step(g, here, g.supply_node)})"
    kind = agent.get_resource_type()
    target = min(
        (d for d in g.districts.values() if d.name != g.supply_node), key=lambda d: (d.resources[kind], d.name)
    )
    if here == target.name:
        return f"SUPPLY_RESOURCE({agent.carrying_resource})"
    return f"MOVE({path_step(g, here, target.name)})"


def random_legal(rng: random.Random):
    def act(sim, agent) -> str:
        g, here = sim.game, agent.current_district.name
        options = ["NONE"] + [f"MOVE({n})" for n in sorted(g.districts[here].connections)]
        if here != g.supply_node and agent.carrying_resource > 0:
            options.append(f"SUPPLY_RESOURCE({rng.randint(1, agent.carrying_resource)})")
        return rng.choice(options)

    return act


def play(dri, policy) -> dict:
    sim = dri.DisasterResponseIntegration(max_turns=TURNS)
    actions, updates = [], []
    for turn in range(TURNS):
        if turn and turn % PER_ROUND == 0:
            sim.game.run_turn()
            updates.append({"before_turn": turn, **snapshot(sim)})
        agent = sim.game.agents[turn % PER_ROUND]
        action = policy(sim, agent)
        result = sim.execute_command(agent.agent_type, action)
        if "Invalid" in result:
            raise AssertionError(f"script produced an illegal action {action}: {result}")
        actions.append(action)
    return {"actions": actions, "updates": updates, "end": snapshot(sim), "final_score": sim.get_final_score()}


def main(checkout: str) -> None:
    sys.path.insert(0, str(Path(checkout).resolve()))
    import disaster_response_integration as dri

    scripts = [
        {"name": "all idle", **play(dri, lambda sim, agent: "NONE")},
        {"name": "lowest first", **play(dri, lowest_first)},
    ]
    for seed in range(RANDOM_SCRIPTS):
        scripts.append({"name": f"random legal {seed}", **play(dri, random_legal(random.Random(seed)))})
    out = {
        "source": "feilaz/Evaluating-ToM-and-IB-in-LLM-Based-MAS at commit 44ab238 (game.py, "
        "disaster_response_integration.py), driven on main.py's schedule by data/tom_ib_authors/make_trajectories.py",
        "naming": "their districts '1'-'4' are tomlib's d1-d4; their MEDICAL is tomlib's MEDICINE",
        "scripts": scripts,
    }
    Path(__file__).with_name("trajectories.json").write_text(json.dumps(out, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
