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
Z99 = NormalDist().inv_cdf(0.995)


def within_ci(hits: int, n: int, p: float) -> bool:
    """``hits`` of ``n`` is within the 99% normal interval of a Binomial(n, p)."""
    return abs(hits / n - p) <= Z99 * math.sqrt(p * (1 - p) / n) + 1e-9


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
