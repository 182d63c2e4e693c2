"""A programming notebook's parameters, checked before any work (``coalition-matching-iclr-draft.txt`` §6.1-§6.2 and
the readings the paper leaves open): every error names the parameter, its values and the fix."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tomlib.coalition import check_selection
from tomlib.experiments._checks import check_counts, check_models
from tomlib.programming import PM_HISTORIES, PROTOCOL_CHOICES


def check_parameters(
    models: str,
    *,
    llm_mode: str,
    humaneval_tasks: Any,
    mbpp_tasks: Any,
    seeds: Any,
    pm_history: str = "full",
    selection: str = "",
    protocol: Mapping[str, str] | None = None,
) -> list[str]:
    """Check a notebook's parameters before any work; return the model names. Errors name the parameter and fix.

    Args:
        models: comma-separated names from ``configs/models.yaml`` (§6.1's five models for Tables 1-2).
        llm_mode: ``replay`` (recorded transcripts, offline), ``auto`` or ``record``.
        humaneval_tasks: the first N HumanEval tasks, 0 for all 164 (§6.1).
        mbpp_tasks: the first N tasks of MBPP's test split, 0 for all 500 (§6.1).
        seeds: repetitions of every episode, at least 1 (Tables 10-12: 3).
        pm_history: what the PM's belief update sees of the past: ``full`` (the ICLR draft's a^(1:R-1)) or ``last``
            (NeurIPS eq. 1).
        selection: the rule that picks among stable coalitions (§5.1), "" for the ICLR draft's default.
        protocol: the protocol readings to set (:data:`~tomlib.programming.PROTOCOL_CHOICES`), checked by
            :func:`check_protocol`; None sets none.
    """
    check_counts(humaneval_tasks=humaneval_tasks, mbpp_tasks=mbpp_tasks, seeds=seeds)
    check_protocol(protocol or {})
    if selection:
        check_selection(selection, "iclr")
    if pm_history not in PM_HISTORIES:
        raise ValueError(
            f"pm_history must be one of {', '.join(PM_HISTORIES)} (full: every earlier round, the ICLR draft's "
            f"a^(1:R-1); last: the previous round, NeurIPS eq. 1); got {pm_history!r}"
        )
    return check_models(models, llm_mode)


def check_protocol(protocol: Mapping[str, str]) -> dict[str, str]:
    """The protocol readings a notebook sets (TeamConfig fields: ``PROTOCOL_CHOICES``), checked; errors name the
    parameter, its values and the closest one.

    Args:
        protocol: reading name → value, e.g. ``{"rematch": "next"}`` (Algorithm 1 l. 6, 14 against §5.1).
    """
    for name, value in protocol.items():
        allowed = PROTOCOL_CHOICES.get(name)
        if allowed is None:
            raise ValueError(f"unknown protocol reading {name!r}; the readings are {', '.join(PROTOCOL_CHOICES)}")
        if value not in allowed:
            raise ValueError(
                f"{name} must be one of {', '.join(allowed)} (the first is tomlib's default); got {value!r}"
            )
    return dict(protocol)
