"""A synthetic run log of any size, for tests and benchmarks of the readers and the explorer (no experiment run)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def synthetic_run_log(path: Path, *, episodes: int, steps: int, conditions: int = 4, run_id: str = "big") -> int:
    """Write a matrix-game-shaped log: ``episodes`` x ``steps`` x 2 agents (prediction + action each), env states
    and scores, conditions ``c0..c{conditions-1}`` in turn. Returns the number of events written."""
    rows: list[dict[str, Any]] = []

    def ev(cond: str, ep: int | None, step: int | None, agent: str, kind: str, payload: dict[str, Any]) -> None:
        rows.append(
            {
                "run_id": run_id,
                "experiment": f"synthetic.{run_id}",
                "condition": cond,
                "episode": ep,
                "step": step,
                "agent": agent,
                "kind": kind,
                "payload": payload,
                "time": 0.0,
            }
        )

    ev("", None, None, "", "run_start", {"source": "formal"})
    for e in range(episodes):
        cond = f"c{e % conditions}"
        ev(cond, e, 0, "", "env_state", {"state": "round 0", "game": "matrix(actions=2)", "agents": ["ToM-0", "ToM-1"]})
        for s in range(steps):
            joint = ["A", "B" if (s + e) % 2 else "A"]
            for agent, action in zip(("player1", "player2"), joint, strict=True):
                ev(cond, e, s, agent, "prediction", {"order": 0, "predicted_partner_action": "A"})
                ev(cond, e, s, agent, "action", {"action": action})
            ev(cond, e, s + 1, "", "env_state", {"state": f"round {s + 1}", "joint_action": joint})
        ev(cond, e, steps, "", "score", {"metric": "point", "value": float(e % 16) * 5, "steps": steps})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return len(rows)
