"""Playing episodes: two agents, one game, every step recorded to the run log in force
(:func:`tomlib.trace.logging_to`)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tomlib.agents._base import SEATS, Agent, Decision, Emit, Site, no_emit
from tomlib.agents._load import class_path, display_name
from tomlib.envs import Game, IllegalAction, rng_for
from tomlib.trace import RunLog, current_log, drops_event


@dataclass
class EpisodeResult:
    """The outcome of one episode."""

    score: float
    steps: int
    actions: list[tuple[str, str]] = field(default_factory=list)
    experts: dict[str, tuple[tuple[int, ...], list[list[float]]]] = field(default_factory=dict)
    """Per seat of an A-ToM agent: its experts' orders and its normalized weights P^(k) at every step (before it
    acts), what §6.1's weights and Fig. 3 are computed from (a run log keeps them for its detail episodes only)."""


def make_emitter(log: RunLog | None, condition: str, episode: int, agent: str, step: list[int]) -> Emit:
    """An ``emit`` that writes events placed at (condition, episode, current step, agent) to ``log``; the step kinds
    of an episode the log keeps no steps of are dropped here, before the log is asked. No log: events go nowhere."""
    if log is None:
        return no_emit
    steps = log.keeps_steps(episode)

    def emit(kind: str, payload: dict[str, Any]) -> None:
        if steps or not drops_event(log.detail_episodes, kind, episode, step[0]):
            log.event(kind, payload, condition=condition, episode=episode, step=step[0], agent=agent)

    emit.keeps_steps = steps  # type: ignore[attr-defined]
    return emit


def decision_problem(game: Game, agent: Agent, seat: int, step: int, state: Any, decision: Any) -> str | None:
    """Why ``decision`` cannot be played by ``agent`` in ``seat`` at ``step`` of ``state``, in one line naming the
    agent, its seat, the step, the task, what it returned and the legal actions; None when it is a legal Decision.

    Args:
        game: the task being played.
        agent: who returned ``decision``.
        seat: the agent's seat (0 or 1).
        step: the step of the episode (0 first, as run logs number them).
        state: the state the agent was asked about.
        decision: what its ``act`` returned.
    """
    why = wrong_decision(game, state, seat, decision)
    if why is None:
        return None
    who = f"agent {display_name(agent)!r} ({class_path(agent)}) in seat {SEATS[seat]}, step {step} of {game.spec()}"
    return f"{who}: {why}"


def wrong_decision(game: Game, state: Any, seat: int, decision: Any) -> str | None:
    """What is wrong with ``decision`` for ``seat`` in ``state`` (not a Decision, an action that is not a string, an
    action not in ``game.legal_actions``), or None."""
    legal = game.legal_actions(state, seat)
    if not isinstance(decision, Decision):
        return f"act returned {type(decision).__name__} {decision!r}, not a tomlib.agents.Decision(action, detail)"
    action = decision.action
    if not isinstance(action, str):
        return (
            f"act returned Decision(action={action!r}), an action of type {type(action).__name__}; an action is one "
            f"of the strings game.legal_actions(state, player) gives: {', '.join(legal)}"
        )
    if action in legal:
        return None
    return f"act returned {action!r}, which is not legal there; legal: {', '.join(legal)}"


def _check_decisions(game: Game, agents: Sequence[Agent], step: int, state: Any, decisions: Sequence[Any]) -> None:
    """Raise IllegalAction naming the first agent whose decision cannot be played (:func:`decision_problem`)."""
    for p, d in enumerate(decisions):
        if problem := decision_problem(game, agents[p], p, step, state, d):
            raise IllegalAction(problem) from None


async def play_episode(
    game: Game,
    agents: Sequence[Agent],
    *,
    seed: int,
    episode: int,
    condition: str = "",
    experiment: str = "adhoc",
) -> EpisodeResult:
    """Run one episode of a two-player game (adaptive-ToM paper §3: both act at once each step, then observe the
    joint action); each agent gets its own random stream ``(seed, condition, episode, seat)``.

    Args:
        game: the task (matrix game, grid, kitchen), as ``tomlib.envs.load_game`` makes it.
        agents: the two players, seat 0 first (``tomlib.agents``: formal ToM-k, A-ToM, LLM agents, partners).
        seed: the run's seed; with ``condition``, ``episode`` and the seat it seeds each agent's stream.
        episode: the episode's number within its condition.
        condition: the pairing's name in the run log and in sample keys.
        experiment: the experiment named in the agents' ``Site`` when no run log is in force (else the log's).

    Raises:
        IllegalAction: an agent returned something other than a Decision whose action is one of
            ``game.legal_actions(state, seat)``; the one line names the agent, its seat, the step, the task, the action
            and the legal ones.

    States, actions and the score go to the run log in force (none: nowhere); its ``detail_episodes`` decides which
    episodes keep their steps.
    """
    if len(agents) != 2:
        raise ValueError("an episode needs exactly two agents")
    step = [0]
    seats = SEATS
    log: RunLog | None = current_log()  # type: ignore[assignment]
    site = Site(experiment=log.experiment if log else experiment, condition=condition, episode=episode)
    for p, agent in enumerate(agents):
        emit = make_emitter(log, condition, episode, seats[p], step)
        agent.start_episode(game, p, rng_for(seed, condition, episode, p), emit, site)
    env_emit = make_emitter(log, condition, episode, "", step)
    state = game.reset(seed)

    def picture(state: Any) -> dict[str, Any]:
        status = game.status(state)
        return {"state": game.render(state), **({"status": status} if status else {})}

    env_emit("env_state", {**picture(state), "game": game.spec(), "agents": [a.name for a in agents]})
    steps = log is not None and log.keeps_steps(episode)  # else no state is drawn nor action written past step 0
    actions: list[tuple[str, str]] = []
    at_once = agents[0].immediate and agents[1].immediate  # in turn, as the tasks of a gather would run them
    while not game.is_terminal(state):
        if at_once:
            d0, d1 = await agents[0].act(state), await agents[1].act(state)
        else:
            d0, d1 = await asyncio.gather(agents[0].act(state), agents[1].act(state))
        if type(d0) is not Decision or type(d1) is not Decision:  # a subclass passes decision_problem
            _check_decisions(game, agents, step[0], state, (d0, d1))
        joint = (d0.action, d1.action)
        try:
            nxt = game.step(state, joint)  # checks both actions against legal_actions (the Game contract)
        except IllegalAction:
            _check_decisions(game, agents, step[0], state, (d0, d1))
            raise
        for p, (agent, d) in enumerate(zip(agents, (d0, d1), strict=True)):
            agent.observe(state, joint, nxt)
            agent.history.append(joint)
            agent.t += 1
            if steps:
                log.event(  # type: ignore[union-attr]
                    "action",
                    {"action": d.action, **d.detail},
                    condition=condition,
                    episode=episode,
                    step=step[0],
                    agent=seats[p],
                )
        actions.append(joint)
        step[0] += 1
        state = nxt
        if steps:
            env_emit("env_state", {**picture(state), "joint_action": list(joint)})
    score = game.score(state)
    env_emit("score", {"metric": game.info.metric, "value": score, "steps": step[0]})
    experts = {seats[p]: (a.orders, a.trajectory) for p, a in enumerate(agents) if hasattr(a, "trajectory")}
    return EpisodeResult(score=score, steps=step[0], actions=actions, experts=experts)
