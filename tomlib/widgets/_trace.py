"""What the explorer shows, computed from run logs with pandas alone (no widgets), so tests can reach all of it.

A :class:`Trace` indexes the events once by episode; a :class:`StepView` is everything one step of one episode shows:
the state before and after, and per agent what it saw, each ToM level it reasoned at, its prediction of the partner
against the partner's actual action, its final action, the model calls behind them (tokens, latency, cache hits, raw
exchanges), and the paper-specific extras (A-ToM expert weights, BDI sections, ASP verification, and which formal
orders' choices an adaptive-ToM player's action matched: :mod:`tomlib.widgets._orders`).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from tomlib.llm import recorded_exchange
from tomlib.tom import StepMatch
from tomlib.trace import DamagedLog, RunIndex, events_frame, read_index, read_lines, run_paths
from tomlib.widgets._orders import order_matches

AGENT_KINDS = ("llm_call", "belief", "prediction", "action", "expert_weights", "alignment", "verification")
ROUND_KINDS = ("coalition", "score", "rematch")
EPISODE_COLUMNS = ["run_id", "experiment", "source", "condition", "episode", "score", "metric", "steps", "agents"]


@dataclass(frozen=True)
class EpisodeRef:
    """One episode in one run."""

    run_id: str
    experiment: str
    condition: str
    episode: int

    def label(self) -> str:
        return f"{self.condition} · episode {self.episode}"


@dataclass
class Level:
    """One level of ToM reasoning: who is imagined (seat, order), what it predicted, why, and what it chose."""

    order: int | None
    seat: str
    prediction: str | None
    action: str | None
    explanation: str = ""


@dataclass
class AgentStep:
    """One agent at one step."""

    agent: str
    saw: str = ""
    levels: list[Level] = field(default_factory=list)
    predicted: str | None = None
    partner_actual: str | None = None
    action: str | None = None
    calls: int = 0
    tokens: int = 0
    latency_s: float = 0.0
    cache_hits: int = 0
    exchanges: list[dict[str, Any]] = field(default_factory=list)
    weights: dict[str, Any] | None = None
    bdi: list[dict[str, Any]] = field(default_factory=list)
    verifications: list[dict[str, Any]] = field(default_factory=list)
    attempts: list[dict[str, Any]] = field(default_factory=list)
    code: str | None = None  # iterative programming: the engineer's code
    tests: dict[str, Any] | None = None  # ... and its test outcome
    alignment: dict[str, Any] | None = None  # the PM's self-evaluation (Appendix A scores, φ, ε, FTM)
    expert_update: dict[str, Any] | None = None  # A-ToM after the partner moved: each expert's loss so far
    rated: dict[str, float] | None = None  # DyLAN: its normalised ratings of the replies it was shown
    feedback: str = ""  # DyLAN coders: the Reflector's line on this agent's code
    matched_orders: list[int] | None = None  # adaptive ToM: the formal orders whose choices held its action
    orders_disagree: bool | None = None  # ... and whether those orders' choices differ at this step

    @property
    def prediction_hit(self) -> bool | None:
        """Whether the prediction of the partner came true (None when there was none to check)."""
        if self.predicted is None or self.partner_actual is None:
            return None
        return self.predicted == self.partner_actual


@dataclass
class StepView:
    """Everything shown for one step of one episode."""

    ref: EpisodeRef
    step: int
    steps: list[int]
    kind: str
    before: dict[str, Any]
    after: dict[str, Any] | None
    agents: list[AgentStep]
    history: list[list[str]]
    score: dict[str, Any] | None
    weights_series: dict[str, list[dict[str, Any]]]
    round_events: dict[str, dict[str, Any]] = field(default_factory=dict)  # coalition / score / rematch at this step
    note: str = ""  # why the step shows less than usual


STEPS_NOT_LOGGED = (
    "This episode's steps were not logged: a formal run logs every step of its first episodes of each condition "
    "(the run's detail_episodes; none for a table under another reading) and keeps, for the others, their first state "
    "and outcome. Every formal episode replays exactly from its seed: the table function with detail_episodes= logs it."
)


def game_kind(first_state: dict[str, Any]) -> str:
    """``matrix``, ``grid``, ``overcooked``, ``city``, ``programming``, ``debate``, ``reasoning`` or ``other``, from an
    episode's first ``env_state``."""
    if "levels" in first_state:
        return "city"
    if first_state.get("game") in ("programming", "debate", "reasoning"):
        return str(first_state["game"])
    spec = str(first_state.get("game", ""))
    for prefix, kind in (("matrix", "matrix"), ("grid", "grid"), ("overcooked", "overcooked")):
        if spec.startswith(prefix):
            return kind
    return "other"


