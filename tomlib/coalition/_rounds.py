"""Algorithm 1 over rounds, and the §6.2 metrics: FTM, coalition lifetime, re-matches.

Each round brings new alignment scores (beliefs updated, actions taken). In round 1, and whenever a re-match was
signalled, the stable outcome is recomputed (ICLR: coalitions; NeurIPS: pairs) and its team selected; when several
outcomes are stable, ``selection`` says which is played (:mod:`tomlib.coalition._select`), with draws seeded by the
condition and episode. After the
round, an agent of the team whose belief about a partner missed by more than ε (φ > ε) signals a re-match.
With the ICLR draft's *adaptation* phase the current team stays one more round after a signal, then re-matches;
without it (NeurIPS), the next round re-matches.

Coalition lifetime (§6.2) is the mean number of rounds a team stays in force between matchings. Which team is the
first is a reading (``initial``): ``match`` (default), the one matched in round 1 (ICLR Algorithm 1 starts from
S = N and matches at once, line 6 with R = 1); ``all``, every agent, in force until the first re-match (NeurIPS
§6.2: "the initial coalition l1 includes all agents"), counted as the first coalition.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tomlib.coalition._instance import AlignmentInstance
from tomlib.coalition._pairs import partners
from tomlib.coalition._select import Mechanism, check_selection, choose
from tomlib.recording import record_all

INITIALS: tuple[str, ...] = ("match", "all")
"""The first coalition: matched in round 1 (``match``, ICLR Alg. 1 line 6) or all agents (``all``, NeurIPS §6.2)."""


def ftm(inst: AlignmentInstance, i: int, among: Sequence[int] | None = None) -> float:
    """FTM_i (ICLR §6.2): the fraction of the other agents (or of ``among``) that i trusts, i.e. φ_ij ≤ ε.

    Args:
        inst: the round's alignment instance (scores, ε).
        i: the believer's index.
        among: the indices to count over (``i`` itself is skipped); None: every other agent.
    """
    others = [j for j in (range(inst.n) if among is None else among) if j != i]
    return sum(inst.trusted(i, j) for j in others) / len(others) if others else float("nan")


@dataclass
class RoundRecord:
    round: int
    matched: bool
    team: tuple[int, ...]
    structure: str
    ftm: dict[str, float]
    misaligned: list[tuple[str, str, float]]
    signal: bool
    stable_outcomes: int | None = None  # how many outcomes were stable when it matched (-1: not counted)


@dataclass
class Algorithm1Run:
    """Every round of one run, and the metrics of §6.2."""

    rounds: list[RoundRecord] = field(default_factory=list)
    matching_rounds: list[int] = field(default_factory=list)

    @property
    def rematches(self) -> int:
        return max(0, len(self.matching_rounds) - 1)

    def lifetimes(self) -> list[int]:
        total = len(self.rounds)
        starts = self.matching_rounds
        return [b - a for a, b in zip(starts, [*starts[1:], total + 1], strict=True)]

    @property
    def coalition_lifetime(self) -> float:
        life = self.lifetimes()
        return float(np.mean(life)) if life else float("nan")

    def frame(self) -> Any:
        import pandas as pd

        return pd.DataFrame(
            [
                {
                    "round": r.round,
                    "matched": r.matched,
                    "team": r.structure,
                    **{f"FTM {k}": v for k, v in r.ftm.items()},
                    "misaligned pairs": ", ".join(f"{a}→{b} ({p:.2f})" for a, b, p in r.misaligned),
                    "re-match signal": r.signal,
                }
                for r in self.rounds
            ]
        )


class Algorithm1:
    """Algorithm 1 one round at a time, for teams whose next round depends on the current coalition.

    ``step(scores)`` takes the round's score matrix, (re)matches when due, and returns the round's record; ``run``
    holds every round so far.
    """

    def __init__(
        self,
        base: AlignmentInstance,
        *,
        mechanism: Mechanism = "iclr",
        adaptation: bool | None = None,
        selection: str | None = None,
        initial: str = "match",
        condition: str = "",
        episode: int | None = None,
    ) -> None:
        if initial not in INITIALS:
            raise ValueError(
                f"initial must be one of {', '.join(INITIALS)} (match: the stable outcome of round 1; all: every "
                f"agent until the first re-match, NeurIPS §6.2); got {initial!r}"
            )
        self.base, self.mechanism = base, mechanism
        self.adapt = (mechanism == "iclr") if adaptation is None else adaptation
        self.selection = check_selection(selection, mechanism)
        self.rng = random.Random(f"tomlib-selection:{condition}:{episode}")
        self.condition, self.episode = condition, episode
        self.run = Algorithm1Run()
        self.rematch_at: int | None = 1 if initial == "match" else None
        self.team: tuple[int, ...] = tuple(range(base.n))
        self.partners: dict[int, tuple[int, ...]] = {i: tuple(j for j in self.team if j != i) for i in self.team}
        self.label = "all agents" if initial == "match" else "all agents (the initial coalition)"
        self.stable = 0
        if initial == "all":
            self.run.matching_rounds.append(1)  # l1: the initial coalition of all agents counts as the first

    def _match(self, inst: AlignmentInstance) -> None:
        outcome, self.stable = choose(inst, self.mechanism, self.selection, self.rng)
        if outcome is None:
            kind = "coalition structure" if self.mechanism == "iclr" else "matching"
            self.label = f"no stable {kind} exists: the team stays"
            return
        self.team, self.label = outcome.team, outcome.label(inst.names)
        if outcome.pairs is not None:
            self.partners = {i: tuple(partners(outcome.pairs, i)) for i in self.team}
        else:
            self.partners = {i: tuple(j for j in self.team if j != i) for i in self.team}

    def step(self, scores: np.ndarray | Sequence[Sequence[float]]) -> RoundRecord:
        """One round: match if round 1 or a re-match is due, then check the team's beliefs against ε."""
        r = len(self.run.rounds) + 1
        inst = self.base.with_scores(scores)
        matched = self.rematch_at is not None and r >= self.rematch_at
        if matched:
            self._match(inst)
            self.run.matching_rounds.append(r)
            self.rematch_at = None
        names = inst.names
        misaligned = [
            (names[i], names[j], float(inst.phi[i, j]))
            for i in self.team
            for j in self.partners.get(i, ())
            if inst.has_beliefs[i] and not inst.trusted(i, j)
        ]
        signal = bool(misaligned)
        if signal and self.rematch_at is None:
            self.rematch_at = r + (2 if self.adapt else 1)
        rec = RoundRecord(
            r,
            matched,
            self.team,
            self.label,
            {names[i]: ftm(inst, i) for i in range(inst.n) if inst.has_beliefs[i]},
            misaligned,
            signal,
            self.stable if matched else None,
        )
        self.run.rounds.append(rec)
        record_round(inst, rec, self.condition, self.episode)
        return rec


