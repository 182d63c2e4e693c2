"""Which stable outcome is played when several are stable: a rule the papers leave open, made a named parameter.

Both drafts compute "a stable matching" and cooperate in it; neither says which one when several exist, and with
few agents several usually do (with three debaters and uniform scores, in 92% of draws). So the rule decides who
cooperates. The rules, each over every stable outcome (enumerated exactly, :func:`stable_outcomes`):

- ``uniform``: one drawn uniformly at random (seeded). It prefers nothing the text does not, so it is the default of
  the NeurIPS pairs, which are "computed using algorithms from matching theory" with no further rule.
- ``best-aligned``: the outcome whose team has the strongest belief alignment (the lowest mean misalignment over its
  members with beliefs), ties drawn uniformly. The ICLR draft's text: "The optimal coalition S with the strongest
  belief alignment will be the team selected for cooperation"; the default of its coalitions.
- ``fewest-outside``: tomlib's first rule, the solvers' objective (fewest agents with beliefs left out, then the
  lowest total misalignment); not from the text. On uniform score draws it picks the whole team of three far more
  often than the others in the reasoning team, and the ToM-1/ToM-2 pair in the debate (notebooks 07 and 12 measure
  it).

The *team* of a coalition structure is its coalition with the strongest alignment (:func:`selected_team`); of a
matching, every matched agent.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from tomlib.coalition._asp import solve_coalitions, solve_pairs
from tomlib.coalition._core import CoalitionStructure, brute_force_stable, selected_team, value
from tomlib.coalition._instance import AlignmentInstance, CoalitionInputError
from tomlib.coalition._pairs import Pairs, brute_force_stable_pairs, partners

Mechanism = Literal["iclr", "neurips"]
Selection = Literal["uniform", "best-aligned", "fewest-outside"]
SELECTIONS: dict[str, str] = {
    "uniform": "uniformly at random among the stable outcomes (seeded): the text prefers none",
    "best-aligned": "the stable outcome whose team has the strongest belief alignment (ICLR: 'the optimal coalition "
    "S with the strongest belief alignment will be the team selected')",
    "fewest-outside": "tomlib's first rule, not from the text: fewest agents with beliefs left out, then the lowest "
    "total misalignment",
}
DEFAULT_SELECTION: dict[str, Selection] = {"iclr": "best-aligned", "neurips": "uniform"}
"""Each draft's default: the rule its text supports best (see the module docstring)."""
MAX_ENUMERATED = 8
"""Largest instance whose stable outcomes are all enumerated (``uniform`` and ``best-aligned`` need them)."""
MAX_ENUMERATED_MANY = 6
"""The same for one-to-many matchings (quota > 1): 2^15 graphs at 6 agents, 2^21 at 7."""


def check_selection(selection: str | None, mechanism: str) -> Selection:
    """The rule to use (``None``: the draft's default); an unknown name is an error listing the rules."""
    if selection is None:
        return DEFAULT_SELECTION[mechanism]
    if selection not in SELECTIONS:
        raise CoalitionInputError(
            f"Unknown selection rule {selection!r}; use one of: "
            + "; ".join(f"{k} ({v})" for k, v in SELECTIONS.items())
            + "."
        )
    return selection  # type: ignore[return-value]


@dataclass(frozen=True)
class Outcome:
    """One stable outcome and the team that cooperates in it."""

    team: tuple[int, ...]
    structure: CoalitionStructure | None = None
    pairs: Pairs | None = None

    def label(self, names: Sequence[str]) -> str:
        if self.structure is not None:
            return self.structure.label(names)
        return " ".join(f"{{{names[a]}, {names[b]}}}" for a, b in sorted(self.pairs or ())) or "no pairs"


def _of_structure(inst: AlignmentInstance, structure: CoalitionStructure) -> Outcome:
    return Outcome(selected_team(inst, structure) or (), structure=structure)