def refs_of(episodes: pd.DataFrame) -> list[EpisodeRef]:
    """The episodes of an index frame (:meth:`Trace.episodes`) as references, in row order."""
    return [EpisodeRef(r.run_id, r.experiment, r.condition, int(r.episode)) for r in episodes.itertuples(index=False)]


def run_source(start: dict[str, Any]) -> str:
    """Where a run's numbers come from, from its ``run_start`` event: ``llm:<model>`` or ``formal``."""
    if start.get("source"):
        return str(start["source"])
    models = [m for m in start.get("models") or [start.get("model")] if m and m != "formal"]
    return ",".join(f"llm:{m}" for m in models) if models else "formal"


def number(value: Any) -> float | None:
    """``value`` as a float when a log holds a number there (or its digits), else None."""
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return None


def whole(value: Any) -> int | None:
    """``value`` as an int when a log holds a whole number there (or its digits), else None."""
    got = number(value)
    return int(got) if got is not None and got.is_integer() else None


def score_value(payload: dict[str, Any]) -> float | None:
    """The outcome in a ``score`` event: points/time (adaptive ToM) or final health (tom_ib); None when the log
    holds no number there."""
    for key in ("value", "final_health"):
        if payload.get(key) is not None:
            return number(payload[key])
    return None


class Trace:
    """Run-log events indexed by episode; step views are computed on demand and only for what is asked."""

    def __init__(self, events: pd.DataFrame):
        # where an undrawn episode's lines are: its log, offsets, lengths, and the log's gzip members if compressed
        self._lazy: dict[tuple[str, str, str, int], tuple[Path, list[int], list[int], list[Any]]] = {}
        self._n_events = len(events)
        self.events = events.reset_index(drop=True)
        keyed = self.events.dropna(subset=["episode"]).astype({"episode": int})
        grouped = keyed.groupby(["run_id", "experiment", "condition", "episode"], sort=False)
        self._groups: dict[tuple[str, str, str, int], Any] = {
            key: keyed.index.to_numpy()[idx]  # positions in ``events``, not in ``keyed``
            for key, idx in grouped.indices.items()
        }
        self._cache: dict[EpisodeRef, _Episode] = {}
        self._matches: dict[EpisodeRef, dict[tuple[int, str], StepMatch] | None] = {}
        starts = self.events[self.events["kind"] == "run_start"]
        self._starts: dict[str, dict[str, Any]] = {
            str(r): dict(p) for r, p in starts[["run_id", "payload"]].itertuples(index=False) if isinstance(p, dict)
        }
        self._episodes = self._index(keyed, grouped)

    @classmethod
    def from_runs(
        cls,
        runs: Iterable[Any] | None = None,
        *,
        results: str | os.PathLike[str] | None = None,
        experiment: str | None = None,
    ) -> Trace:
        """Load run logs: ``runs`` holds run ids or objects with a ``run_id`` (an experiment's return value);
        ``None`` loads every run under ``results``. A damaged run log is left out with a warning naming it."""
        run_ids = None if runs is None else [r if isinstance(r, str) else r.run_id for r in runs]
        run_ids = None if run_ids is None else [r for r in run_ids if r]
        indexes = []
        for path in run_paths(results, run_ids):
            try:
                indexes.append((path, read_index(path)))
            except DamagedLog as exc:  # one run's damage does not hide the others
                warnings.warn(str(exc), stacklevel=2)
        return cls.from_indexes([(p, i) for p, i in indexes if experiment is None or i.experiment == experiment])

    @classmethod
    def from_indexes(cls, indexes: Sequence[tuple[Path, RunIndex]]) -> Trace:
        """A trace that reads an episode's lines only when it is first drawn (:mod:`tomlib.trace._index`)."""
        self = cls(events_frame([]))
        rows = []
        for path, idx in indexes:
            source = run_source(idx.run_start or {})
            self._starts[idx.run_id] = dict(idx.run_start or {})
            self._n_events += idx.events
            # in the order a full load's groupby lists them: conditions, then episodes, by first appearance
            cond_rank = {c: i for i, c in enumerate(dict.fromkeys(c for c, _ in idx.episodes))}
            ep_rank = {e: i for i, e in enumerate(dict.fromkeys(e for _, e in idx.episodes))}
            for _key, ep in sorted(idx.episodes.items(), key=lambda kv: (cond_rank[kv[0][0]], ep_rank[kv[0][1]])):
                key = (idx.run_id, idx.experiment, ep.condition, ep.episode)
                self._lazy[key] = (path, ep.offsets, ep.lengths, idx.blocks)
                p = ep.score or {}
                rows.append(
                    [
                        idx.run_id,
                        idx.experiment,
                        source,
                        ep.condition,
                        ep.episode,
                        score_value(p),
                        p.get("metric", "health" if "final_health" in p else None),
                        ep.last_step or 0,
                        " vs ".join(ep.state_agents or sorted(ep.acted)),
                    ]
                )
        self._episodes = pd.DataFrame(rows, columns=EPISODE_COLUMNS)
        return self

    def __len__(self) -> int:
        return self._n_events

    # ---- the index -------------------------------------------------------------------------------------------
    def _index(self, keyed: pd.DataFrame, grouped: Any) -> pd.DataFrame:
        cols = EPISODE_COLUMNS
        ev = self.events
        scores = ev[ev["kind"] == "score"]
        keys = ["run_id", "experiment", "condition", "episode", "payload"]
        score_of = {
            (r, e, c, int(ep)): p for r, e, c, ep, p in scores[keys].dropna(subset=["episode"]).itertuples(index=False)
        }
        starts = ev[ev["kind"] == "run_start"]
        source_of = {r: run_source(p) for r, p in starts[["run_id", "payload"]].itertuples(index=False)}
        last_step = grouped["step"].max()  # one pass over the frame, not one per episode
        by = ["run_id", "experiment", "condition", "episode"]
        states = keyed[keyed["kind"] == "env_state"].groupby(by, sort=False)["payload"].first()
        rows = []
        for key, idx in self._groups.items():
            first = states.get(key)
            agents = first.get("agents") if first else None
            if not agents:  # older logs: whoever acted in the episode
                agents = sorted(a for a in ev["agent"].iloc[idx].dropna().unique() if a)
            p = score_of.get(key, {})
            metric = p.get("metric", "health" if "final_health" in p else None)
            last = last_step.get(key)
            run, experiment, condition, episode = key
            rows.append(
                [
                    run,
                    experiment,
                    source_of.get(run, "unknown"),
                    condition,
                    episode,
                    score_value(p),
                    metric,
                    0 if last is None or pd.isna(last) else int(last),
                    " vs ".join(map(str, agents)),
                ]
            )
        return pd.DataFrame(rows, columns=cols)

    def runs(self) -> pd.DataFrame:
        """One row per run: run id, experiment, source (``formal`` or ``llm:<model>``), episodes, and a label."""
        df = self._episodes.groupby(["run_id", "experiment", "source"], sort=False).size().reset_index(name="episodes")
        df["label"] = df["experiment"] + " · " + df["source"] + " · " + df["run_id"].str[-4:]
        return df

    def episodes(self, run_id: str | None = None, condition: str | None = None) -> pd.DataFrame:
        """One row per episode: run, experiment, source, condition, episode, score, metric, steps, agents."""
        df = self._episodes
        if run_id is not None:
            df = df[df["run_id"] == run_id]
        if condition is not None:
            df = df[df["condition"] == condition]
        return df.reset_index(drop=True)

    def conditions(self, run_id: str) -> list[str]:
        return list(dict.fromkeys(self.episodes(run_id)["condition"]))

    def refs(self, run_id: str, condition: str) -> list[EpisodeRef]:
        return refs_of(self.episodes(run_id, condition))

    # ---- one episode -----------------------------------------------------------------------------------------
    def _episode(self, ref: EpisodeRef) -> _Episode:
        if ref not in self._cache:
            key = (ref.run_id, ref.experiment, ref.condition, ref.episode)
            if key in self._lazy:
                path, offsets, lengths, blocks = self._lazy[key]
                self._cache[ref] = _Episode.of(events_frame(read_lines(path, offsets, lengths, blocks)))
                return self._cache[ref]
            idx = self._groups.get(key)
            if idx is None:
                raise KeyError(f"no events for {ref.label()} in run {ref.run_id}")
            self._cache[ref] = _Episode.of(self.events.iloc[idx])
        return self._cache[ref]

    def episode_events(self, ref: EpisodeRef) -> pd.DataFrame:
        """The events of one episode."""
        return self._episode(ref).events

    def agents(self, ref: EpisodeRef) -> list[str]:
        return self._episode(ref).agents

    def steps(self, ref: EpisodeRef) -> list[int]:
        """Steps at which some agent acted (0-based)."""
        return self._episode(ref).steps

    def order_matches(self, ref: EpisodeRef) -> dict[tuple[int, str], StepMatch] | None:
        """Per (step, seat) of an adaptive-ToM episode, the formal orders its action matched (None: none shown)."""
        if ref not in self._matches:
            seed = self._starts.get(ref.run_id, {}).get("seed")
            seed = seed if isinstance(seed, int) and not isinstance(seed, bool) else None
            events = self._episode(ref).events
            self._matches[ref] = order_matches(events, ref.experiment, ref.condition, ref.episode, seed)
        return self._matches[ref]

    def step(self, ref: EpisodeRef, step: int, agents: Sequence[str] | None = None) -> StepView:
        """What the explorer shows at ``step`` of ``ref`` (optionally only for some agents)."""
        ep = self._episode(ref)
        states, steps = ep.states, ep.steps
        first = states.get(0, {})
        at = ep.at(step)
        acting = set(at["agent"])
        names = list(agents) if agents else [a for a in ep.agents if a in acting] or ep.agents
        actions = _actions_at(at)
        views = [_agent_step(at[at["agent"] == a], a, actions, ep.kind, states.get(step, {})) for a in names]
        matches = self.order_matches(ref) if not ep.summary_only else None
        for view in views:
            if matches and (m := matches.get((step, view.agent))) is not None:
                view.matched_orders, view.orders_disagree = list(m.orders), m.disagree
        joint = [
            list(map(str, states[s]["joint_action"]))
            for s in sorted(states)
            if 0 < s <= step + 1 and "joint_action" in states[s]
        ]
        last = not steps or step >= steps[-1]
        return StepView(
            ref=ref,
            step=step,
            steps=steps,
            kind=ep.kind,
            before={**first, **states.get(step, {})},
            after=states.get(step + 1),
            agents=views,
            history=joint,
            score=ep.score if last else None,
            weights_series={a: ep.weights[a] for a in names if a in ep.weights},
            round_events={
                k: p for k, p in at.loc[at["kind"].isin(ROUND_KINDS), ["kind", "payload"]].itertuples(index=False)
            },
            note=STEPS_NOT_LOGGED if ep.summary_only else "",
        )


