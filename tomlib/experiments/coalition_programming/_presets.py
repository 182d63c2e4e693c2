"""The coalition paper's iterative-programming setup (``coalition-matching-iclr-draft.txt`` §6.1, Appendix F.3): the
benchmarks, the paper's models and each table's conditions.

A condition is a :class:`~tomlib.programming.TeamConfig`: the PM's ToM order, the engineers' ToM order and matching on
or off. Its label names the condition, not the notebook, so notebooks sharing a condition replay (or pay for) its
calls once.
"""

from __future__ import annotations

from tomlib.datasets import CodeTask, humaneval, mbpp
from tomlib.programming import TeamConfig

PAPER_ID = "coalition"
BENCHMARKS = ("humaneval", "mbpp")
PAPER_MODELS = {
    "gpt-3.5-turbo": "gpt-3.5-turbo",
    "glm-4": "GLM-4",
    "llama-3-70b": "Llama-3-70b",
    "gemini-1.5-flash": "Gemini-1.5-flash",
    "claude-3-sonnet": "Claude-3-sonnet",
    "gpt-4o-mini": "gpt-4o-mini",
}
"""Our models.yaml names → the model names the paper's tables print (so paper values line up)."""
TABLE1_MODELS = ("gpt-3.5-turbo", "glm-4", "llama-3-70b", "gemini-1.5-flash", "claude-3-sonnet")
TOM_CONFIGS = ((0, 1), (0, 2), (1, 1), (1, 2), (1, 0), (2, 0))
"""(PM ToM, engineer ToM) of Tables 10-12, in the paper's row order."""


def table1_configs() -> list[TeamConfig]:
    """Table 1's conditions (§6.3): a ToM-1 and a ToM-2 PM, no matching."""
    return [TeamConfig(pm_tom=k) for k in (1, 2)]


def table2_configs() -> list[TeamConfig]:
    """Tables 2 and 6's conditions (§6.3, Fig. 2): PM ToM 1 and 2, each without and with matching."""
    return [TeamConfig(pm_tom=k, matching=m) for k in (1, 2) for m in (False, True)]


def table3_configs() -> list[TeamConfig]:
    """Table 3's conditions (§6.3): our MetaGPT-style baseline (ToM-0, no matching) and ToM 1 and 2 with matching."""
    return [TeamConfig(pm_tom=0), TeamConfig(pm_tom=1, matching=True), TeamConfig(pm_tom=2, matching=True)]


def tables10_12_configs() -> list[TeamConfig]:
    """Tables 10-12's conditions (Appendix F.3): every (PM ToM, engineer ToM) of :data:`TOM_CONFIGS`, without and
    with matching."""
    return [TeamConfig(pm_tom=p, eng_tom=e, matching=m) for p, e in TOM_CONFIGS for m in (False, True)]


def load_tasks(benchmark: str, n: int, *, mbpp_split: str = "test") -> list[CodeTask]:
    """The first ``n`` tasks of a benchmark (``n <= 0``: all of them). MBPP's default is its test split."""
    if benchmark not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {benchmark!r}; use {' or '.join(BENCHMARKS)}")
    tasks = humaneval() if benchmark == "humaneval" else mbpp(mbpp_split)  # type: ignore[arg-type]
    return list(tasks if n <= 0 else tasks[:n])


def model_label(model: str) -> str:
    """The model name in result rows: the paper's printed name for the paper's models (§6.1), else ours.

    Args:
        model: a name from ``configs/models.yaml``.
    """
    return PAPER_MODELS.get(model, model)
