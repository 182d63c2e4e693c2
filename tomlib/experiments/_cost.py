"""What a live run would cost, printed before its first call: calls, tokens and USD at our per-call token guess."""

from __future__ import annotations

from dataclasses import dataclass

from tomlib.llm import announce_estimate, get_model_config


@dataclass
class Estimate:
    calls: int
    prompt_tokens: int
    completion_tokens: int
    usd: float | None

    def line(self, model: str) -> str:
        cost = "no price configured" if self.usd is None else f"about ${self.usd:,.2f}"
        return (
            f"{model}: {self.calls:,} model calls (before re-asks), about "
            f"{self.prompt_tokens + self.completion_tokens:,} tokens, {cost}. Recorded calls are reused and cost "
            "nothing."
        )

    def __add__(self, other: Estimate) -> Estimate:
        usd = None if self.usd is None or other.usd is None else self.usd + other.usd
        return Estimate(
            self.calls + other.calls,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            usd,
        )

    def announce(self, model: str, note: str = "") -> None:
        """Print the line before the first live call (on the runner's terminal too), and refuse the work when it
        exceeds what is left of the run's budget (:func:`tomlib.llm.announce_estimate`)."""
        line = self.line(model) + (f" ({note})" if note else "")
        announce_estimate(line, tokens=self.prompt_tokens + self.completion_tokens, usd=self.usd)


def price(model: str, calls: int, tokens_per_call: tuple[int, int]) -> Estimate:
    """Tokens and USD of ``calls`` calls of ``model`` at (prompt, completion) tokens per call; USD is None when the
    model has no price configured and needs a key, 0 for local and keyless endpoints."""
    p, c = calls * tokens_per_call[0], calls * tokens_per_call[1]
    mc = get_model_config(model)
    usd = None
    if mc.price_per_1k_input is not None and mc.price_per_1k_output is not None:
        usd = p / 1000 * mc.price_per_1k_input + c / 1000 * mc.price_per_1k_output
    elif mc.kind == "local" or mc.api_key_env is None:
        usd = 0.0
    return Estimate(calls, p, c, usd)
