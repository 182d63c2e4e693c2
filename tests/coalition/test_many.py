"""Small coalition instances solved on worker processes (``tomlib.coalition._many.solve_many``): the same answers,
in the same order, as solving them one by one."""

from __future__ import annotations

import functools
import multiprocessing
import os

import numpy as np
import pandas as pd
import pytest

from tomlib.coalition import solve_coalitions
from tomlib.coalition._appendix_g import check_appendix_g, random_instance
from tomlib.coalition._many import close, solve_many
from tomlib.workers import ENV_WORKERS

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


@pytest.fixture(autouse=True)
def no_pool_left() -> None:
    yield
    close()


def test_workers_answer_as_one_process_does_in_order() -> None:
    rng = np.random.default_rng(3)
    instances = [random_instance(rng, n) for n in (4, 5, 6) for _ in range(12)]
    solve = functools.partial(solve_coalitions, optimize=False)
    here = [(s.stable_exists, s.structure) for s in solve_many(solve, instances, workers=1)]
    there = [(s.stable_exists, s.structure) for s in solve_many(solve, instances, workers=2)]
    assert there == here == [(s.stable_exists, s.structure) for s in map(solve, instances)]
    assert len(set(here)) > 10  # the answers differ from instance to instance: their order is checked


def test_appendix_g_is_the_same_on_one_process_and_on_two(monkeypatch: pytest.MonkeyPatch) -> None:
    got = {}
    for workers in ("1", "2"):
        monkeypatch.setenv(ENV_WORKERS, workers)
        got[workers] = pd.DataFrame([c.__dict__ for c in check_appendix_g(trials=6, seed=5)])
    pd.testing.assert_frame_equal(got["1"], got["2"])
    assert len(got["2"]) == 36


def _dies_in_a_worker(x: int) -> int:
    if multiprocessing.parent_process() is not None:
        os._exit(3)
    return 2 * x


def test_a_worker_that_stops_leaves_the_work_to_this_process(capfd: pytest.CaptureFixture[str]) -> None:
    assert solve_many(_dies_in_a_worker, list(range(40)), workers=2) == [2 * x for x in range(40)]
    assert "a coalition worker process stopped; solving here" in capfd.readouterr().err
