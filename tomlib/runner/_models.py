"""Model names in notebook parameters, checked by the runner before any kernel starts: an unknown name gets one
line with the closest configured name; a model that must call live without its key set is refused (record) or
flagged (auto) here, not seconds into a kernel."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from tomlib.errors import UsageError, did_you_mean
from tomlib.llm import models_file, read_models

MODEL_PARAMETERS = ("model", "models", "judge")  # parameters that name models (comma-separated lists allowed)


def named_models(params: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(parameter, model name) for every model a notebook's parameters name; "" (skip / same as the model) and
    "formal" (the exact agents, where a notebook takes it) are none."""
    out = []
    for key in MODEL_PARAMETERS:
        value = params.get(key)
        if isinstance(value, str):
            out += [(key, n.strip()) for n in value.split(",") if n.strip() and n.strip() != "formal"]
    return out


def check_models(runs: Iterable[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """Raise :class:`UsageError` naming every unknown model (with "did you mean"), every malformed entry a notebook
    names (a malformed entry no notebook names stops nothing), and every model a ``record`` run would call without
    its key; return warnings for ``auto`` runs whose model has no key (only recorded calls can be answered)."""
    configured, broken = read_models()
    known = [*configured, *broken]
    problems, warnings = [], []
    for notebook, params in runs:
        mode = str(params.get("llm_mode") or os.environ.get("TOMLIB_LLM_MODE") or "auto")
        for key, name in named_models(params):
            cfg = configured.get(name)
            if name in broken:
                problems.append(f"{notebook}: {broken[name].removesuffix('.')}")
                continue
            if cfg is None:
                problems.append(f"{notebook}: {key} '{name}' is not a configured model{did_you_mean(name, known)}")
                continue
            if mode == "replay" or cfg.kind == "local" or not cfg.api_key_env or os.environ.get(cfg.api_key_env):
                continue
            line = f"{notebook}: model '{name}' needs its key in ${cfg.api_key_env}, which is not set"
            (problems if mode == "record" else warnings).append(line)
    if problems:
        names = ", ".join(sorted(known))
        raise UsageError(
            "; ".join(dict.fromkeys(problems)) + f". Configured models: {names} ({models_file()}; see docs/models.md, "
            "'Adding a model'). Nothing was run."
        )
    return [f"{w}: only calls already recorded can be answered (export the key to call live)" for w in warnings]
