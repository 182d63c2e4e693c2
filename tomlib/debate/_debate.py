"""One debate of the coalition paper's §6.4: three debaters a side, five rounds, two speakers per side per round.

Settings (both drafts): ``no_tom`` (every debater ToM-0, speakers drawn at random); ``tom`` (the tested side's
debaters are ToM-0, ToM-1 and ToM-2, speakers at random); ``tom_matching`` (the tested side's speakers are the pair
the mechanism matches, from the debaters' belief-action alignment about each other). The other side is always ToM-0
with random speakers.

Each round the affirmative speaks, then the negative, then the judge gives a verdict on that round: affirmative,
negative or draw. Our reading of the evidence (the printed win rates are multiples of 1/55 = 1/(11 debates × 5
rounds), and Aff. + Neg. < 100% in two rows) is one verdict per round with draws allowed; win rates are shares of
all verdicts, and draws are reported on their own.

With matching, every debater of the tested side prepares an argument each round (with its ToM levels); the ToM-1 and
ToM-2 debaters score their belief about each teammate against what the teammate prepared (Appendix A), and
Algorithm 1 picks the two who speak, keeping them until a re-match signal. ``mechanism`` is the draft's: NeurIPS
pairs (re-matched the next round), or ICLR coalitions of at least ⌈3/2⌉ = 2 with the adaptation round (the team
stays one more round after a signal). An ICLR team of all three still lets only two speak: its best-aligned pair
(the lowest mean misalignment among the pair's members with beliefs; ties drawn, seeded), a rule of ours.
"""

from __future__ import annotations

import asyncio
import itertools
import random
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

import numpy as np

from tomlib.coalition import Algorithm1, AlignmentInstance, make_instance
from tomlib.debate._prompts import (
    SIDES,
    TOPIC,
    Verdict,
    debater_messages,
    debater_schema,
    judge_messages,
)
from tomlib.llm import ChatModel, SampleKey, StructuredOutputError
from tomlib.programming import alignment_schema, teammate_evaluation_messages
from tomlib.trace import RunLog

EXPERIMENT = "coalition.debate"
Setting = Literal["no_tom", "tom", "tom_matching"]
Mechanism = Literal["neurips", "iclr"]
SETTINGS: tuple[Setting, ...] = ("no_tom", "tom", "tom_matching")
TESTED_ORDERS = (0, 1, 2)


@dataclass(frozen=True)
class DebateConfig:
    setting: Setting = "no_tom"
    tested_side: str = "affirmative"
    rounds: int = 5
    epsilon: float = 0.25
    temperature: float = 0.7
    judge_temperature: float = 0.0
    max_tokens: int = 700
    selection: str | None = None  # which stable outcome is played (tomlib.coalition.SELECTIONS); None: the draft's
    mechanism: Mechanism = "neurips"  # the matching of the draft whose column this is (only with tom_matching)

    def __post_init__(self) -> None:
        if self.setting not in SETTINGS:
            raise ValueError(f"setting must be one of {', '.join(SETTINGS)}; got {self.setting!r}")
        if self.tested_side not in SIDES:
            raise ValueError(f"tested_side must be affirmative or negative; got {self.tested_side!r}")
        if self.mechanism not in ("neurips", "iclr"):
            raise ValueError(f"mechanism must be neurips or iclr; got {self.mechanism!r}")
        if not isinstance(self.rounds, int) or self.rounds < 1:
            raise ValueError(f"rounds must be a positive integer; got {self.rounds!r}")

    @property
    def label(self) -> str:
        """``tom_matching:affirmative``; ``no_tom`` has no tested side (one set of debates gives both columns). A rule
        other than the draft's default for the stable pair is appended: ``tom_matching:affirmative:best-aligned``."""
        if self.setting == "no_tom":
            return "no_tom"
        matching = self.setting == "tom_matching"
        draft = ":iclr" if matching and self.mechanism == "iclr" else ""
        rule = f":{self.selection}" if matching and self.selection else ""
        return f"{self.setting}:{self.tested_side}{draft}{rule}"

    def orders(self, side: str) -> tuple[int, ...]:
        """ToM orders of a side's three debaters."""
        return TESTED_ORDERS if (side == self.tested_side and self.setting != "no_tom") else (0, 0, 0)


def debater_names(side: str) -> list[str]:
    return [f"{side[:3].capitalize()}{i}" for i in (1, 2, 3)]


@dataclass
class DebateRound:
    round: int
    speakers: dict[str, list[str]]
    arguments: dict[str, str]
    picked_by: dict[str, str]
    scores: dict[str, dict[str, float]]
    verdict: str
    reason: str


