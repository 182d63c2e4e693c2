"""Every game passes the conformance check; game-specific rules are tested one by one."""

from __future__ import annotations

import pytest

from tomlib.envs import GridWorld, IllegalAction, Layout, load_game, parse_spec
from tomlib.envs.conformance import check_game

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

SPECS = [
    "matrix(memory=1)",
    "matrix(memory=n)",
    "matrix(memory=1,actions=3)",
    "matrix(memory=n,actions=3)",
    "grid(layout=game1)",
    "grid(layout=game2)",
    "overcooked",
]


@pytest.mark.parametrize("spec", SPECS)
def test_conformance(spec: str) -> None:
    check_game(load_game(spec))


def test_spec_round_trip_and_errors() -> None:
    assert parse_spec("matrix(memory=n, actions=3)") == ("matrix", {"memory": "n", "actions": 3})
    game = load_game("grid(layout=game2,max_steps=40)")
    assert game.spec() == "grid(layout=game2,max_steps=40,prefer=own)"  # the grid's own-progress reading, named
    assert load_game(game.spec()).spec() == game.spec()
    with pytest.raises(ValueError, match="prefer must be one of none, own, own-then-stay"):
        load_game("overcooked(prefer=mine)")
    with pytest.raises(ValueError, match="unknown game 'chess'; known: grid, matrix, overcooked"):
        load_game("chess")
    with pytest.raises(ValueError, match="does not take"):
        load_game("matrix(colour=red)")
    with pytest.raises(FileNotFoundError, match="known: game1, game2"):
        load_game("grid(layout=game9)")


def test_matrix_scores_five_only_when_choices_differ() -> None:
    g = load_game("matrix(memory=1)")
    s = g.reset()
    assert s.last == ("A", "A")  # episodes start uncoordinated (§4.2)
    s = g.step(s, ("A", "B"))
    s = g.step(s, ("B", "B"))
    assert (s.points, s.round, s.last) == (5, 2, ("B", "B"))
    while not g.is_terminal(s):
        s = g.step(s, ("A", "B"))
    assert g.score(s) == 5 + 13 * 5 and s.round == 15


def test_memory_n_environment_action_is_the_most_frequent_choice() -> None:
    g = load_game("matrix(memory=n)")
    s = g.reset()
    assert g.environment_actions(s, 1) == ("A",)  # the uncoordinated start counts once
    s = g.step(s, ("B", "B"))
    assert g.environment_actions(s, 1) == ("A", "B")  # a tie: both are candidates
    s = g.step(s, ("B", "B"))
    assert g.environment_actions(s, 1) == ("B",)
    assert "A: 1, B: 2" in g.describe(s, 0)


def test_grid_rules_conflicts_swaps_goals_and_walls() -> None:
    layout = Layout.parse("t", "1..a\n.#..\nb..2")
    g = GridWorld(layout, max_steps=5)
    s = g.reset()
    assert "down" in g.legal_actions(s, 0) and "up" not in g.legal_actions(s, 0)  # grid edge
    assert "left" not in g.legal_actions(g.step(s, ("down", "stay")), 0)  # edge again
    # player 1 may not enter player 2's goal b at (2, 0)
    s1 = g.step(s, ("down", "stay"))
    assert "down" not in g.legal_actions(s1, 0)
    with pytest.raises(IllegalAction, match="not legal for player 1"):
        g.step(s1, ("down", "stay"))
    # both into the same cell: nobody moves
    same = GridWorld(Layout.parse("s", "1.2\n#a#\n#b#"))
    assert same.step(same.reset(), ("right", "left")).pos == same.layout.starts
    # swapping cells: nobody moves
    swap = GridWorld(Layout.parse("w", "12\nab"))
    assert swap.step(swap.reset(), ("right", "left")).pos == swap.layout.starts
    # following into the cell the partner leaves is fine
    follow = GridWorld(Layout.parse("f", "12.\nab."))
    assert follow.step(follow.reset(), ("right", "right")).pos == ((0, 1), (0, 2))


def test_grid_failure_scores_the_step_limit() -> None:
    g = load_game("grid(layout=game1,max_steps=4)")
    s = g.reset()
    while not g.is_terminal(s):
        s = g.step(s, ("stay", "stay"))
    assert g.score(s) == 4.0 and not g.solved(s)


@pytest.mark.parametrize(("layout", "optimum"), [("game1", 6), ("game2", 6)])
def test_layout_optimum_matches_the_documented_value(layout: str, optimum: int) -> None:
    g = load_game(f"grid(layout={layout})")
    assert g.cost_to_go[g.layout.starts] == optimum


