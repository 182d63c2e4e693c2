"""Judge every engineer's code of a batch of episodes in the sandbox, then log the outcomes.

Tests run after the model calls (they never feed back into a prompt), all at once so the sandbox's workers stay busy;
repeats come from :class:`tomlib.sandbox.CheckCache`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tomlib.programming._team import Episode
from tomlib.sandbox import CheckCache, CheckResult, Limits
from tomlib.trace import RunLog

CHECK_LIMITS = Limits(timeout_s=10.0, cpu_s=10, memory_mb=1024)


def check_episodes(
    episodes: Sequence[Episode],
    *,
    log: RunLog | None = None,
    cache: CheckCache | None = None,
    workers: int | None = None,
    limits: Limits = CHECK_LIMITS,
    progress: Callable[[CheckResult], None] | None = None,
) -> None:
    """Fill ``passed``/``status``/``reason`` of every turn and ``answer_passed`` of every round, in place.
    ``progress`` is called once per turn (from this thread or the sandbox's workers), whether its code ran, came from
    the cache or was missing."""
    jobs: list[tuple[str, str]] = []
    where: list[tuple[int, int, int]] = []
    for e, ep in enumerate(episodes):
        for r, rr in enumerate(ep.rounds):
            for t, turn in enumerate(rr.turns):
                if turn.code.strip():
                    jobs.append((ep.task.program(turn.code), ep.task.tests))
                    where.append((e, r, t))
                else:
                    turn.passed, turn.status, turn.reason = False, "no code", "the reply held no code"
                    if progress is not None:  # judged without a check: once per turn, so a bar over turns ends full
                        progress(CheckResult(False, turn.status, turn.reason, 0.0))
    results = (cache or CheckCache()).check_many(jobs, limits=limits, workers=workers, progress=progress)
    for (e, r, t), res in zip(where, results, strict=True):
        turn = episodes[e].rounds[r].turns[t]
        turn.passed, turn.status, turn.reason = res.passed, res.status, res.reason
    for ep in episodes:
        for rr in ep.rounds:
            rr.answer_passed = rr.turn(rr.answer).passed
            if log is None:
                continue
            for turn in rr.turns:
                log.event(
                    "verification",
                    {"passed": turn.passed, "status": turn.status, "reason": turn.reason},
                    condition=ep.condition,
                    episode=ep.seed,
                    step=rr.round,
                    agent=turn.name,
                )
            log.event(
                "score",
                {
                    "metric": "ftm",
                    "value": round(100 * rr.ftm_all, 2),  # §6.2: over all other agents
                    "answer": rr.answer,
                    "passed": rr.answer_passed,
                    "ftm_all": rr.ftm_all,
                    "ftm_team": rr.ftm_team,
                    "team": rr.team,
                },
                condition=ep.condition,
                episode=ep.seed,
                step=rr.round,
                agent="PM",
            )