@dataclass
class Debate:
    config: DebateConfig
    seed: int
    rounds: list[DebateRound] = field(default_factory=list)

    @property
    def condition(self) -> str:
        return self.config.label

    def tom_pair_speaks(self, r: int) -> bool:
        """Round r's tested-side speakers are its ToM-1 and ToM-2 debaters (the paper's cooperation)."""
        side = self.config.tested_side
        names = debater_names(side)
        return set(self.rounds[r - 1].speakers[side]) == {names[1], names[2]}


def _key(cfg: DebateConfig, seed: int, r: int, agent: str, purpose: str) -> SampleKey:
    return SampleKey(experiment=EXPERIMENT, condition=cfg.label, episode=seed, step=r, agent=agent, purpose=purpose)


async def _prepare(
    chat: ChatModel, cfg: DebateConfig, seed: int, r: int, name: str, side: str, k: int, transcript: str
) -> tuple[dict[str, Any], str, str]:
    mates = [n for n in debater_names(side) if n != name]
    try:
        reply = await chat.complete_json(
            debater_messages(name, side, k, mates, transcript, r, cfg.rounds),
            debater_schema(k),
            sample_key=_key(cfg, seed, r, name, "argue"),
            temperature=cfg.temperature,
            max_tokens=cfg.max_tokens,
        )
    except StructuredOutputError as exc:
        return {}, "(no argument: the model gave no valid reply)", f"no valid argument ({exc})"
    levels = reply.value.model_dump()
    top = levels[max(levels, key=lambda key: int(key.removeprefix("ToM_level")))]
    return levels, top["action"], ""


async def _evaluate(
    chat: ChatModel, cfg: DebateConfig, seed: int, r: int, name: str, belief: str, arguments: dict[str, str]
) -> dict[str, float]:
    try:
        reply = await chat.complete_json(
            teammate_evaluation_messages(name, belief, arguments),
            alignment_schema(tuple(arguments)),
            sample_key=_key(cfg, seed, r, name, "evaluate"),
            temperature=0.2,
            max_tokens=cfg.max_tokens,
        )
    except StructuredOutputError:
        return dict.fromkeys(arguments, 0.0)  # neutral, untrusted for ε < 0.5; the failed attempts are in the log
    return {n: float(getattr(reply.value, n).score) for n in arguments}


