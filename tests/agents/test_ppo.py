"""The PPO self-play stand-in for PBT: the shipped weights cook on tomlib's kitchen, bad weights are refused."""

from __future__ import annotations

import asyncio
import json
import random
import statistics
from pathlib import Path

import numpy as np
import pytest

from tomlib.agents import play_episode
from tomlib.agents._selfplay import DELIVERY_REWARD, SelfPlayKitchens
from tomlib.agents.ppo import Policy, Population, PPOPartner, WeightsUnavailable, features, weights_path
from tomlib.envs.overcooked import OvercookedGame

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


@pytest.fixture(scope="module")
def game() -> OvercookedGame:
    return OvercookedGame()


@pytest.fixture(scope="module")
def population(game: OvercookedGame) -> Population:
    return Population.load(game)


def times(game: OvercookedGame, make, episodes: int) -> list[float]:  # type: ignore[no-untyped-def]
    async def go() -> list[float]:
        return [(await play_episode(game, make(), seed=7, episode=i, condition="t")).score for i in range(episodes)]

    return asyncio.run(go())


def test_every_shipped_member_cooks_with_itself_and_untrained_weights_do_not(game, population) -> None:  # type: ignore[no-untyped-def]
    # the observation and the action order at run time must be the ones training used: a mismatch would leave the
    # policy as helpless as random weights of the same shape, which never deliver in 100 steps
    for m in range(len(population.members)):
        got = times(game, lambda m=m: [PPOPartner(population, m), PPOPartner(population, m)], 10)
        assert sum(t < game.horizon for t in got) >= 9 and statistics.mean(got) < 70, (m, got)
    rng = np.random.default_rng(0)
    shapes = [(w.shape, b.shape) for w, b in population.members[0].layers]
    untrained = Population(
        (Policy(tuple((rng.normal(0, 0.3, ws), np.zeros(bs)) for ws, bs in shapes)),), population.meta
    )
    got = times(game, lambda: [PPOPartner(untrained, 0), PPOPartner(untrained, 0)], 5)
    assert all(t == game.horizon for t in got)


def test_members_are_drawn_per_episode_from_the_agents_stream(game, population) -> None:  # type: ignore[no-untyped-def]
    drawn = set()
    for seed in range(12):
        agent = PPOPartner(population)
        agent.start_episode(game, 0, random.Random(seed))
        drawn.add(agent.index)
    assert drawn == set(range(len(population.members)))
    with pytest.raises(ValueError, match="not in the population"):
        PPOPartner(population, member=len(population.members)).start_episode(game, 0, random.Random(0))


def test_the_weights_say_how_they_were_made(population) -> None:  # type: ignore[no-untyped-def]
    meta = population.meta
    assert "not PBT" in meta["what"] and meta["script"] == "scripts/train_ppo_partner.py"
    summary = population.summary()
    assert len(summary) == len(population.members) == meta["members"]
    assert (summary["max |logit| error numpy vs torch"] < 1e-4).all()  # measured by the script on visited states
    assert (summary["kitchen steps"] > 0).all() and summary["time with itself"].notna().all()
    assert set(population.curves()["member"]) == set(range(len(population.members)))


def test_weights_for_another_kitchen_or_none_at_all_are_refused_with_the_fix(game, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(WeightsUnavailable, match=r"another kitchen.*train them with"):
        Population.load(OvercookedGame(cook_time=10), weights_path(game.layout_name))
    with pytest.raises(WeightsUnavailable, match=r"is missing.*scripts/train_ppo_partner\.py"):
        Population.load(game, tmp_path / "none.npz")
    with np.load(weights_path(game.layout_name)) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(str(arrays.pop("meta")))
    meta["actions"] = list(reversed(meta["actions"]))
    np.savez(tmp_path / "shuffled.npz", meta=np.array(json.dumps(meta)), **arrays)
    with pytest.raises(WeightsUnavailable, match="orders its actions"):
        Population.load(game, tmp_path / "shuffled.npz")


def test_self_play_kitchens_reward_the_delivery_end_the_episode_and_truncate_at_the_limit(population) -> None:  # type: ignore[no-untyped-def]
    kitchens = SelfPlayKitchens(2, shaping=0.0)
    obs = kitchens.reset()
    assert obs.shape == (4, kitchens.obs_dim)
    assert np.array_equal(obs[:2], features(kitchens.game, kitchens.states[0]))  # the features the partner sees
    # game 0 stays put for the whole limit, game 1 is cooked by a trained member
    policy, rng = population.members[0], np.random.default_rng(1)
    stay = kitchens.names.index("stay")
    ends: dict[int, tuple[float, dict[str, object]]] = {}
    for _ in range(kitchens.game.horizon):
        probs = policy.probabilities(obs[2:])
        acts = [stay, stay, *(rng.choice(len(p), p=p) for p in probs)]
        obs, rewards, dones, infos = kitchens.step(np.array(acts))
        for g in (0, 1):
            if dones[2 * g] and g not in ends:
                ends[g] = (float(rewards[2 * g]), infos[2 * g])
    assert ends[0][0] == 0.0 and ends[0][1]["TimeLimit.truncated"] is True and ends[0][1]["time"] == 100
    assert ends[1][0] == DELIVERY_REWARD and ends[1][1]["TimeLimit.truncated"] is False and ends[1][1]["time"] < 100
    assert len(ends[0][1]["terminal_observation"]) == kitchens.obs_dim  # type: ignore[arg-type]


def test_kept_policy_answers_are_the_policy_on_the_features(game, population) -> None:  # type: ignore[no-untyped-def]
    from tomlib.agents.ppo import policy_probabilities

    rng, s = random.Random(3), game.reset(0)
    for _ in range(40):
        for m in population.members:
            for player in (0, 1):
                got = policy_probabilities(game, s, m, player)
                assert np.array_equal(got, m.probabilities(features(game, s)[player])) and not got.flags.writeable
        s = game.step(s, (rng.choice(game.legal_actions(s, 0)), rng.choice(game.legal_actions(s, 1))))
