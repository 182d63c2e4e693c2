"""Notebook parameters checked before any work, so a typo or a wrong type fails in one line naming the fix, not in
a progress bar or after a long formal run (papermill itself passes any value through)."""

from __future__ import annotations

from typing import Any

from tomlib.llm import get_model_config

LLM_MODES = ("replay", "auto", "record")


def check_whole(name: str, value: Any, at_least: int | None = 0) -> None:
    """``value`` is a whole number (not a bool), at least ``at_least`` when given."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"parameter {name} must be a whole number; got {value!r}")
    if at_least is not None and value < at_least:
        raise ValueError(f"parameter {name} must be at least {at_least}; got {value}")


def check_counts(**counts: Any) -> None:
    """Whole numbers >= 0 (``seeds`` >= 1); a count of 0 means all of them."""
    for name, v in counts.items():
        check_whole(name, v, None)
        if name == "seeds" and v < 1:
            raise ValueError("parameter seeds must be at least 1 (the paper's Tables 10-12: 3)")
        if v < 0:
            raise ValueError(f"parameter {name} counts items from the start of its set (0 = all); got {v}")


def check_models(models: str, llm_mode: str, parameter: str = "models") -> list[str]:
    """The comma-separated model names, each in configs/models.yaml, and a known ``llm_mode``; ``parameter`` is the
    name the notebook gives them, for the error."""
    if llm_mode not in LLM_MODES:
        raise ValueError(f"parameter llm_mode must be replay, auto or record; got {llm_mode!r}")
    names = [m.strip() for m in str(models).split(",") if m.strip()]
    if not names:
        raise ValueError(f'parameter {parameter} names no model; give e.g. {parameter} = "local"')
    for name in names:
        get_model_config(name)  # raises with the list of configured models
    return names


def check_names(name: str, value: Any, known: list[str]) -> list[str]:
    """A comma-separated list whose every item is one of ``known``."""
    if not isinstance(value, str):
        raise TypeError(f"parameter {name} must be a comma-separated string such as {','.join(known[:2])!r}")
    items = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [v for v in items if v not in known]
    if unknown or not items:
        raise ValueError(f"parameter {name}: unknown {unknown or 'empty list'}; choose from {', '.join(known)}")
    return items


def check_hints(namespace: dict[str, Any]) -> None:
    """Every parameter a notebook's parameters cell declares with a type hint (``trials: int = 100``) holds a value of
    that type; pass the notebook's ``globals()``. Catches what papermill injects unchecked (``-p trials five``).

    Args:
        namespace: the notebook's ``globals()``, read for its parameters cell's annotations and values.
    """
    for name, hint in namespace.get("__annotations__", {}).items():
        if not isinstance(hint, type) or name not in namespace:
            continue
        value = namespace[name]
        allowed = (int, float) if hint is float else (hint,)  # a whole number is a fine float
        if not isinstance(value, allowed) or (hint in (int, float) and isinstance(value, bool)):
            raise TypeError(f"parameter {name} must be {hint.__name__} (its parameters cell says so); got {value!r}")