async def run_debate(
    chat: ChatModel, judge: ChatModel, cfg: DebateConfig, *, seed: int = 0, log: RunLog | None = None
) -> Debate:
    """Play one debate; speeches, ToM levels, alignment, the matched pair and every verdict go to ``log``."""
    rng = random.Random(f"{cfg.label}:{seed}")
    debate = Debate(cfg, seed)
    side_t = cfg.tested_side
    tested = debater_names(side_t)
    algo = None
    if cfg.setting == "tom_matching":
        orders = cfg.orders(side_t)
        base = make_instance(
            np.zeros((3, 3)),
            names=tested,
            no_beliefs=[n for n, k in zip(tested, orders, strict=True) if k == 0],
            epsilon=cfg.epsilon,
            min_size=2,
        )
        algo = Algorithm1(
            base, mechanism=cfg.mechanism, selection=cfg.selection, log=log, condition=cfg.label, episode=seed
        )
    if log is not None:
        log.event(
            "env_state",
            {"game": "debate", "topic": TOPIC, "setting": cfg.setting, "tested_side": cfg.tested_side},
            condition=cfg.label,
            episode=seed,
            step=0,
        )
    transcript: list[str] = []
    for r in range(1, cfg.rounds + 1):
        rnd = DebateRound(r, {}, {}, {}, {}, "", "")
        for side in SIDES:
            names, orders = debater_names(side), cfg.orders(side)
            text = "\n".join(transcript)
            if algo is not None and side == side_t:
                prepared = await asyncio.gather(
                    *(_prepare(chat, cfg, seed, r, n, side, k, text) for n, k in zip(names, orders, strict=True))
                )
                args = {n: p[1] for n, p in zip(names, prepared, strict=True)}
                matrix = np.zeros((3, 3))
                for i, (n, k, p) in enumerate(zip(names, orders, prepared, strict=True)):
                    if k > 0 and p[0]:
                        belief = p[0][f"ToM_level{k}"]["belief"]
                        mates = {m: args[m] for m in names if m != n}
                        got = await _evaluate(chat, cfg, seed, r, n, belief, mates)
                        rnd.scores[n] = got
                        for j, m in enumerate(names):
                            if m != n:
                                matrix[i, j] = got[m]
                rec = algo.step(matrix)
                what = "pair" if cfg.mechanism == "neurips" else "coalition"
                team = _two_of(algo.base.with_scores(matrix), rec.team, rng) if len(rec.team) > 2 else rec.team
                speakers = [names[i] for i in team]
                picked = f"matched {what} {rec.structure}" + (" (re-formed)" if rec.matched else " (kept)")
                if len(rec.team) > 2:
                    picked += f"; its best-aligned pair speaks: {', '.join(speakers)}"
                if len(speakers) != 2:  # nothing stable: fall back to a draw, and say so
                    speakers, picked = sorted(rng.sample(names, 2)), f"random (no stable {what}: {rec.structure})"
                levels_of = dict(zip(names, prepared, strict=True))
            else:
                speakers, picked = sorted(rng.sample(names, 2)), "random"
                order_of = dict(zip(names, orders, strict=True))
                got = await asyncio.gather(
                    *(_prepare(chat, cfg, seed, r, n, side, order_of[n], text) for n in speakers)
                )
                levels_of = dict(zip(speakers, got, strict=True))
            rnd.speakers[side], rnd.picked_by[side] = speakers, picked
            for n, (levels, argument, problem) in levels_of.items():
                rnd.arguments[n] = argument
                if log is not None:
                    log.event(
                        "belief",
                        {
                            "tom": cfg.orders(side)[names.index(n)],
                            "levels": levels,
                            "argument": argument,
                            "problem": problem,
                        },
                        condition=cfg.label,
                        episode=seed,
                        step=r,
                        agent=n,
                    )
                    log.event(
                        "action",
                        {"action": argument, "spoke": n in speakers, "side": side},
                        condition=cfg.label,
                        episode=seed,
                        step=r,
                        agent=n,
                    )
            transcript += [f"[round {r}, {side}] {n}: {rnd.arguments[n]}" for n in speakers]
        try:
            v = await judge.complete_json(
                judge_messages("\n".join(transcript), r),
                Verdict,
                sample_key=_key(cfg, seed, r, "judge", "verdict"),
                temperature=cfg.judge_temperature,
                max_tokens=300,
            )
            rnd.verdict, rnd.reason = v.value.winner, v.value.reason
        except StructuredOutputError as exc:
            rnd.verdict, rnd.reason = "none", f"no valid verdict ({exc})"
        if log is not None:
            log.event(
                "score",
                {
                    "metric": "verdict",
                    "winner": rnd.verdict,
                    "reason": rnd.reason,
                    "value": float(rnd.verdict == side_t),
                    "speakers": rnd.speakers,
                    "picked_by": rnd.picked_by,
                },
                condition=cfg.label,
                episode=seed,
                step=r,
                agent="judge",
            )
        debate.rounds.append(rnd)
    return debate


def best_pairs(inst: AlignmentInstance, team: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The pairs of ``team`` with the strongest alignment (the lowest mean misalignment φ among their members with
    beliefs; a pair with none comes last): who may speak for a team of more than two."""
    if len(team) <= 2:
        return [team]

    def key(pair: tuple[int, ...]) -> tuple[int, Fraction]:
        a, b = pair
        vals = [inst.exact_phi(i, j) for i, j in ((a, b), (b, a)) if inst.has_beliefs[i]]
        return (0, sum(vals, Fraction(0)) / len(vals)) if vals else (1, Fraction(0))

    pairs = list(itertools.combinations(team, 2))
    best = min(key(p) for p in pairs)
    return [p for p in pairs if key(p) == best]


def _two_of(inst: AlignmentInstance, team: tuple[int, ...], rng: random.Random) -> tuple[int, ...]:
    """The speakers of a team: its best-aligned pair (:func:`best_pairs`), ties drawn with ``rng``."""
    return rng.choice(best_pairs(inst, team))


@dataclass(frozen=True)
class WinRates:
    affirmative: float
    negative: float
    draw: float
    none: float
    verdicts: int


def win_rates(debates: list[Debate]) -> WinRates:
    """Shares of all round verdicts (the paper's Table 4, under our one-verdict-per-round reading)."""
    verdicts = [r.verdict for d in debates for r in d.rounds]
    n = len(verdicts)
    share = {w: (verdicts.count(w) / n if n else float("nan")) for w in ("affirmative", "negative", "draw", "none")}
    return WinRates(share["affirmative"], share["negative"], share["draw"], share["none"], n)


def cooperation_rate(debates: list[Debate], r: int) -> float:
    """Share of debates whose round-r tested-side speakers are its ToM-1 and ToM-2 debaters (9.1% → 18.2% in §6.4:
    1 and 2 of 11 debates)."""
    ok = [d.tom_pair_speaks(r) for d in debates if len(d.rounds) >= r]
    return sum(ok) / len(ok) if ok else float("nan")
