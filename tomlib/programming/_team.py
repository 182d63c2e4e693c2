"""One episode of iterative programming: a ToM-k project manager (PM), four engineers, five rounds (§3, §6.3).

Each round r:

1. The PM updates its beliefs and instructs (Appendix C's levels; the highest level's action is sent to every
   engineer). From round 2 it sees what its team did last round and how it scored them.
2. Every engineer acts: code plus a one-line description of what it did.
3. The PM self-evaluates its belief against each engineer's action (Appendix A): scores s in [-1, 1]. A ToM-0 PM has
   no belief, so it scores the actions against its own instruction (what it expected them to do).
4. FTM^k = share of the team's engineers with φ = (1 - s)/2 ≤ ε (§6.2; ``tomlib.coalition``). With matching, the
   team is the PM's coalition from Algorithm 1 (formed in round 1, re-formed after a re-match signal); without, it
   is all four engineers. With ``preferences="all"`` the engineers of ToM ≥ 1 score their stated belief against
   every teammate's action too (Appendix A among peers), and their preferences enter the matching.
5. The team's answer (our decision, the paper does not say): the code of the team engineer the PM scored highest
   (ties: the engineer with code, then the lowest index). Pass@1 in round r is whether that code passes every test.

Every engineer acts in every round, also outside the coalition: the PM needs fresh scores of all of them to decide
a re-match. With matching, the PM's next prompt cites only its team (``pm_cites``), and only the team can supply
the answer.

The protocol's choices the paper leaves open are fields of :class:`TeamConfig`, each with our default first:
``pm_feedback`` (the PM's history shows its own scores and explanations, or the actions alone as in Appendix C),
``pm_cites`` (its team, or every engineer), ``rematch`` (a signal takes effect after one more round, ICLR §5.1's
adaptation phase, or the next round, Algorithm 1 lines 6 and 14), ``initial`` (the first coalition is matched in
round 1, or is all agents until the first re-match, NeurIPS §6.2) and ``preferences`` (the PM's, or every
believer's).
Hidden tests never feed back into the prompts (Pass@1 would otherwise leak); MBPP's asserts are part of its task
statement, as in MBPP's own prompt format.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from tomlib.coalition import (
    INITIALS,
    Algorithm1,
    Algorithm1Run,
    AlignmentInstance,
    RoundRecord,
    cosine_alignment,
    ftm,
    make_instance,
    record_round,
)
from tomlib.datasets import CodeTask
from tomlib.llm import ChatModel, SampleKey, StructuredOutputError
from tomlib.programming._parse import EngineerReply, parse_engineer
from tomlib.programming._prompts import (
    alignment_schema,
    engineer_messages,
    evaluation_messages,
    pm_messages,
    pm_schema,
    task_statement,
    teammate_evaluation_messages,
)
from tomlib.recording import record

EXPERIMENT = "coalition.programming"
"""Sample-key experiment shared by notebooks 08-11, so a condition they share is recorded and paid for once."""
MAX_TOM = 2
PMHistory = Literal["full", "last"]
PM_HISTORIES: tuple[str, ...] = ("full", "last")
ALIGNMENTS: tuple[str, ...] = ("self-evaluation", "cosine")
PM_FEEDBACKS: tuple[str, ...] = ("scores", "actions")
PM_CITES: tuple[str, ...] = ("team", "all")
REMATCHES: tuple[str, ...] = ("adaptation", "next")
PREFERENCES: tuple[str, ...] = ("pm", "all")
EARLIER_CHARS = 200
"""Earlier rounds of the full history are shown clipped to this many characters per line, so five rounds of four
engineers fit a 2k-token context beside the task."""


@dataclass(frozen=True)
class TeamConfig:
    """One condition: the PM's and the engineers' ToM orders, matching on or off, and the run's knobs (ICLR §6.1, F.3).

    Attributes:
        pm_tom: the PM's ToM order (0-2; Tables 1-3's rows).
        eng_tom: the engineers' ToM order (0-2).
        matching: whether Algorithm 1 forms the PM's coalition (Table 1's "with matching").
        engineers: how many engineers (the paper's team: 4).
        rounds: rounds per task (Algorithm 1's R).
        epsilon: the trust threshold ε (φ_ij ≤ ε trusts; §4, Fig. 2 sweeps it).
        pm_temperature: the PM's sampling temperature.
        eng_temperature: the engineers' sampling temperature.
        pm_max_tokens: the PM's reply budget per call.
        eng_max_tokens: an engineer's reply budget per call.
        eval_max_tokens: the PM's self-evaluation reply budget.
        selection: which stable outcome is played (``tomlib.coalition.SELECTIONS``); None: the ICLR draft's default.
        lam: λ, the weight of the engineers' abilities α in the PM's preferences (§5.2).

    The other fields document themselves below.
    """

    pm_tom: int = 1
    eng_tom: int = 0
    matching: bool = False
    engineers: int = 4
    rounds: int = 5
    epsilon: float = 0.25
    pm_temperature: float = 0.2
    eng_temperature: float = 0.7
    pm_max_tokens: int = 700
    eng_max_tokens: int = 512
    eval_max_tokens: int = 700
    selection: str | None = None  # which stable outcome is played (tomlib.coalition.SELECTIONS); None: ICLR's default
    pm_history: PMHistory = "full"
    """What the PM's belief update sees of the past: ``full``, every earlier round (ICLR Algorithm 1 line 4, a^{1:R-1});
    ``last``, the previous round only (NeurIPS eq. 1's a_{-i})."""
    abilities: tuple[float, ...] = ()
    """α of each engineer (§5.2), added to the PM's preferences with weight ``lam``; empty: α = 0, as in every LLM
    experiment of the paper."""
    lam: float = 1.0
    alignment: str = "self-evaluation"
    """How the PM's belief is scored against each engineer's action: ``self-evaluation`` (Appendix A's prompt, one call
    a round) or ``cosine``, Appendix A's extension: the cosine of TF-IDF embeddings of the belief and the action
    (:func:`tomlib.coalition.cosine_alignment`; no call)."""
    pm_sees_beliefs: bool = True
    """Whether the engineers' stated beliefs (their "Belief:" lines) reach the PM: both drafts condition the PM's
    k-level belief on the others' (k-1)-level beliefs b^{k-1}_{-i}."""
    pm_feedback: str = "scores"
    """What the PM's history shows of each engineer from round 2: ``scores``, its action with the PM's own alignment
    score and explanation (ours: what Algorithm 1's preferences rest on); ``actions``, the action alone (Appendix C's
    prompt shows neither)."""
    pm_cites: str = "team"
    """With matching, whom the PM's history cites: ``team``, its coalition (ours); ``all``, every engineer."""
    rematch: str = "adaptation"
    """When a re-match signal takes effect: ``adaptation``, after the team stays one more round (ICLR §5.1's
    adaptation phase); ``next``, in the next round (Algorithm 1's lines 6 and 14)."""
    initial: str = "match"
    """The first coalition: ``match``, matched on round 1's scores (ICLR Alg. 1 line 6); ``all``, every agent until
    the first re-match, counted as the first coalition (NeurIPS §6.2, "the initial coalition l1 includes all
    agents")."""
    preferences: str = "pm"
    """Whose preferences enter the matching: ``pm``, the PM's alone (ours; §6.3: the PM selects its coalition);
    ``all``, every agent with beliefs (Algorithm 1 line 2, "for each agent i ∈ N"): engineers of ToM ≥ 1 score
    their stated belief against the PM's instruction and each other engineer's action."""

    def __post_init__(self) -> None:
        for name in ("pm_tom", "eng_tom"):
            v = getattr(self, name)
            if not isinstance(v, int) or not 0 <= v <= MAX_TOM:
                raise ValueError(f"{name} must be 0, 1 or 2 (the orders the paper uses); got {v!r}")
        if not 2 <= self.engineers <= 8:
            raise ValueError(f"engineers must be between 2 and 8; got {self.engineers!r}")
        if not isinstance(self.rounds, int) or self.rounds < 1:
            raise ValueError(f"rounds must be a positive integer; got {self.rounds!r}")
        if self.abilities and (
            len(self.abilities) != self.engineers or not all(math.isfinite(float(a)) for a in self.abilities)
        ):
            raise ValueError(f"abilities needs one finite α per engineer ({self.engineers}); got {self.abilities!r}")
        if self.alignment not in ALIGNMENTS:
            raise ValueError(f"alignment must be one of {', '.join(ALIGNMENTS)}; got {self.alignment!r}")
        if self.pm_history not in PM_HISTORIES:
            raise ValueError(f"pm_history must be one of {', '.join(PM_HISTORIES)}; got {self.pm_history!r}")
        for name, allowed in PROTOCOL_CHOICES.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {getattr(self, name)!r}")

    @property
    def setting(self) -> str:
        return "matching" if self.matching else "no_matching"

    @property
    def label(self) -> str:
        """``pm1-eng0-matching``: the condition name in run logs and sample keys (a rule other than the draft's
        default for the stable outcome is appended: ``pm1-eng0-matching-uniform``)."""
        rule = f"-{self.selection}" if self.matching and self.selection else ""
        seen = "" if self.pm_history == "full" else f"-{self.pm_history}"
        seen += "" if self.pm_sees_beliefs else "-nobeliefs"
        seen += "" if self.alignment == "self-evaluation" else f"-{self.alignment}"
        seen += "" if self.pm_feedback == "scores" else f"-{self.pm_feedback}"
        if self.matching:
            seen += "" if self.pm_cites == "team" else "-citeall"
            seen += "" if self.rematch == "adaptation" else f"-rematch{self.rematch}"
            seen += "" if self.initial == "match" else f"-initial{self.initial}"
            seen += "-prefsall" if self.engineers_score else ""  # ToM-0 engineers have none to add
        if self.matching and self.abilities:
            seen += (
                "-alpha" + ",".join(f"{a:g}" for a in self.abilities) + ("" if self.lam == 1 else f"-lam{self.lam:g}")
            )
        return f"pm{self.pm_tom}-eng{self.eng_tom}-{self.setting}{rule}{seen}"

    def names(self) -> list[str]:
        return [f"Engineer{i}" for i in range(1, self.engineers + 1)]

    @property
    def engineers_score(self) -> bool:
        """Whether the engineers' beliefs are scored and enter the matching (``preferences="all"``, ToM ≥ 1)."""
        return self.matching and self.preferences == "all" and self.eng_tom > 0


PROTOCOL_CHOICES: dict[str, tuple[str, ...]] = {
    "pm_feedback": PM_FEEDBACKS,
    "pm_cites": PM_CITES,
    "rematch": REMATCHES,
    "initial": INITIALS,
    "preferences": PREFERENCES,
}
"""The protocol's readings (TeamConfig fields) and their values, our default first."""


@dataclass
class EngineerTurn:
    name: str
    code: str
    action: str
    belief: str
    problem: str = ""
    passed: bool | None = None
    status: str = ""
    reason: str = ""

    def event(self, eng_tom: int) -> dict[str, Any]:
        """The turn's ``action`` event (its tests' outcome comes later, from ``check``)."""
        return {
            "eng_tom": eng_tom,
            "action": self.action,
            "belief": self.belief,
            "code": self.code,
            "problem": self.problem,
        }


@dataclass
class RoundResult:
    round: int
    levels: dict[str, Any]
    instruction: str
    belief: str
    turns: list[EngineerTurn]
    scores: dict[str, float]
    explanations: dict[str, str]
    evaluation_problem: str
    team: list[str]
    structure: str
    matched: bool
    rematch_signal: bool
    ftm_team: float
    ftm_all: float
    answer: str
    answer_passed: bool | None = None

    def turn(self, name: str) -> EngineerTurn:
        return next(t for t in self.turns if t.name == name)

    def events(self) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
        """The round's outcome once its code is checked: each engineer's ``verification``, then the PM's ``score``
        (FTM over all other agents, ICLR §6.2)."""
        for t in self.turns:
            yield "verification", {"passed": t.passed, "status": t.status, "reason": t.reason}, {"agent": t.name}
        score = {
            "metric": "ftm",
            "value": round(100 * self.ftm_all, 2),
            "answer": self.answer,
            "passed": self.answer_passed,
            "ftm_all": self.ftm_all,
            "ftm_team": self.ftm_team,
            "team": self.team,
        }
        yield "score", score, {"agent": "PM"}


@dataclass
class Episode:
    """One task under one condition and seed; ``rounds`` in order. Test outcomes are filled in by ``check``."""

    task: CodeTask
    config: TeamConfig
    seed: int
    rounds: list[RoundResult] = field(default_factory=list)
    coalition: Algorithm1Run | None = None  # Algorithm 1's record, with matching

    @property
    def condition(self) -> str:
        return f"{self.task.benchmark}:{self.task.task_id}:{self.config.label}"

    @property
    def matching_rounds(self) -> list[int]:
        return list(self.coalition.matching_rounds) if self.coalition else []

    def lifetimes(self) -> list[int]:
        """Rounds each coalition stayed in force (§6.2); empty without matching."""
        return self.coalition.lifetimes() if self.coalition else []

    @property
    def coalition_lifetime(self) -> float:
        return self.coalition.coalition_lifetime if self.coalition else float("nan")


def _key(task: CodeTask, cfg: TeamConfig, seed: int, r: int, agent: str, purpose: str) -> SampleKey:
    return SampleKey(
        experiment=EXPERIMENT,
        condition=f"{task.benchmark}:{task.task_id}:{cfg.label}",
        episode=seed,
        step=r,
        agent=agent,
        purpose=purpose,
    )


def _clip(text: str, n: int = EARLIER_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _history(past: Sequence[RoundResult], cfg: TeamConfig) -> str:
    """What the PM's belief update conditions on (ICLR Alg. 1 line 4: a^{1:R-1} and the others' b^{k-1}; NeurIPS
    eq. 1: a_{-i} and b^{k-1}_{-i}): the last round in full, earlier rounds clipped (``pm_history="full"``), and each
    engineer's stated belief when ``pm_sees_beliefs``. With matching only the PM's team is cited (``pm_cites``); its
    own scores and explanations are shown with ``pm_feedback="scores"``."""
    if not past:
        return ""
    shown = past if cfg.pm_history == "full" else past[-1:]
    lines = []
    for rr in shown:
        last = rr is past[-1]
        clip = (lambda t: " ".join(t.split())) if last else _clip
        head = "Last round" if last else "Earlier"
        lines.append(f"{head} (round {rr.round}) you instructed: {clip(rr.instruction)}")
        lines.append(f"Your belief was: {clip(rr.belief)}")
        if cfg.matching:
            lines.append(f"You worked with the coalition {rr.structure}; your team was {', '.join(rr.team)}.")
        cited = rr.team if cfg.matching and cfg.pm_cites == "team" else [t.name for t in rr.turns]
        who = "your team" if cited == rr.team else "the engineers"
        if cfg.pm_feedback == "scores":
            lines.append(f"What {who} did, with your alignment score of each:")
        else:
            lines.append(f"What {who} did:")
        for name in cited:
            t = rr.turn(name)
            why = rr.explanations.get(name, "")
            seen = f" (score {rr.scores[name]:+.2f}: {clip(why)})" if cfg.pm_feedback == "scores" else ""
            lines.append(f"- {name}: {clip(t.action)}{seen}")
            if cfg.pm_sees_beliefs and t.belief.strip():
                lines.append(f"  {name}'s stated belief: {clip(t.belief)}")
    lines.append("Update your beliefs about the engineers for this round.")
    return "\n".join(lines)


async def _instruct(chat: ChatModel, task: CodeTask, cfg: TeamConfig, seed: int, r: int, history: str) -> tuple:
    schema = pm_schema(cfg.pm_tom)
    try:
        reply = await chat.complete_json(
            pm_messages(task, cfg.pm_tom, cfg.names(), history),
            schema,
            sample_key=_key(task, cfg, seed, r, "PM", "instruct"),
            temperature=cfg.pm_temperature,
            max_tokens=cfg.pm_max_tokens,
        )
    except StructuredOutputError as exc:
        text = "The Engineer should implement the task as specified and make it pass its tests."
        return {}, text, text, f"no valid instruction ({exc}); sent a generic one"
    levels = reply.value.model_dump()
    top = levels[max(levels, key=lambda k: int(k.removeprefix("ToM_level")))]
    belief = top["belief"] if cfg.pm_tom > 0 else top["action"]
    return levels, top["action"], belief, ""


async def _act(
    chat: ChatModel,
    task: CodeTask,
    cfg: TeamConfig,
    seed: int,
    r: int,
    name: str,
    instruction: str,
    previous: EngineerTurn | None,
    teammates: Mapping[str, str],
) -> EngineerTurn:
    reply = await chat.complete(
        engineer_messages(task, name, cfg.eng_tom, instruction, previous.code if previous else None, teammates),
        sample_key=_key(task, cfg, seed, r, name, "act"),
        temperature=cfg.eng_temperature,
        max_tokens=cfg.eng_max_tokens,
    )
    parsed: EngineerReply = parse_engineer(reply.content)
    return EngineerTurn(name, parsed.code, parsed.action, parsed.belief, parsed.problem)


async def _evaluate(
    chat: ChatModel, task: CodeTask, cfg: TeamConfig, seed: int, r: int, belief: str, turns: Sequence[EngineerTurn]
) -> tuple[dict[str, float], dict[str, str], str]:
    names = tuple(t.name for t in turns)
    if cfg.alignment == "cosine":  # Appendix A's extension: no model call
        cos = cosine_alignment([belief] * len(turns), [t.action for t in turns])
        why = "cosine of TF-IDF embeddings of belief and action"
        return {n: round(float(v), 4) for n, v in zip(names, cos, strict=True)}, dict.fromkeys(names, why), ""
    try:
        reply = await chat.complete_json(
            evaluation_messages(belief, {t.name: t.action for t in turns}),
            alignment_schema(names),
            sample_key=_key(task, cfg, seed, r, "PM", "evaluate"),
            temperature=cfg.pm_temperature,
            max_tokens=cfg.eval_max_tokens,
        )
    except StructuredOutputError as exc:
        # no usable self-evaluation: a neutral score (φ = 0.5, untrusted for any ε < 0.5), said so in the log
        return {n: 0.0 for n in names}, {n: "no evaluation" for n in names}, f"no valid evaluation ({exc}); scored 0"
    value = reply.value
    scores = {n: float(getattr(value, n).score) for n in names}
    return scores, {n: getattr(value, n).explanation for n in names}, ""


def team_instance(cfg: TeamConfig) -> AlignmentInstance:
    """The alignment instance of a team (ICLR §4): PM first, then the engineers; the PM believes, and with
    ``cfg.engineers_score`` the engineers too.

    Args:
        cfg: the condition (team size, ε, λ, abilities, whose preferences count).
    """
    names = cfg.names()
    ability = dict(zip(names, cfg.abilities, strict=True)) if cfg.abilities else None
    agents = ["PM", *names]
    beliefs = {"PM": dict.fromkeys(names, 0.0)}
    if cfg.engineers_score:
        beliefs |= {n: {o: 0.0 for o in agents if o != n} for n in names}
    return make_instance(beliefs, names=agents, epsilon=cfg.epsilon, ability=ability, lam=cfg.lam)


async def _peer_scores(
    chat: ChatModel,
    task: CodeTask,
    cfg: TeamConfig,
    seed: int,
    r: int,
    instruction: str,
    turns: Sequence[EngineerTurn],
) -> dict[str, dict[str, float]]:
    """``preferences="all"``: each engineer of ToM ≥ 1 scores its stated belief against the PM's instruction and
    every other engineer's action (Appendix A among peers; the cosine under ``alignment="cosine"``). A reply that
    fails validation scores 0 (φ = 0.5), as the PM's does."""
    actions = {"PM": instruction, **{t.name: t.action for t in turns}}
    out: dict[str, dict[str, float]] = {}

    async def one(t: EngineerTurn) -> None:
        others = {n: a for n, a in actions.items() if n != t.name}
        if cfg.alignment == "cosine":
            cos = cosine_alignment([t.belief] * len(others), list(others.values()))
            out[t.name] = {n: round(float(v), 4) for n, v in zip(others, cos, strict=True)}
            return
        try:
            reply = await chat.complete_json(
                teammate_evaluation_messages(
                    t.name,
                    t.belief or "(no belief stated)",
                    others,
                    believed="Your belief about your team",
                    did="What the project manager instructed and your teammates did",
                ),
                alignment_schema(tuple(others)),
                sample_key=_key(task, cfg, seed, r, t.name, "evaluate"),
                temperature=cfg.pm_temperature,
                max_tokens=cfg.eval_max_tokens,
            )
        except StructuredOutputError:
            out[t.name] = dict.fromkeys(others, 0.0)
            return
        out[t.name] = {n: float(getattr(reply.value, n).score) for n in others}

    await asyncio.gather(*(one(t) for t in turns))
    return out


def team_algorithm1(cfg: TeamConfig, base: AlignmentInstance, condition: str, seed: int) -> Algorithm1:
    """Algorithm 1 as the team runs it (ICLR coalitions) under the config's rule, re-match timing and first
    coalition; its draws are seeded by the condition and seed, so a replay on the same scores draws the same.

    Args:
        cfg: the condition (selection rule, ``rematch``, ``initial``).
        base: the team's alignment instance (:func:`team_instance`).
        condition: the condition's name, which seeds the selection draws and places the recorded events.
        seed: the episode's seed.
    """
    return Algorithm1(
        base,
        mechanism="iclr",
        adaptation=cfg.rematch == "adaptation",
        selection=cfg.selection,
        initial=cfg.initial,
        condition=condition,
        episode=seed,
    )


def score_matrix(
    base: AlignmentInstance, scores: Mapping[str, float], peers: Mapping[str, Mapping[str, float]]
) -> np.ndarray:
    """A round's input to Algorithm 1 (line 2): the PM's row (its scores of each engineer) and each scoring
    engineer's.

    Args:
        base: the team's alignment instance (names and order).
        scores: the PM's score of each engineer.
        peers: each scoring engineer's scores of the others (empty unless engineers score).
    """
    matrix = np.zeros((base.n, base.n))
    for n, s in scores.items():
        matrix[0, base.index(n)] = s
    for n, row in peers.items():
        matrix[base.index(n), [base.index(o) for o in row]] = list(row.values())
    return matrix


def team_of(base: AlignmentInstance, rec: RoundRecord) -> list[str]:
    """The engineers of the PM's coalition in force (all of them if the PM stands alone).

    Args:
        base: the team's alignment instance.
        rec: Algorithm 1's record of the round.
    """
    return [base.names[i] for i in rec.team if i != 0] or list(base.names[1:])


def team_answer(team: Sequence[str], scores: Mapping[str, float], turns: Sequence[EngineerTurn]) -> str:
    """The team's answer (ours): the engineer of ``team`` the PM scored highest; ties to code, then the lowest index."""
    has_code = {t.name: bool(t.code.strip()) for t in turns}
    order = {t.name: i for i, t in enumerate(turns)}
    return max(team, key=lambda n: (scores[n], has_code[n], -order[n]))


async def run_episode(chat: ChatModel, task: CodeTask, cfg: TeamConfig, *, seed: int = 0) -> Episode:
    """Algorithm 1 (ICLR §4) over ``cfg.rounds`` rounds of ``task``: the PM instructs, the engineers act, the PM
    scores them, and the coalition is (re)matched from the scores. Every decision is recorded to the run log in force
    (:func:`tomlib.trace.logging_to`); the tests are run later by ``check``."""
    ep = Episode(task, cfg, seed)
    names = cfg.names()
    base = team_instance(cfg)
    algo = team_algorithm1(cfg, base, ep.condition, seed)
    prev: RoundResult | None = None
    for r in range(1, cfg.rounds + 1):
        at: dict[str, Any] = {"condition": ep.condition, "episode": seed, "step": r}
        record("env_state", round_state(task, cfg, r), **at)
        levels, instruction, belief, problem = await _instruct(chat, task, cfg, seed, r, _history(ep.rounds, cfg))
        record("belief", instruction_event(cfg, levels, instruction, belief, problem), agent="PM", **at)
        turns = await _engineers_act(chat, task, cfg, seed, r, instruction, prev)
        for t in turns:
            record("action", t.event(cfg.eng_tom), agent=t.name, **at)
        scores, explanations, eval_problem = await _evaluate(chat, task, cfg, seed, r, belief, turns)
        peers = await _peer_scores(chat, task, cfg, seed, r, instruction, turns) if cfg.engineers_score else {}
        matrix = score_matrix(base, scores, peers)  # the round's alignment of every believer is recorded with it
        inst = base.with_scores(matrix)
        rec = algo.step(matrix) if cfg.matching else everyone(base, inst, r, ep.condition, seed)
        team = team_of(base, rec) if cfg.matching else names
        members = [base.index(n) for n in team]
        rr = RoundResult(
            round=r,
            levels=levels,
            instruction=instruction,
            belief=belief,
            turns=turns,
            scores=scores,
            explanations=explanations,
            evaluation_problem=eval_problem,
            team=team,
            structure=rec.structure,
            matched=rec.matched,
            rematch_signal=rec.signal,
            ftm_team=ftm(inst, 0, among=[0, *members]),
            ftm_all=ftm(inst, 0),
            answer=team_answer(team, scores, turns),
        )
        if eval_problem:
            record("note", {"problem": eval_problem}, agent="PM", **at)
        ep.rounds.append(rr)
        prev = rr
    ep.coalition = algo.run if cfg.matching else None
    return ep


def round_state(task: CodeTask, cfg: TeamConfig, r: int) -> dict[str, Any]:
    """The ``env_state`` event of round ``r``: the task, the ToM orders and who plays."""
    return {
        "game": "programming",
        "benchmark": task.benchmark,
        "task": task.task_id,
        "round": r,
        "pm_tom": cfg.pm_tom,
        "eng_tom": cfg.eng_tom,
        "matching": cfg.setting,
        "agents": ["PM", *cfg.names()],
        "statement": task_statement(task)[:2000],
    }


def instruction_event(
    cfg: TeamConfig, levels: dict[str, Any], instruction: str, belief: str, problem: str
) -> dict[str, Any]:
    """The PM's ``belief`` event: its ToM levels' reasoning, the instruction it gives and its belief."""
    return {"pm_tom": cfg.pm_tom, "levels": levels, "instruction": instruction, "belief": belief, "problem": problem}


def everyone(base: AlignmentInstance, inst: AlignmentInstance, r: int, condition: str, seed: int) -> RoundRecord:
    """Round ``r`` without matching: every engineer works with the PM; the round's alignment is recorded as
    Algorithm 1 records its rounds, so both settings' logs read alike."""
    rec = RoundRecord(r, False, tuple(range(1, base.n)), "all engineers (no matching)", {"PM": ftm(inst, 0)}, [], False)
    record_round(inst, rec, condition, seed)
    return rec


async def _engineers_act(
    chat: ChatModel,
    task: CodeTask,
    cfg: TeamConfig,
    seed: int,
    r: int,
    instruction: str,
    prev: RoundResult | None,
) -> list[EngineerTurn]:
    """Every engineer's turn of round ``r``, concurrently, each seeing its own last turn and its teammates'."""
    return list(
        await asyncio.gather(
            *(
                _act(
                    chat,
                    task,
                    cfg,
                    seed,
                    r,
                    n,
                    instruction,
                    prev.turn(n) if prev else None,
                    _teammates(prev, n, cfg.matching) if prev else {},
                )
                for n in cfg.names()
            )
        )
    )


def _teammates(prev: RoundResult, name: str, matching: bool) -> dict[str, str]:
    """Last round's actions of the engineers ``name`` worked with (its coalition with matching; else all)."""
    group = prev.team if (not matching or name in prev.team) else []
    return {t.name: t.action for t in prev.turns if t.name in group and t.name != name}
