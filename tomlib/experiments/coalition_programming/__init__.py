"""Notebooks 08-11: the coalition paper's iterative-programming experiments (the module moved into a package)."""

from tomlib.experiments.coalition_programming._tables import *  # noqa: F403
