"""How much the rule choosing among stable outcomes decides who cooperates (notebooks 07, 12, 13).

Each rule of :data:`tomlib.coalition.SELECTIONS` is applied to the same score matrices: the ones a run recorded
(read back from its run log, no new calls) or uniform random ones. The shares are exact expectations: a rule that
draws among several outcomes contributes each outcome's probability, not one draw.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from tomlib.coalition import (
    SELECTIONS,
    AlignmentInstance,
    Mechanism,
    make_instance,
    solve_many,
    stable_outcomes,
    team_shares,
)
from tomlib.trace import load_runs


def team_label(names: Sequence[str], team: Sequence[int]) -> str:
    return "{" + ", ".join(names[i] for i in team) + "}" if team else "(no stable outcome)"


def selection_shares(
    instances: Sequence[AlignmentInstance],
    mechanism: Mechanism,
    rules: Sequence[str] = tuple(SELECTIONS),
    within: Callable[[AlignmentInstance, tuple[int, ...]], Sequence[tuple[int, ...]]] | None = None,
) -> pd.DataFrame:
    """Share (%) of the instances in which each rule (columns) makes each team (rows) cooperate; the last rows give
    the share of instances with several stable outcomes (where the rule matters) and with none. ``within``: who of a
    team acts (e.g. the debate's two speakers of a coalition of three), each of its answers equally likely."""
    if not instances:
        return pd.DataFrame()
    names = instances[0].names
    share: dict[str, dict[str, float]] = {}
    for rule in rules:
        col: dict[str, float] = {}
        solved = solve_many(functools.partial(team_shares, mechanism=mechanism, selection=rule), instances)
        for inst, got in zip(instances, solved, strict=True):
            for team, p in (got or {(): 1.0}).items():
                acting = list(within(inst, team)) if within is not None and team else [team]
                for part in acting:
                    label = team_label(names, part)
                    col[label] = col.get(label, 0.0) + 100 * p / len(instances) / len(acting)
        share[rule] = col
    counts = [len(o) for o in solve_many(functools.partial(stable_outcomes, mechanism=mechanism), instances)]
    frame = pd.DataFrame(share).fillna(0.0).sort_index()
    frame.loc["(instances with several stable outcomes)"] = 100 * np.mean([c > 1 for c in counts])
    frame.loc["(instances with none)"] = 100 * np.mean([c == 0 for c in counts])
    frame.index.name = f"team ({len(instances)} instances)"
    return frame.round(1)


def random_instances(
    names: Sequence[str],
    *,
    no_beliefs: Sequence[str] = (),
    draws: int = 1000,
    seed: int = 0,
    min_size: int | None = None,
    epsilon: float = 0.25,
    pair_order: str = "eq3",
) -> list[AlignmentInstance]:
    """Instances with every believer's scores drawn uniformly from [-1, 1] (seeded)."""
    rng = np.random.default_rng(seed)
    n = len(names)
    out = []
    for _ in range(draws):
        scores = rng.uniform(-1, 1, size=(n, n))
        out.append(
            make_instance(
                scores, names=names, no_beliefs=no_beliefs, min_size=min_size, epsilon=epsilon, pair_order=pair_order
            )
        )
    return out


def recorded_instances(
    run_ids: Sequence[str],
    names: Sequence[str],
    *,
    results: str | None = None,
    no_beliefs: Sequence[str] = (),
    step: int | None = 1,
    condition: Callable[[str], bool] = lambda _c: True,
    min_size: int | None = None,
    epsilon: float = 0.25,
    pair_order: str = "eq3",
) -> list[AlignmentInstance]:
    """The score matrices a run recorded (its ``alignment`` events), one instance per (condition, episode, round) of
    the conditions ``condition`` accepts, at round ``step`` (None: every round)."""
    events = load_runs(results, run_ids=list(run_ids), kinds=["alignment"])
    if events.empty:
        return []
    events = events[[condition(str(c)) for c in events["condition"]]]
    if step is not None:
        events = events[events["step"] == step]
    out = []
    for _key, part in events.groupby(["run_id", "condition", "episode", "step"], sort=True):
        scores = np.zeros((len(names), len(names)))
        seen = False
        for agent, payload in zip(part["agent"], part["payload"], strict=True):
            if agent not in names:
                continue
            for other, s in payload.get("scores", {}).items():
                if other in names:
                    scores[names.index(agent), names.index(other)] = float(s)
                    seen = True
        if seen:
            out.append(
                make_instance(
                    scores,
                    names=names,
                    no_beliefs=no_beliefs,
                    min_size=min_size,
                    epsilon=epsilon,
                    pair_order=pair_order,
                )
            )
    return out