@dataclass
class _Episode:
    """What every step of one episode shares, computed once when the episode is first opened."""

    events: pd.DataFrame
    by_step: dict[int, pd.DataFrame]
    states: dict[int, dict[str, Any]]
    steps: list[int]
    agents: list[str]
    kind: str
    score: dict[str, Any] | None
    weights: dict[str, list[dict[str, Any]]]
    summary_only: bool = False  # an outcome and no action: its steps were left out of the log (detail_episodes)

    @classmethod
    def of(cls, ev: pd.DataFrame) -> _Episode:
        is_env = ev["kind"] == "env_state"
        states = {int(s): p for s, p in ev.loc[is_env, ["step", "payload"]].itertuples(index=False)}
        acted = ev[ev["kind"].isin(AGENT_KINDS)]
        scores = ev.loc[ev["kind"] == "score", "payload"]
        weights: dict[str, list[dict[str, Any]]] = {}
        for agent, p in ev.loc[ev["kind"] == "expert_weights", ["agent", "payload"]].itertuples(index=False):
            weights.setdefault(agent, []).append(p)
        return cls(
            events=ev,
            by_step={int(k): g for k, g in ev.dropna(subset=["step"]).groupby("step", sort=False)},
            states=states,
            steps=sorted({int(s) for s in acted["step"].dropna()}),
            agents=list(dict.fromkeys(a for a in acted["agent"] if a)),
            kind=game_kind(states[min(states)] if states else {}),
            score=scores.iloc[-1] if len(scores) else None,
            weights=weights,
            summary_only=bool(len(scores)) and not (ev["kind"] == "action").any(),
        )

    def at(self, step: int) -> pd.DataFrame:
        return self.by_step.get(step, self.events.iloc[:0])