def test_joint_value_prefers_the_coordinated_move_at_the_crossing() -> None:
    g = load_game("grid(layout=game1)")
    s = g.reset()
    s = g.step(g.step(s, ("right", "down")), ("right", "down"))  # both one step before the crossing
    assert g.joint_value(s, ("right", "stay")) > g.joint_value(s, ("right", "down"))  # collide: nobody moves
    assert g.joint_value(s, ("right", "stay")) == g.joint_value(s, ("stay", "down"))  # either may go first


def test_overcooked_pot_cooks_by_itself_and_delivery_ends_the_episode() -> None:
    g = load_game("overcooked(horizon=100)")
    s = g.reset()
    # cook 1 fetches three onions from its dispenser (left) and drops them into the pot (up, from column 2)
    plan = ["left", "interact", "right", "up", "interact"]
    for _ in range(3):
        for a in plan:
            s = g.step(s, (a, "stay"))
        s = g.step(s, ("left", "stay"))
    assert "is cooking; the soup is ready in" in g.describe(s, 0)  # nobody pressed interact to start it
    while "finished soup" not in g.describe(s, 0):
        s = g.step(s, ("stay", "stay"))
    for a in ["down", "left", "interact", "right", "up", "interact", "down", "down", "interact"]:
        s = g.step(s, (a, "stay"))
        if g.is_terminal(s):
            break
    assert s.delivered and g.is_terminal(s) and g.score(s) == s.t < 100


def _best_joint(g, k, index, value, c, rng):  # type: ignore[no-untyped-def]
    from tomlib.envs._kitchen import DELIVERED, OUT

    options = []
    for a0 in range(6):
        for a1 in range(6):
            m = k.step(c, (a0, a1))
            if m != OUT:
                options.append((0 if m == DELIVERED else int(value[index[m]]), (a0, a1), m))
    best = min(o[0] for o in options)
    return rng.choice([o for o in options if o[0] == best]), options


def test_the_exact_kitchen_model_follows_overcooked_ai_step_by_step() -> None:
    import random

    from tomlib.envs._kitchen import DELIVERED
    from tomlib.envs.overcooked import ACTION_NAMES

    g = load_game("overcooked")
    assert g.has_exact_values
    k, index, value = g.exact
    assert len(index) > 100_000 and value[0] == 33  # 33 steps: the fastest soup two cooks can deliver
    steps = delivered = 0
    for ep in range(60):  # mostly optimal play with random detours: every event (onions, cooking, dish, soup, delivery)
        rng = random.Random(ep)
        s = g.reset(0)
        while not g.is_terminal(s):
            best, options = _best_joint(g, k, index, value, g.compact(s), rng)
            _, joint, model_next = best if rng.random() < 0.6 else rng.choice(options)
            s = g.step(s, (ACTION_NAMES[joint[0]], ACTION_NAMES[joint[1]]))
            steps += 1
            if model_next == DELIVERED:
                assert s.delivered
                delivered += 1
            else:
                assert not s.delivered and g.compact(s) == model_next, (joint, g.compact(s), model_next)
    assert steps > 2000 and delivered > 40
    # the model's optimum is the real game's: an optimal pair delivers in V*(start) steps
    s, rng = g.reset(0), random.Random(0)
    while not g.is_terminal(s):
        (_, joint, _), _ = _best_joint(g, k, index, value, g.compact(s), rng)
        s = g.step(s, (ACTION_NAMES[joint[0]], ACTION_NAMES[joint[1]]))
    assert s.delivered and s.t == 33


def test_a_pot_with_fewer_than_three_onions_does_not_start() -> None:
    g = load_game("overcooked")
    s = g.reset(0)
    for a in ["left", "interact", "right", "up", "interact", "interact", "interact"]:  # one onion, then tap the pot
        s = g.step(s, (a, "stay"))
    assert "holds 1 of 3 onions" in g.describe(s, 0)  # overcooked-ai alone would be cooking a one-onion soup


def test_formal_values_never_set_an_item_on_a_counter() -> None:
    g = load_game("overcooked")
    s = g.reset(0)
    s = g.step(s, ("left", "stay"))
    s = g.step(s, ("interact", "stay"))  # cook 1 holds an onion, at (1, 1)
    s = g.step(s, ("up", "stay"))  # facing the counter above
    assert g.joint_value(s, ("interact", "stay")) == float("-inf")
    assert g.joint_value(s, ("right", "stay")) > float("-inf")
