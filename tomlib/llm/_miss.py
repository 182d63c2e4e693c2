"""Why a replay found nothing, and how to record the call again: the text of a useful :class:`ReplayMiss`."""

from __future__ import annotations

import os
from typing import Any

from tomlib.errors import load_yaml
from tomlib.llm._config import ModelConfig
from tomlib.llm._request import describe_change
from tomlib.llm._store import ResponseStore
from tomlib.paths import configs_dir


def explain_miss(store: ResponseStore, request: dict[str, Any]) -> str:
    """A recording of the same call site under another request (and what changed), or a damaged transcript."""
    notes = []
    recorded = store.recorded_for_site(request)
    if recorded:
        same_len = [r for r in recorded if len(r["messages"]) == len(request["messages"])] or recorded
        notes.append(
            "A response for this call site was recorded, but the request changed since: "
            f"{describe_change(same_len[0], request)}."
        )
    else:
        notes += moved_endpoint(store, request) or [_beyond_the_recording(store, request)]
    experiment = request["sample_key"]["experiment"]
    for path, problem in store.transcript_problems.items():
        stem = os.path.basename(path).removesuffix(".jsonl.gz")
        if experiment == stem or experiment.startswith(stem + ".") or stem.startswith(experiment):
            notes.append(f"Its transcript could not be read: {problem}")
    return (" " + " ".join(notes)) if notes else ""


def _beyond_the_recording(store: ResponseStore, request: dict[str, Any]) -> str:
    """A call site never recorded: none of its experiment was, or the run goes past what was (more items)."""
    experiment = request["sample_key"]["experiment"]
    n = store.recorded_in_experiment(request)
    if n == 0:
        return f"Nothing of {experiment} was recorded for this model."
    return (
        f"{n} calls of {experiment} were recorded for this model, none at this call site: the run goes past what was "
        "recorded (more tasks, questions, episodes or rounds than the recording; a count of 0 means all)."
    )


def moved_endpoint(store: ResponseStore, request: dict[str, Any], name: str = "") -> list[str]:
    """The hint for a call recorded under another endpoint of the same served model (a server moved to another
    port or host): the ``endpoint_id`` that makes those recordings count again."""
    elsewhere = store.endpoints_elsewhere(request)
    if not elsewhere:
        return []
    who = f"model '{name}'" if name else "this model"
    return [
        f"The same model answered this call site under another endpoint ({', '.join(elsewhere)}); the endpoint is "
        f"part of the key, so if it is the same server moved, set `endpoint_id: {elsewhere[0]}` on {who} in "
        "configs/models.yaml and those recordings answer again."
    ]


def rerecord_hint(config: ModelConfig) -> str:
    """The profile that runs this model live (``record-local`` for ``local``), else the notebook parameter."""
    for path in sorted((configs_dir() / "profiles").glob("*.yaml")):
        try:
            raw = load_yaml(path, "profile") or {}
            params = raw.get("parameters", {}) or {}
        except Exception:  # a broken profile says so when it is used; here it just cannot be suggested
            continue
        if params.get("model") == config.name and params.get("llm_mode") in {"auto", "record"}:
            return f"`.venv/bin/tomlib run --profile {path.stem}` re-records it (llm_mode={params['llm_mode']})"
    key = f", with ${config.api_key_env} set" if config.api_key_env else ""
    return f"rerun with the notebook parameter llm_mode='auto' (records only what is missing){key}"
