"""Notebooks 13-14: the coalition paper's reasoning teams (the module moved into a package)."""

from tomlib.experiments.coalition_reasoning._tables import *  # noqa: F403
