"""Judge every engineer's code of a batch of episodes in the sandbox, then record the outcomes.

Tests run after the model calls (they never feed back into a prompt), all at once so the sandbox's workers stay busy;
repeats come from :class:`tomlib.sandbox.CheckCache`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tomlib.programming._team import Episode
from tomlib.recording import record_all
from tomlib.sandbox import CheckCache, CheckResult, Limits

CHECK_LIMITS = Limits(timeout_s=10.0, cpu_s=10, memory_mb=1024)


def check_episodes(
    episodes: Sequence[Episode],
    *,
    cache: CheckCache | None = None,
    workers: int | None = None,
    limits: Limits = CHECK_LIMITS,
    progress: Callable[[CheckResult], None] | None = None,
) -> None:
    """Fill ``passed``/``status``/``reason`` of every turn and ``answer_passed`` of every round, in place, and record
    each round's outcome (:meth:`RoundResult.events`) to the run log in force.
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
            record_all(rr.events(), condition=ep.condition, episode=ep.seed, step=rr.round)
