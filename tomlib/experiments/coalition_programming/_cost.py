"""The cost preview of a programming run (calls, tokens, USD) before its first live call: the calls per round of
Algorithm 1 (``coalition-matching-iclr-draft.txt`` §5.1) with Appendix A's self-evaluation, priced from
``configs/models.yaml``."""

from __future__ import annotations

from collections.abc import Sequence

from tomlib.experiments._cost import Estimate, price
from tomlib.programming import TeamConfig

TOKENS_PER_CALL = (900, 350)  # our estimate of (prompt, completion) tokens per call, for the cost preview


def estimate(model: str, configs: Sequence[TeamConfig], n_tasks: int, seeds: int) -> Estimate:
    """Calls, tokens and USD of running ``configs`` on ``n_tasks`` tasks × ``seeds`` from scratch (our token guess).

    Args:
        model: a name from ``configs/models.yaml``, whose prices apply.
        configs: the conditions (§6.1); each round is the PM's instruction, one call per engineer and the alignment
            calls (Appendix A's self-evaluation, or none for the cosine extension).
        n_tasks: tasks over both benchmarks.
        seeds: repetitions of every episode.
    """
    per_round = {"self-evaluation": 2, "cosine": 1}  # the PM's instruction (+ its self-evaluation) and each engineer

    def peers(cfg: TeamConfig) -> int:  # preferences="all": each engineer's self-evaluation
        return cfg.engineers if cfg.engineers_score and cfg.alignment == "self-evaluation" else 0

    calls = sum(cfg.rounds * (cfg.engineers + per_round[cfg.alignment] + peers(cfg)) for cfg in configs)
    calls *= n_tasks * seeds
    return price(model, calls, TOKENS_PER_CALL)