def run_algorithm1(
    base: AlignmentInstance,
    rounds: Sequence[np.ndarray | Sequence[Sequence[float]]],
    *,
    mechanism: Mechanism = "iclr",
    adaptation: bool | None = None,
    selection: str | None = None,
    initial: str = "match",
    condition: str = "",
    episode: int | None = None,
) -> Algorithm1Run:
    """Algorithm 1 on a sequence of score matrices (one per round), its rounds recorded to the run log in force."""
    algo = Algorithm1(
        base,
        mechanism=mechanism,
        adaptation=adaptation,
        selection=selection,
        initial=initial,
        condition=condition,
        episode=episode,
    )
    for scores in rounds:
        algo.step(scores)
    return algo.run


def record_round(inst: AlignmentInstance, rec: RoundRecord, condition: str, episode: int | None) -> None:
    """A round's events (:func:`round_events`) to the run log in force; without one they are not made."""
    record_all(round_events(inst, rec), condition=condition, episode=episode, step=rec.round)


def round_events(inst: AlignmentInstance, rec: RoundRecord) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """A round's events: every believer's alignment, the team in force, and a re-match signal if any."""
    names = inst.names
    for i in range(inst.n):
        if not inst.has_beliefs[i]:
            continue
        alignment = {
            "scores": {names[j]: float(inst.scores[i, j]) for j in range(inst.n) if j != i},
            "misalignment": {names[j]: round(float(inst.phi[i, j]), 4) for j in range(inst.n) if j != i},
            "epsilon": inst.epsilon,
            "ftm": rec.ftm[names[i]],
        }
        yield "alignment", alignment, {"agent": names[i]}
    found = {"stable_outcomes": rec.stable_outcomes} if rec.matched else {}
    team = [names[i] for i in rec.team]
    yield "coalition", {"matched": rec.matched, "team": team, "structure": rec.structure, **found}, {}
    if rec.signal:
        yield "rematch", {"misaligned": [{"by": a, "about": b, "phi": p} for a, b, p in rec.misaligned]}, {}