def _of_pairs(pairs: Pairs) -> Outcome:
    return Outcome(tuple(sorted({i for p in pairs for i in p})), pairs=pairs)


def stable_outcomes(inst: AlignmentInstance, mechanism: Mechanism) -> list[Outcome]:
    """Every stable outcome, in a fixed order (exact enumeration, up to :data:`MAX_ENUMERATED` agents)."""
    most = MAX_ENUMERATED_MANY if mechanism == "neurips" and inst.quota > 1 else MAX_ENUMERATED
    if inst.n > most:
        raise CoalitionInputError(
            f"Enumerating every stable outcome takes at most {most} agents; got {inst.n}. Use the selection rule "
            "'fewest-outside', which the exact solvers answer at any size."
        )
    if mechanism == "iclr":
        return [_of_structure(inst, s) for s in brute_force_stable(inst)]
    return [_of_pairs(p) for p in sorted(brute_force_stable_pairs(inst), key=sorted)]


def alignment_of(inst: AlignmentInstance, outcome: Outcome) -> tuple[int, Fraction]:
    """How strongly the team is aligned, lower is better: (0 if it has a member with beliefs else 1, the mean over
    those members of their value of the team: B' for a coalition, the mean weight of its partners in a matching)."""
    if outcome.pairs is not None:
        vals = [
            Fraction(sum(int(inst.weights[i, j]) for j in mates), inst.resolution * len(mates))
            for i in outcome.team
            if inst.has_beliefs[i] and (mates := partners(outcome.pairs, i))
        ]
    else:
        vals = [v for i in outcome.team if inst.has_beliefs[i] and (v := value(inst, i, outcome.team)) is not None]
    return (0, sum(vals, Fraction(0)) / len(vals)) if vals else (1, Fraction(0))


def candidates(inst: AlignmentInstance, mechanism: Mechanism, selection: Selection) -> tuple[list[Outcome], int]:
    """The outcomes ``selection`` draws from (uniformly), and how many outcomes are stable (-1: not counted, the
    solver's optimum)."""
    if selection == "fewest-outside":
        if mechanism == "iclr":
            structure = solve_coalitions(inst).structure
            return ([_of_structure(inst, structure)] if structure is not None else []), -1
        pairs = solve_pairs(inst).pairs
        return ([_of_pairs(pairs)] if pairs is not None else []), -1
    outcomes = stable_outcomes(inst, mechanism)
    total = len(outcomes)
    if selection == "best-aligned" and outcomes:
        best = min(alignment_of(inst, o) for o in outcomes)
        outcomes = [o for o in outcomes if alignment_of(inst, o) == best]
    return outcomes, total


def choose(
    inst: AlignmentInstance, mechanism: Mechanism, selection: Selection, rng: random.Random
) -> tuple[Outcome | None, int]:
    """The outcome ``selection`` plays (None: nothing is stable) and how many outcomes are stable."""
    outcomes, total = candidates(inst, mechanism, selection)
    return (rng.choice(outcomes) if outcomes else None), total


def team_shares(inst: AlignmentInstance, mechanism: Mechanism, selection: Selection) -> dict[tuple[int, ...], float]:
    """The exact probability of each team under ``selection`` (no draw: the candidates split evenly).

    Args:
        inst: the instance whose stable outcomes are the candidates.
        mechanism: ``iclr`` (stable coalitions, §4.2 of the ICLR draft) or ``neurips`` (stable pairs, the NeurIPS
            draft's matching).
        selection: the rule that picks among stable outcomes (:data:`SELECTIONS`; Algorithm 1: "the coalition with
            the strongest belief alignment" is ``best-aligned``).
    """
    outcomes, _ = candidates(inst, mechanism, selection)
    shares: dict[tuple[int, ...], float] = {}
    for o in outcomes:
        shares[o.team] = shares.get(o.team, 0.0) + 1.0 / len(outcomes)
    return shares
