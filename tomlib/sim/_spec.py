"""What a simulated model is declared to be: its competence per kind of prompt, its latency and its error rates."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

CALL_HEADER = "X-Tomlib-Call"
"""The header in which tomlib's client names the call to a ``sim`` endpoint, so the sim's draws follow call sites and
not the order in which concurrent identical prompts arrive (sent to ``sim`` endpoints only)."""


class SimSpec(BaseModel):
    """A simulated competent model. Every parameter is a known truth a metric can be checked against; every draw is
    seeded by ``seed``, the request's content and the call it answers: tomlib's client names the call (its
    response-store key, an opaque hash) in the :data:`CALL_HEADER` header, so one call site always gets the same draw
    and two call sites with the same prompt (one task in two conditions) get their own, whichever arrives first. A
    request without the header (another client) is told apart by how many times its content came before."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(default="competent", description="Rows are labelled sim:<name>.")
    seed: int = 0
    p_code: float = Field(default=0.7, ge=0, le=1, description="An engineer or coder returns the reference solution.")
    p_follow: float = Field(default=0.8, ge=0, le=1, description="An engineer follows the PM's instruction.")
    follow_later: dict[str, float] = Field(
        default_factory=dict,
        description="Drift: an engineer's chance to follow from round 2 on (e.g. {'Engineer1': 0.0}); others keep "
        "p_follow.",
    )
    follow_by_pm: dict[str, float] = Field(
        default_factory=dict,
        description="An engineer's chance to follow, by the PM who sent the instruction: 'ToM-k' (k = 0, 1, 2) and "
        "'ToM-k+matching' (a PM leading a coalition, from round 2 on); others keep p_follow. A declared effect of the "
        "PM's order and of matching.",
    )
    score_followed: float = Field(default=0.8, ge=-1, le=1, description="The PM's mean score of a follower.")
    score_ignored: float = Field(default=-0.6, ge=-1, le=1, description="The PM's mean score of one who did not.")
    score_noise: float = Field(default=0.2, ge=0, description="SD of the Gaussian noise on a PM's score (clipped).")
    peer_score: float = Field(default=0.5, ge=-1, le=1, description="A teammate's mean score of another (debate, QA).")
    p_choice: float = Field(default=0.6, ge=0, le=1, description="A multiple-choice answer is the key.")
    judge_affirmative: float = Field(default=0.5, ge=0, le=1, description="The judge's chance to pick affirmative.")
    tom_error: float = Field(
        default=0.0, ge=0, le=1, description="A matrix-game agent's chance to take another action than its order's."
    )
    judge_draw: float = Field(default=0.0, ge=0, le=1, description="The judge's chance to call a draw.")
    city_idle: dict[str, float] = Field(
        default_factory=dict,
        description="A city agent's chance to do nothing (NONE) instead of its policy's action, per ToM+IB "
        "configuration (Base, ToM, IB, ToM+IB; read off the reply's schema); a declared effect per condition.",
    )
    latency_median_s: float = Field(default=0.0, ge=0, description="Median reply time (lognormal).")
    latency_sigma: float = Field(default=0.5, ge=0, description="Lognormal sigma of the reply time.")
    rate_429: float = Field(default=0.0, ge=0, le=1, description="Share of requests answered 429 + Retry-After.")
    retry_after_s: float = Field(default=0.5, ge=0)
    rate_5xx: float = Field(default=0.0, ge=0, le=1, description="Share of requests answered 503.")

    @field_validator("follow_by_pm")
    @classmethod
    def _senders(cls, v: dict[str, float]) -> dict[str, float]:
        bad = sorted(k for k in v if not re.fullmatch(r"ToM-[0-2](\+matching)?", k))
        if bad or not all(0 <= p <= 1 for p in v.values()):
            raise ValueError(
                "follow_by_pm maps 'ToM-k' or 'ToM-k+matching' (k = 0, 1, 2) to probabilities; "
                f"got {v} (e.g. {{'ToM-2': 0.9, 'ToM-1+matching': 0.95}})"
            )
        return v

    def follow_chance(self, sender: str, engineer: str, later: bool) -> float:
        """An engineer's declared chance to follow an instruction from ``sender`` ('ToM-k', 'ToM-k+matching' or '' for
        one no simulated PM wrote) in round 1 or (``later``) round 2 on, where ``follow_later`` takes precedence."""
        base = self.follow_by_pm.get(sender, self.p_follow)
        return self.follow_later.get(engineer, base) if later else base

    @field_validator("city_idle")
    @classmethod
    def _configurations(cls, v: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(v) - set(CITY_CONFIGS.values()))
        if unknown or not all(0 <= p <= 1 for p in v.values()):
            raise ValueError(f"city_idle maps configurations {sorted(CITY_CONFIGS.values())} to probabilities; got {v}")
        return v


CITY_CONFIGS = {"Reply": "Base", "ReplyToM": "ToM", "ReplyIB": "IB", "ReplyToMIB": "ToM+IB"}
"""A city agent's reply schema, by its name, and the configuration that asks for it."""
