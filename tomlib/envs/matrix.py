"""The repeated matrix game (``adaptive-tom-aaai2026.txt`` §4.1, §4.2, §6.2).

Each round both players pick one of the options at once; both get ``payoff`` points when the picks differ
and 0 when they are equal. 15 rounds, so a player scores 0-75. Memory-1: a player sees the partner's previous
choice; Memory-N: the counts of the partner's past choices. Episodes start uncoordinated: before round 1
both players' "previous" choice is ``start`` (§4.2), which also counts once in Memory-N.
The 3-action variant (§6.2) has options A/B/C: two replies coordinate with each partner choice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tomlib.envs._base import Game, GameInfo, IllegalAction

OPTIONS = "ABCDEFGH"


@dataclass(frozen=True)
class MatrixState:
    """Round number, each player's previous choice and choice counts, points so far, the history."""

    round: int
    last: tuple[str, str]
    counts: tuple[tuple[int, ...], tuple[int, ...]]
    points: int
    history: tuple[tuple[str, str], ...] = ()


class RepeatedMatrixGame(Game):
    """Anti-coordination: both score only when the choices differ."""

    def __init__(self, memory: str = "1", actions: int = 2, rounds: int = 15, payoff: int = 5, start: str = "A"):
        memory = str(memory).lower()
        if memory not in {"1", "n"}:
            raise ValueError(f"memory must be '1' (previous choice) or 'n' (counts); got {memory!r}")
        if not 2 <= int(actions) <= len(OPTIONS):
            raise ValueError(f"actions must be between 2 and {len(OPTIONS)}; got {actions}")
        self.memory, self.n_actions, self.rounds, self.payoff = memory, int(actions), int(rounds), int(payoff)
        self.options = tuple(OPTIONS[: self.n_actions])
        if start not in self.options:
            raise ValueError(f"start must be one of {self.options}; got {start!r}")
        self.start = start
        self.params = {"memory": memory, "actions": self.n_actions, "rounds": self.rounds}
        label = f"Memory-{'1' if memory == '1' else 'N'}, {self.n_actions} actions"
        self.info = GameInfo(
            name="matrix",
            metric="point",
            better="higher",
            horizon=self.rounds,
            worst=0.0,
            description=f"Repeated matrix game ({label}): {payoff} points each when the choices differ.",
        )

    def reset(self, seed: int | None = None) -> MatrixState:
        counts = tuple(1 if o == self.start else 0 for o in self.options)
        return MatrixState(round=0, last=(self.start, self.start), counts=(counts, counts), points=0)

    def legal_actions(self, state: MatrixState, player: int) -> tuple[str, ...]:
        return () if self.is_terminal(state) else self.options

    def step(self, state: MatrixState, joint: Sequence[str]) -> MatrixState:
        if self.is_terminal(state):
            raise IllegalAction("the game is over")
        a0, a1 = self.check_joint(state, joint)
        counts = tuple(
            tuple(c + (o == a) for o, c in zip(self.options, state.counts[p], strict=True))
            for p, a in ((0, a0), (1, a1))
        )
        return MatrixState(
            round=state.round + 1,
            last=(a0, a1),
            counts=(counts[0], counts[1]),
            points=state.points + self.joint_value(state, (a0, a1)),
            history=(*state.history, (a0, a1)),
        )

    def is_terminal(self, state: MatrixState) -> bool:
        return state.round >= self.rounds

    def score(self, state: MatrixState) -> float:
        return float(state.points)

    def joint_value(self, state: MatrixState, joint: Sequence[str]) -> float:
        return self.payoff if joint[0] != joint[1] else 0

    def decision_key(self, state: MatrixState) -> bool:
        """Whether the game is over: the payoffs are the same in every round."""
        return self.is_terminal(state)

    def environment_actions(self, state: MatrixState, player: int) -> tuple[str, ...]:
        """Memory-1: the partner repeats its previous choice. Memory-N: it picks its most frequent one."""
        if self.memory == "1":
            return (state.last[player],)
        counts = state.counts[player]
        top = max(counts)
        return tuple(o for o, c in zip(self.options, counts, strict=True) if c == top)

    def render(self, state: MatrixState) -> str:
        hist = " ".join(f"{a}{b}" for a, b in state.history) or "-"
        return f"round {state.round}/{self.rounds}, points {state.points}, history {hist}"

    def describe_history(self, history: Sequence[tuple[str, str]], player: int, first_step: int = 1) -> str:
        """Nothing: what a player remembers of past rounds is the setting itself (Memory-1 or Memory-N)."""
        return ""

    def describe(self, state: MatrixState, player: int) -> str:
        partner = 1 - player
        opts = ", ".join(self.options)
        lines = [
            f"Round {state.round + 1} of {self.rounds}. You are Player {player + 1}. Each round both players choose "
            f"one of {opts} at the same time; both get {self.payoff} points if the choices differ and 0 if they "
            f"are the same. Points so far (each): {state.points}.",
        ]
        if self.memory == "1":
            lines.append(f"Last round you chose {state.last[player]} and your partner chose {state.last[partner]}.")
        else:
            mine = ", ".join(f"{o}: {c}" for o, c in zip(self.options, state.counts[player], strict=True))
            theirs = ", ".join(f"{o}: {c}" for o, c in zip(self.options, state.counts[partner], strict=True))
            lines.append(f"So far your partner chose {theirs}; you chose {mine}.")
        lines.append(f"Legal actions: {opts}.")
        return "\n".join(lines)
