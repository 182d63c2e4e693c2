"""A conformance check every game must pass (after PettingZoo's API tests); used by the test suite and
available to anyone adding a game: ``check_game(load_game("mygame"))``."""

from __future__ import annotations

import random
from typing import Any

from tomlib.envs._base import Game, IllegalAction, NoExactModel


def _rollout(game: Game, seed: int, policy_seed: int) -> list[tuple[Any, tuple[str, str]]]:
    rng = random.Random(policy_seed)
    state = game.reset(seed)
    trace = []
    for _ in range(game.info.horizon + 1):
        if game.is_terminal(state):
            break
        joint = (rng.choice(game.legal_actions(state, 0)), rng.choice(game.legal_actions(state, 1)))
        trace.append((state, joint))
        state = game.step(state, joint)
    trace.append((state, ("", "")))
    return trace


def check_game(game: Game, seeds: tuple[int, ...] = (0, 1, 7)) -> None:
    """Raise AssertionError naming the first broken promise of the Game interface."""
    info = game.info
    assert info.metric in ("point", "time") and info.better in ("higher", "lower"), "GameInfo metric/better"
    for seed in seeds:
        first, second = _rollout(game, seed, seed), _rollout(game, seed, seed)
        assert [repr(s) for s, _ in first] == [repr(s) for s, _ in second], "same seed, same trajectory"
        final = first[-1][0]
        assert game.is_terminal(final), f"no terminal state within the horizon ({info.horizon})"
        score = game.score(final)
        lo, hi = sorted((0.0, info.worst if info.better == "lower" else float("inf")))
        assert lo <= score <= hi, f"score {score} outside [{lo}, {hi}]"
        for state, joint in first[:-1]:
            for player in (0, 1):
                legal = game.legal_actions(state, player)
                assert legal and len(set(legal)) == len(legal), "legal actions: non-empty, no duplicates"
                text = game.describe(state, player)
                missing = [a for a in legal if a not in text]
                assert not missing, f"description for player {player + 1} does not mention {missing}"
                for a in legal:
                    assert game.parse_action(a, state, player) == a, f"parse_action({a!r}) failed"
                    assert game.parse_action(f"I will play {a}.", state, player) == a or any(
                        a != b and a in b for b in legal
                    ), f"parse_action('I will play {a}.') failed"
                try:
                    game.parse_action("fly to the moon", state, player)
                except IllegalAction:
                    pass
                else:
                    raise AssertionError("parse_action accepted text naming no legal action")
                assumed = game.environment_actions(state, player)
                assert assumed, "environment_actions must name at least one action"
            if game.has_exact_values:
                value = game.joint_value(state, joint)
                assert isinstance(value, int | float) and value == value, "joint_value must be a number"
            else:
                try:
                    game.joint_value(state, joint)
                except NoExactModel:
                    pass
                else:
                    raise AssertionError("has_exact_values is False but joint_value answered")
            for bad in (("not-an-action", joint[1]), (joint[0], "not-an-action")):
                try:
                    game.step(state, bad)
                except IllegalAction:
                    continue
                raise AssertionError(f"step accepted the illegal joint action {bad}")
        try:
            game.step(final, ("x", "y"))
        except IllegalAction:
            pass
        else:
            raise AssertionError("step accepted an action after the end of the episode")
