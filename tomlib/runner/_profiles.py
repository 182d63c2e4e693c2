"""Run profiles (``configs/profiles/<name>.yaml``): the papermill parameters of every notebook."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tomlib.paths import configs_dir


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


def profiles_dir() -> Path:
    return configs_dir() / "profiles"


def available_profiles() -> list[str]:
    return sorted(p.stem for p in profiles_dir().glob("*.yaml"))


def load_profile(name: str | os.PathLike[str]) -> Profile:
    """A profile by name (``default``, ``smoke``, ``full``) or by YAML path."""
    path = Path(name)
    if not path.suffix:
        path = profiles_dir() / f"{name}.yaml"
    if not path.exists():
        raise FileNotFoundError(
            f"No profile '{name}'. Available: {', '.join(available_profiles()) or '(none)'} in {profiles_dir()}."
        )
    raw = yaml.safe_load(path.read_text()) or {}
    try:
        return Profile(name=raw.pop("name", path.stem), **raw)
    except ValidationError as exc:
        raise ValueError(f"Profile {path} is not valid:\n{exc}") from None
