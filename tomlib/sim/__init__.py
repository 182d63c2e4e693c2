"""A simulated competent model for rehearsing the papers' scale: declared, seeded competence per kind of prompt
(engineers, PMs, debaters and judge, multiple-choice agents), served over real HTTP. Its rows are ``sim:<name>``,
never set beside the papers as a reproduction.

Only :class:`SimSpec` is imported with the package: the model registry checks every ``sim:`` entry with it when it is
read (the first response a store writes reads it, to know the key names to redact), and the server and the declared
truth bring pandas, which that check must not pay for."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tomlib.sim._spec import CALL_HEADER, SimSpec

if TYPE_CHECKING:
    from tomlib.sim._answers import NoRule, reply
    from tomlib.sim._declared import expected_values
    from tomlib.sim._server import SimServer

__all__ = ["CALL_HEADER", "NoRule", "SimServer", "SimSpec", "expected_values", "reply"]
_LAZY = {"NoRule": "_answers", "reply": "_answers", "expected_values": "_declared", "SimServer": "_server"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"tomlib.sim.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'tomlib.sim' has no attribute {name!r}")
