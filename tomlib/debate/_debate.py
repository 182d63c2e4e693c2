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
from tomlib.recording import record

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

    def score_event(self, tested_side: str) -> dict[str, Any]:
        """The judge's ``score`` event of this round: its verdict, and who spoke for each side and why."""
        return {
            "metric": "verdict",
            "winner": self.verdict,
            "reason": self.reason,
            "value": float(self.verdict == tested_side),
            "speakers": self.speakers,
            "picked_by": self.picked_by,
        }


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


async def run_debate(chat: ChatModel, judge: ChatModel, cfg: DebateConfig, *, seed: int = 0) -> Debate:
    """One debate (NeurIPS §6.3): each round, two debaters of each side speak (for the tested side under ToM matching,
    the pair Algorithm 1 matches from their mutual scores; otherwise two drawn at random), then the judge gives its
    verdict. Speeches, ToM levels, alignment, the matched pair and every verdict are recorded to the run log in
    force."""
    rng = random.Random(f"{cfg.label}:{seed}")
    debate = Debate(cfg, seed)
    algo = _matching(cfg, seed)
    at: dict[str, Any] = {"condition": cfg.label, "episode": seed}
    state = {"game": "debate", "topic": TOPIC, "setting": cfg.setting, "tested_side": cfg.tested_side}
    record("env_state", state, step=0, **at)
    transcript: list[str] = []
    for r in range(1, cfg.rounds + 1):
        rnd = DebateRound(r, {}, {}, {}, {}, "", "")
        for side in SIDES:
            text = "\n".join(transcript)
            if algo is not None and side == cfg.tested_side:
                speakers, picked, levels_of = await _matched(chat, cfg, seed, r, side, text, algo, rnd, rng)
            else:
                speakers, picked, levels_of = await _drawn(chat, cfg, seed, r, side, text, rng)
            rnd.speakers[side], rnd.picked_by[side] = speakers, picked
            for n, (levels, argument, problem) in levels_of.items():
                rnd.arguments[n] = argument
                tom = cfg.orders(side)[debater_names(side).index(n)]
                speech = {"tom": tom, "levels": levels, "argument": argument, "problem": problem}
                record("belief", speech, step=r, agent=n, **at)
                record("action", {"action": argument, "spoke": n in speakers, "side": side}, step=r, agent=n, **at)
            transcript += [f"[round {r}, {side}] {n}: {rnd.arguments[n]}" for n in speakers]
        rnd.verdict, rnd.reason = await _verdict(judge, cfg, seed, r, transcript)
        record("score", rnd.score_event(cfg.tested_side), step=r, agent="judge", **at)
        debate.rounds.append(rnd)
    return debate


Prepared = dict[str, tuple[dict[str, Any], str, str]]
"""Each speaking debater's (ToM levels, argument, problem) of a round."""


def _matching(cfg: DebateConfig, seed: int) -> Algorithm1 | None:
    """Algorithm 1 over the tested side's three debaters (those of ToM-0 hold no beliefs), under ToM matching."""
    if cfg.setting != "tom_matching":
        return None
    tested, orders = debater_names(cfg.tested_side), cfg.orders(cfg.tested_side)
    base = make_instance(
        np.zeros((3, 3)),
        names=tested,
        no_beliefs=[n for n, k in zip(tested, orders, strict=True) if k == 0],
        epsilon=cfg.epsilon,
        min_size=2,
    )
    return Algorithm1(base, mechanism=cfg.mechanism, selection=cfg.selection, condition=cfg.label, episode=seed)


async def _matched(
    chat: ChatModel,
    cfg: DebateConfig,
    seed: int,
    r: int,
    side: str,
    text: str,
    algo: Algorithm1,
    rnd: DebateRound,
    rng: random.Random,
) -> tuple[list[str], str, Prepared]:
    """The tested side's speakers under ToM matching: every debater prepares, each believer scores its mates
    (``rnd.scores``), Algorithm 1 matches on the scores, and the matched pair speaks (a coalition of three: its
    best-aligned pair; nothing stable: two drawn at random, said so)."""
    names, orders = debater_names(side), cfg.orders(side)
    prepared = await asyncio.gather(
        *(_prepare(chat, cfg, seed, r, n, side, k, text) for n, k in zip(names, orders, strict=True))
    )
    args = {n: p[1] for n, p in zip(names, prepared, strict=True)}
    matrix = np.zeros((3, 3))
    for i, (n, k, p) in enumerate(zip(names, orders, prepared, strict=True)):
        if k > 0 and p[0]:
            belief = p[0][f"ToM_level{k}"]["belief"]
            got = await _evaluate(chat, cfg, seed, r, n, belief, {m: args[m] for m in names if m != n})
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
    return speakers, picked, dict(zip(names, prepared, strict=True))


async def _drawn(
    chat: ChatModel, cfg: DebateConfig, seed: int, r: int, side: str, text: str, rng: random.Random
) -> tuple[list[str], str, Prepared]:
    """Two debaters of ``side`` drawn at random; only they prepare."""
    names, orders = debater_names(side), cfg.orders(side)
    speakers = sorted(rng.sample(names, 2))
    order_of = dict(zip(names, orders, strict=True))
    got = await asyncio.gather(*(_prepare(chat, cfg, seed, r, n, side, order_of[n], text) for n in speakers))
    return speakers, "random", dict(zip(speakers, got, strict=True))


async def _verdict(judge: ChatModel, cfg: DebateConfig, seed: int, r: int, transcript: list[str]) -> tuple[str, str]:
    """The judge's verdict on the debate so far: the winning side and its reason (no valid verdict: ``none``)."""
    try:
        v = await judge.complete_json(
            judge_messages("\n".join(transcript), r),
            Verdict,
            sample_key=_key(cfg, seed, r, "judge", "verdict"),
            temperature=cfg.judge_temperature,
            max_tokens=300,
        )
    except StructuredOutputError as exc:
        return "none", f"no valid verdict ({exc})"
    return v.value.winner, v.value.reason


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
