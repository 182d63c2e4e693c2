"""Run profiles (``configs/profiles/<name>.yaml``): the papermill parameters of every notebook, and a budget."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tomlib.errors import ConfigFileError, describe_validation, load_yaml
from tomlib.llm import Budget
from tomlib.paths import configs_dir, project_root


class Profile(BaseModel):
    """A named way to run the notebook series."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(
        default_factory=dict, description="Given to every notebook that declares the parameter."
    )
    notebooks: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Per-notebook parameters (by file stem); must be declared."
    )
    skip: list[str] = Field(default_factory=list, description="Notebook stems this profile does not run.")
    scheduler: str | None = Field(
        default=None,
        description="Address of a dask scheduler (tcp://host:8786) to run on; --scheduler overrides it. Without "
        "one, notebooks run on a local cluster of --jobs worker processes.",
    )
    dashboard: bool = Field(
        default=False,
        description="Serve the local dask cluster's dashboard on 127.0.0.1 (off by default: any local user can read "
        "it, logs and call stacks included); --dashboard turns it on for one run.",
    )
    sandbox: str | None = Field(
        default=None,
        description="How generated code runs: `isolated` (the default: only where it can be isolated) or "
        "`rlimits-only` (also where it cannot; see tomlib.sandbox). --sandbox and TOMLIB_SANDBOX override it.",
    )
    stop_when_decided: bool = Field(
        default=False,
        description="Run notebooks with size parameters in waves and stop each once every claim it serves is "
        "decided (anytime-valid confidence sequences; tomlib.planning); --stop-when-decided turns it on for one run.",
    )
    waves: int = Field(default=4, ge=1, description="With stop_when_decided: looks, at equal steps up to the sizes.")
    claims: list[str] = Field(
        default_factory=list,
        description="With stop_when_decided: the claims a notebook waits for (empty: every claim it serves); "
        "`.venv/bin/tomlib plan` writes the ones it planned.",
    )
    budget: Budget | None = Field(
        default=None,
        description="Limit on the live calls of the whole run (`max_usd`, `max_tokens`); the command line's "
        "--max-usd / --max-tokens override it.",
    )


def profiles_dir() -> Path:
    """The profiles of the project (``configs/profiles/``): part of every notebook's stamp, as all of ``configs/``."""
    return configs_dir() / "profiles"


def written_profiles_dir() -> Path:
    """The profiles tomlib writes for you (``tomlib plan``): ``.tomlib/profiles/``, which no stamp hashes, so writing
    one reruns nothing of the series (``TOMLIB_PROFILES`` overrides)."""
    env = os.environ.get("TOMLIB_PROFILES")
    return Path(env).resolve() if env else project_root() / ".tomlib" / "profiles"


def available_profiles() -> list[str]:
    return sorted({p.stem for folder in (profiles_dir(), written_profiles_dir()) for p in folder.glob("*.yaml")})


def load_profile(name: str | os.PathLike[str]) -> Profile:
    """A profile by name (``default``, ``smoke``, ``full``, one ``tomlib plan`` wrote) or by YAML path."""
    path = Path(name)
    if path.suffix not in (".yaml", ".yml") and len(path.parts) == 1:  # a name, dots and all (plan-…-coalition.x)
        path = profiles_dir() / f"{name}.yaml"
        if not path.exists() and (written_profiles_dir() / f"{name}.yaml").exists():
            path = written_profiles_dir() / f"{name}.yaml"
    if not path.exists():
        raise ConfigFileError(
            f"No profile '{name}'. Available: {', '.join(available_profiles()) or '(none)'} in {profiles_dir()} "
            f"and {written_profiles_dir()}, or give the path of a YAML file."
        )
    raw = load_yaml(path, "profile")
    shape = "a mapping with `parameters:`, and optionally `notebooks:`, `skip:` and `budget:`"
    if raw is None:
        raise ConfigFileError(f"Profile {path} is empty; it needs {shape} (see configs/profiles/default.yaml).")
    if not isinstance(raw, dict):
        raise ConfigFileError(f"Profile {path} must be {shape}; its top level is a {type(raw).__name__}.")
    try:
        return Profile(name=raw.pop("name", path.stem), **raw)
    except ValidationError as exc:
        raise ConfigFileError(f"Profile {path} is not valid: {describe_validation(exc)}.") from None
    except TypeError as exc:
        raise ConfigFileError(f"Profile {path} must be {shape} ({exc}).") from None