def exchange(call: dict[str, Any]) -> dict[str, Any]:
    """An ``llm_call`` payload with its prompt and reply. Logs keep them in the response store under the call's key
    (older logs copied them into the event); a store that lacks the key leaves a note naming it instead."""
    if "messages" in call or not call.get("key"):
        return call
    got = recorded_exchange(str(call["key"]), call.get("store"))
    if got is None:
        note = (
            f"The prompt and reply of this call are kept in the response store under key {str(call['key'])[:12]}, "
            f"which is not in {call.get('store') or 'the default store'} or the default store on this machine. Import "
            "the transcript exported with the run (`.venv/bin/tomlib cache import FILE`) to see them here."
        )
        return {**call, "messages": [], "reply": "", "missing": note}
    return {**call, **got}


def _actions_at(at: pd.DataFrame) -> dict[str, str]:
    """The final action of every agent at one step (the last legal ``action`` event)."""
    out: dict[str, str] = {}
    for agent, p in at.loc[at["kind"] == "action", ["agent", "payload"]].itertuples(index=False):
        if "action" in p:
            out[agent] = str(p["action"])
    return out


def _agent_step(ev: pd.DataFrame, agent: str, actions: dict[str, str], kind: str, state: dict[str, Any]) -> AgentStep:
    view = AgentStep(agent=agent, action=actions.get(agent))
    partners = [a for a in actions if a != agent]
    if kind not in ("city", "debate", "reasoning") and len(partners) == 1:
        view.partner_actual = actions[partners[0]]
    for k, p in ev[["kind", "payload"]].itertuples(index=False):
        if k == "llm_call":
            view.calls += 1
            view.tokens += (whole(p.get("prompt_tokens")) or 0) + (whole(p.get("completion_tokens")) or 0)
            view.latency_s += number(p.get("latency_s")) or 0.0
            view.cache_hits += p.get("cache") == "hit"
            view.exchanges.append(exchange(p))
        elif k == "belief" and "levels" in p:  # Appendix C/D levels: the coalition paper's PM or a debater
            view.action = p.get("instruction") or p.get("argument")
            for name, lv in (p.get("levels") or {}).items():
                view.levels.append(
                    Level(
                        whole(str(name).removeprefix("ToM_level")),
                        agent,
                        lv.get("belief"),
                        lv.get("action"),
                        str(lv.get("explanation") or ""),
                    )
                )
        elif k == "action" and "code" in p:  # an engineer's or a DyLAN coder's turn
            view.code = str(p.get("code") or "")
            view.rated, view.feedback = p.get("rated") or view.rated, str(p.get("feedback") or "")
            if p.get("belief"):
                view.levels.append(Level(p.get("eng_tom"), agent, p.get("belief"), p.get("action")))
            if p.get("problem"):
                view.attempts.append({"problem": p["problem"]})
        elif k == "verification" and "status" in p:  # the engineer's code against the tests
            view.tests = p
        elif k == "alignment" and "scores" in p:  # a believer's Appendix A scores of its teammates (coalition)
            view.alignment = p
        elif k == "alignment":  # A-ToM's update once the partner moved (Algorithm 1 l. 13-17): not a coalition's
            view.expert_update = p
        elif k == "belief" and "order" in p:  # an LLM ToM level
            view.levels.append(
                Level(
                    p.get("order"),
                    str(p.get("seat", "")),
                    p.get("prediction"),
                    p.get("action"),
                    str(p.get("thought") or ""),
                )
            )
        elif k == "belief":  # a BDI reply (tom_ib)
            view.bdi.append(p)
        elif k == "prediction":
            view.predicted = p.get("predicted_partner_action", view.predicted)
            for lv in p.get("levels") or []:  # the formal chain, innermost level first
                view.levels.append(
                    Level(
                        lv.get("order"),
                        _seat(lv.get("player")),
                        lv.get("belief"),
                        lv.get("action"),
                        "exact best response (formal)",
                    )
                )
        elif k == "expert_weights":
            view.weights = p
        elif k == "verification":
            view.verifications.append(p)
        elif k == "action":
            if p.get("rated"):
                view.rated = p["rated"]
            view.attempts.append(p)
    view.saw = _what_it_saw(view, agent, kind, state)
    return view


def _seat(player: Any) -> str:
    """``player1`` for the formal chain's player 0."""
    index = whole(player)
    return "player?" if index is None else f"player{index + 1}"


def _what_it_saw(view: AgentStep, agent: str, kind: str, state: dict[str, Any]) -> str:
    """The agent's own text state: the user message of its own decision call, else the exact state (formal)."""
    own = [x for x in view.exchanges if str(x.get("purpose", "")).endswith(f"@{agent}") or x.get("purpose") == "decide"]
    for x in own or view.exchanges:
        users = [m.get("content", "") for m in x.get("messages") or [] if m.get("role") == "user"]
        if users:
            return str(users[-1])
    if kind == "city":
        return ""
    return str(state.get("state", ""))
