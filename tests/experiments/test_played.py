"""Formal conditions a process played already are replayed, not played again (issue 35): a table run again under a
reading that leaves a condition's game and agents as they were gives exactly the episodes, weights, units and run-log
events of playing it afresh, and a condition whose agents that reading changes is played."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.experiments._logs import run_events
from tomlib import runshare
from tomlib.experiments import adaptive_tom as at
from tomlib.experiments.adaptive_tom import _played, _run
from tomlib.experiments.adaptive_tom._setup import AGENT_NAMES, Setup
from tomlib.runshare import ENV_SHARED
from tomlib.workers import ENV_WORKERS

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

AGENTS = ["ToM-0", "Greedy", "A-ToM (FTL)"]


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The conditions played (not replayed) from now on."""
    played: list[str] = []
    here = _run.play_here

    async def counting(game: Any, players: Any, setup: Any, **kw: Any) -> Any:
        played.append(kw["condition"])
        return await here(game, players, setup, **kw)

    monkeypatch.setattr(_run, "play_here", counting)
    return played


def _under(results: Path, monkeypatch: pytest.MonkeyPatch, **reading: Any) -> at.Reproduction:
    monkeypatch.setenv("TOMLIB_RESULTS", str(results))
    return asyncio.run(at.table3(agents=AGENTS, episodes=2, progress=False, detail_episodes=0, **reading))


