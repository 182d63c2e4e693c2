"""An episode read back from its run log: the joint actions, the game spec and the seed that replay it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tomlib.agents import FormalToMAgent, play_episode
from tomlib.envs import load_game
from tomlib.experiments.adaptive_tom import TASKS, load_task
from tomlib.tom import replay_states
from tomlib.trace import RunLog, joint_actions, load_runs, logged_game, logging_to

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def _played(detail: int | None = None) -> tuple[RunLog, list[list[tuple[str, str]]]]:
    game = load_game(TASKS["game2"])
    with RunLog("adaptive_tom.t", run_id="r1", meta={"seed": 5}, detail_episodes=detail) as log, logging_to(log):
        got = [
            asyncio.run(play_episode(game, [FormalToMAgent(2), FormalToMAgent(1)], seed=5, episode=e, condition="c"))
            for e in range(2)
        ]
    return log, [r.actions for r in got]


def test_the_joint_actions_spec_and_seed_of_an_episode_are_read_back(isolated: Path) -> None:
    log, actions = _played()
    for source in (log.dir, log.path, load_runs(run_ids=["r1"])):
        assert joint_actions(source, "c", 1) == actions[1]
        spec, seed = logged_game(source, "c", 1)
        assert (spec, seed) == (load_game(TASKS["game2"]).spec(), 5)
    game = load_game(spec)  # the spec makes the game again, and the log's actions replay on it
    assert len(replay_states(game, seed, joint_actions(log.dir, "c", 0))) == len(actions[0])


def test_an_episode_without_logged_steps_or_not_in_the_log_says_so(isolated: Path) -> None:
    log, _ = _played(detail=1)
    assert joint_actions(log.dir, "c", 0)
    with pytest.raises(ValueError, match=r"kept no steps in this run log .*first 1 episodes"):
        joint_actions(log.dir, "c", 1)
    with pytest.raises(KeyError, match="no episode 9"):
        joint_actions(log.dir, "c", 9)
    with pytest.raises(FileNotFoundError, match="no run log at"):
        joint_actions(isolated / "nowhere", "c", 0)


@pytest.mark.parametrize("task", list(TASKS))
def test_every_task_starts_from_the_same_state_whatever_the_seed(task: str) -> None:
    """Table 3's log holds no seed: its episodes replay anyway, since no task's start depends on it."""
    game = load_task(task)
    assert {game.render(game.reset(seed)) for seed in (None, 0, 42, 12345)} == {game.render(game.reset(0))}
