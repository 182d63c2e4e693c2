"""The simulated model's fixture: a SimServer on 127.0.0.1 registered as model ``sim`` in a copy of the configs."""

from __future__ import annotations

import math
import shutil
from collections.abc import Iterator
from pathlib import Path
from statistics import NormalDist

import pytest

from tomlib.sim import SimServer, SimSpec

ROOT = Path(__file__).resolve().parents[2]
Z999 = NormalDist().inv_cdf(0.9995)
"""The suite checks about ten counts against their truth, and which call gets which draw differs between runs (see
SimSpec), so each check is a fresh chance of a false alarm: at 99% one CI run in ten or so failed for nothing (111
of 180 against 0.705 once). At 99.9% (3.29 SEs) a wrong rate is still caught: an error rate of 0.2 instead of 0.1
moves those counts by 4.1 and 4.9 SEs."""


def within_ci(hits: int, n: int, p: float) -> bool:
    """``hits`` of ``n`` is within the 99.9% normal interval of a Binomial(n, p)."""
    return abs(hits / n - p) <= Z999 * math.sqrt(p * (1 - p) / n) + 1e-9


@pytest.fixture
def sim(isolated: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[SimServer]:
    spec = getattr(request, "param", SimSpec(name="sim"))
    configs = isolated / "configs"
    shutil.copytree(ROOT / "configs", configs)
    monkeypatch.setenv("TOMLIB_CONFIGS", str(configs))
    with SimServer(spec) as srv:
        with open(configs / "models.yaml", "a") as fh:
            fh.write(srv.model_entry("sim"))
        yield srv