def test_a_reading_of_a_toms_own_replays_the_pairs_without_a_tom_exactly(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(ENV_WORKERS, "1")
    played = _counting(monkeypatch)
    monkeypatch.setenv("TOMLIB_RESULTS", str(tmp_path / "kept"))
    asyncio.run(at.table3(agents=AGENTS, episodes=2, progress=False))  # logs its first 3 episodes' steps
    assert len(played) == 6
    played.clear()
    replayed = _under(tmp_path / "kept", monkeypatch, carry_losses=True)
    with_atom = [f"overcooked:{a} vs {b}" for a in AGENTS for b in AGENTS if a != b and "A-ToM" in a + b]
    assert sorted(played) == sorted(with_atom)  # ToM-0 and Greedy with each other: replayed
    _played.forget()
    fresh = _under(tmp_path / "fresh", monkeypatch, carry_losses=True)
    assert len(played) == 4 + 6  # afresh: every pair played
    pd.testing.assert_frame_equal(replayed.table, fresh.table)
    pd.testing.assert_frame_equal(replayed.episodes, fresh.episodes)
    pd.testing.assert_frame_equal(replayed.weights, fresh.weights)
    # the replayed pairs' events cut to this log's detail (none past each episode's first state), in the same order
    assert run_events(tmp_path / "kept", replayed.run_id) == run_events(tmp_path / "fresh", fresh.run_id)
    units = tmp_path / "kept" / "units" / "adaptive_tom.table3.csv"
    kept = pd.read_csv(units).query("carry_losses == True").reset_index(drop=True)
    anew = pd.read_csv(tmp_path / "fresh" / "units" / "adaptive_tom.table3.csv")
    pd.testing.assert_frame_equal(kept, anew)


def test_events_kept_with_less_detail_than_a_log_keeps_are_played_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(ENV_WORKERS, "1")
    played = _counting(monkeypatch)
    _under(tmp_path, monkeypatch)
    assert len(played) == 6
    asyncio.run(at.table3(agents=AGENTS, episodes=2, progress=False))  # logs steps the first run did not keep
    assert len(played) == 12
    _under(tmp_path, monkeypatch)  # both kept now cover it
    asyncio.run(at.table3(agents=AGENTS, episodes=3, progress=False))  # another number of episodes
    assert len(played) == 18


def _made(obj: Any, depth: int = 3) -> Any:
    """An object as the values it holds, its parts' too (the parts a formal agent makes for itself)."""
    if depth and hasattr(obj, "__dict__") and not isinstance(obj, type):
        return (type(obj).__qualname__, {k: _made(v, depth - 1) for k, v in vars(obj).items()})
    if isinstance(obj, list | tuple):
        return [_made(v, depth) for v in obj]
    return obj


def test_a_formal_agents_settings_are_every_argument_it_is_made_with() -> None:
    """Two setups give a formal agent equal settings exactly when they make it alike, field for field."""
    readings = {
        "tie_break": ["independent", "shared"],
        "tie_epsilon": [0.0, 0.2],
        "carry_losses": [False, True],
        "expert_prediction": ["draw", "flat"],
        "pbt": ["ppo-selfplay"],
        "ppo_member": [None, 1],
        "ppo_deterministic": [False, True],
        "prefer": ["", "own"],
        "llm_history": [10, 3],
        "temperature": [0.1, 0.9],
    }
    base = Setup(pbt="ppo-selfplay")
    for spec in AGENT_NAMES:
        for field, values in readings.items():
            for value in values:
                other = dataclasses.replace(base, **{field: value})
                same = other.settings(spec) == base.settings(spec)
                assert (_made(base.agent(spec)) == _made(other.agent(spec))) == same, (spec, field, value)


def test_llm_conditions_are_never_kept() -> None:
    from tomlib.llm import ChatModel

    game = at.load_task("overcooked")
    formal = Setup()
    assert _played.key(game, ("ToM-0", "Greedy"), formal, 42, "c", 2) is not None
    llm = Setup(model="sim", chat=ChatModel.from_name("sim", mode="replay"))
    assert _played.key(game, ("ToM-0", "Greedy"), llm, 42, "c", 2) is None


def test_the_notebooks_of_a_run_share_conditions_through_its_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Table 1's ToM-k pairs in the kitchen, played by one notebook's kernel, are replayed by Table 3 in another's."""
    monkeypatch.setenv(ENV_WORKERS, "1")
    (tmp_path / "shared").mkdir(mode=0o700)
    monkeypatch.setenv(ENV_SHARED, str(tmp_path / "shared"))
    played = _counting(monkeypatch)
    monkeypatch.setenv("TOMLIB_RESULTS", str(tmp_path / "results"))
    tom = [("ToM-0", "ToM-1"), ("ToM-1", "ToM-0")]
    asyncio.run(at.table1(tasks=["overcooked"], pairs=tom, episodes=2, progress=False))
    assert len(list((tmp_path / "shared" / _played.PART).glob("*.3.pickle"))) == 2
    _played.forget()  # another kernel: nothing in memory
    played.clear()
    three = ["ToM-0", "ToM-1", "Greedy"]
    shared = asyncio.run(at.table3(agents=three, episodes=2, progress=False))
    assert sorted(played) == sorted(
        f"overcooked:{a} vs {b}" for a in three for b in three if "Greedy" in (a, b) and a != b
    )
    _played.forget()
    monkeypatch.delenv(ENV_SHARED)
    monkeypatch.setenv("TOMLIB_RESULTS", str(tmp_path / "fresh"))
    fresh = asyncio.run(at.table3(agents=three, episodes=2, progress=False))
    pd.testing.assert_frame_equal(shared.table, fresh.table)
    pd.testing.assert_frame_equal(shared.weights, fresh.weights)
    assert run_events(tmp_path / "results", shared.run_id) == run_events(tmp_path / "fresh", fresh.run_id)


def test_a_file_that_cannot_be_read_is_played_again(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(ENV_SHARED, str(tmp_path))
    at_ = _played.key(at.load_task("overcooked"), ("ToM-0", "Greedy"), Setup(), 42, "overcooked:ToM-0 vs Greedy", 2)
    assert at_ is not None
    cut = runshare.folder(_played.PART) / f"{_played._name(at_)}.3.pickle"
    cut.write_bytes(b"cut short")  # e.g. a disk that filled up
    assert _played.recall(at_, 0) is None


def test_the_runner_gives_a_local_run_a_private_folder_and_deletes_it() -> None:
    import os
    import stat

    from tomlib.runner._cluster import shared_folder

    env: dict[str, str] = {}
    with shared_folder(env, here=True):
        folder = Path(env[ENV_SHARED])
        assert folder.is_dir() and stat.S_IMODE(os.stat(folder).st_mode) == 0o700
        (folder / "x.0.pickle").write_bytes(b"")
    assert not folder.exists()
    remote: dict[str, str] = {}
    with shared_folder(remote, here=False):  # a cluster elsewhere: its machines do not see this one's folders
        assert ENV_SHARED not in remote


def test_a_folder_other_users_can_write_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from tomlib.errors import UsageError

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # what is read from it is unpickled: no one else may put files there
    monkeypatch.setenv(ENV_SHARED, str(shared))
    at_ = _played.key(at.load_task("overcooked"), ("ToM-0", "Greedy"), Setup(), 42, "overcooked:ToM-0 vs Greedy", 2)
    with pytest.raises(UsageError, match=r"Refusing .* any user can write to it .*chmod go-w"):
        _played.recall(at_, 0)
