"""The adaptive-ToM experiments: contract-shaped tables, honest gaps, reproducible repetitions."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pandas as pd
import pytest

from tomlib.agents import FormalToMAgent
from tomlib.experiments import adaptive_tom as at
from tomlib.report import validate_results

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


def cell(table: pd.DataFrame, **conds: object) -> pd.Series:
    df = table
    for k, v in conds.items():
        df = df[df[k] == v]
    assert len(df) == 1, conds
    return df.iloc[0]


def test_table1_formal_is_contract_shaped_and_plays_overcooked(isolated: Path) -> None:
    r = run(at.table1(tasks=["memory_1", "overcooked"], episodes=3, progress=False))
    validate_results(r.table)
    assert set(r.table["source"]) == {"formal"}
    assert cell(r.table, player1="ToM-1", player2="ToM-2", task="memory_1", metric="point")["value"] == 75
    assert cell(r.table, player1="ToM-1", player2="ToM-2", task="memory_1", metric="point")["paper_value"] == 75
    oc = r.table[(r.table["task"] == "overcooked") & (r.table["metric"] == "time")]
    assert oc["value"].notna().all() and oc["value"].between(33, 100).all()  # 33: the fastest possible soup
    assert cell(r.table, player1="ToM-0", player2="ToM-0", task="overcooked", metric="time")["value"] == 100
    assert len(r.episodes) == 2 * 9 * 3


def test_same_seed_same_table_other_seed_other_episodes(isolated: Path) -> None:
    a = run(at.table1(tasks=["memory_n"], pairs=[("ToM-0", "ToM-0")], episodes=10, progress=False))
    b = run(at.table1(tasks=["memory_n"], pairs=[("ToM-0", "ToM-0")], episodes=10, progress=False))
    c = run(at.table1(tasks=["memory_n"], pairs=[("ToM-0", "ToM-0")], episodes=10, seed=7, progress=False))
    assert list(a.episodes["score"]) == list(b.episodes["score"])
    assert list(a.episodes["score"]) != list(c.episodes["score"])
    assert a.episodes["score"].nunique() > 1  # repetitions are not identical


def test_deterministic_tie_break_removes_memory_n_luck(isolated: Path) -> None:
    r = run(at.table1(tasks=["memory_n"], pairs=[("ToM-0", "ToM-0")], episodes=5, progress=False, tie_break="shared"))
    assert (r.episodes["score"] == 0).all()


def test_the_tie_model_moves_the_tie_decided_cells_between_its_extremes(isolated: Path) -> None:
    from tomlib.tom import SharedTies

    own = random.Random(3)
    assert [SharedTies(own).choice("BA") for _ in range(20)] == ["B"] * 20  # always the shared default
    assert {SharedTies(own, 1.0).choice("AB") for _ in range(40)} == {"A", "B"}  # every tie drawn
    assert SharedTies(random.Random(5), 0.5).choices("AB", k=6) == random.Random(5).choices("AB", k=6)  # Hedge's
    curve = run(at.tie_sensitivity([0.0, 0.1, 1.0], episodes=8))
    memory_n = curve[curve["table"] == "Table 1, Memory-N"].groupby("epsilon")["value"].mean()
    assert memory_n[0.0] == 0 and 0 < memory_n[0.1] < memory_n[1.0]
    gap = curve[curve["table"] == "Table 4, aligned − misaligned"].groupby("epsilon")["value"].mean()
    assert gap[0.0] == 75 and gap[1.0] < gap[0.1] < gap[0.0]  # a shared default never fails an aligned pair
    assert set(curve["paper_value"].round(2)) >= {11.67, 16.0, 22.0, 12.33}
    with pytest.raises(ValueError, match="tie_epsilon"):
        at.check_parameters(model="", llm_mode="replay", episodes=1, llm_episodes=1, seed=1, tie_epsilon=2)
    with pytest.raises(ValueError, match="tie_break must be one of independent, shared"):
        FormalToMAgent(1, tie_break="first")  # type: ignore[arg-type]


def test_table2_ftl_matches_the_paper_in_memory_1(isolated: Path) -> None:
    r = run(at.table2(tasks=["memory_1"], algorithms=["FTL"], episodes=2, progress=False))
    means = r.table[r.table["metric"] == "point"]
    assert (means["value"] == means["paper_value"]).all()  # 75, 75, 70, 70, 75, 75, 0


def test_table3_formal_cross_play_runs_and_explains_pbt(isolated: Path) -> None:
    r = run(at.table3(episodes=2, progress=False))
    validate_results(r.table)
    times = r.table[r.table["metric"] == "time"].set_index("agent_type")
    assert times.drop(index="PBT")["value"].between(33, 100).all()  # every formal agent and Greedy cook together
    assert pd.isna(times.loc["PBT", "value"]) and "pretrained" in times.loc["PBT", "note"]
    w = at.expert_weights([r]).set_index(["algorithm", "partner", "expert"])
    for algo in ("FTL", "Hedge"):
        assert abs(w.loc[(algo, "Greedy"), "value"].sum() - 1) < 1e-6  # formal A-ToM's weights against Greedy


def test_table3_llm_cross_play_with_greedy(make_model, server, isolated: Path) -> None:  # type: ignore[no-untyped-def]
    server.responder = lambda request: json.dumps({"thought": "wait", "action": "stay"})
    chat = make_model(json_mode="json_object_schema")
    r = run(at.table3(model="fake", chat=chat, agents=["ToM-0", "Greedy", "PBT"], episodes=1, progress=False))
    validate_results(r.table)
    assert set(r.table["source"]) == {"llm:fake"}
    assert cell(r.table, agent_type="ToM-0", metric="time")["value"] > 0
    assert pd.isna(cell(r.table, agent_type="PBT", metric="time")["value"])
    assert server.n_requests > 0


def test_fig3_weights_are_probabilities(isolated: Path) -> None:
    r = run(at.fig3(tasks=["memory_1"], episodes=4, progress=False))
    sums = r.table.groupby(["task", "player2", "step"])["value"].sum()
    assert ((sums - 1).abs() < 1e-3).all()
    first = r.table[r.table["step"] == 0]
    assert (abs(first["value"] - 1 / 3) < 1e-3).all()


def test_unknown_agent_and_task_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="unknown agent 'ToM-9x'"):
        at.Setup().agent("ToM-9x")
    with pytest.raises(ValueError, match="unknown task 'chess'"):
        at.load_task("chess")


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"episodes": "five"}, "episodes must be a whole number; got 'five'"),
        ({"episodes": 2.5}, "episodes must be a whole number; got 2.5"),
        ({"llm_episodes": 0}, "llm_episodes must be at least 1"),
        ({"model": "gtp-4o"}, "Unknown model 'gtp-4o'"),
        ({"llm_mode": "replya"}, "llm_mode must be replay, auto or record"),
        ({"tasks": "memory_1,gaem1"}, r"tasks: unknown \['gaem1'\]; choose from memory_1"),
        ({"llm_agents": "ToM-3"}, r"llm_agents: unknown \['ToM-3'\]"),
    ],
)
def test_notebook_parameters_are_checked_before_any_work(change: dict[str, object], error: str) -> None:
    good: dict[str, object] = {
        "model": "local",
        "llm_mode": "replay",
        "episodes": 30,
        "llm_episodes": 1,
        "seed": 42,
        "tasks": "memory_1,game1",
        "llm_tasks": "memory_1",
        "llm_agents": "ToM-0,Greedy",
    }
    at.check_parameters(**good)  # type: ignore[arg-type]
    with pytest.raises(Exception, match=error):
        at.check_parameters(**{**good, **change})  # type: ignore[arg-type]


def test_the_estimate_counts_each_agent_types_calls_per_step_to_the_step_limit() -> None:
    # memory_1 lasts 15 rounds: ToM-1 asks 2 decisions a step, ToM-0 one, A-ToM six, Greedy none
    one = at.estimate("local", [(("ToM-1", "ToM-0"), "memory_1")], 2, at.TASKS)
    assert one.calls == 2 * 15 * (2 + 1) and one.usd == 0.0
    cells = [(("A-ToM (Hedge)", "Greedy"), "memory_1"), (("ToM-2", "ToM-2"), "memory_1")]
    both = at.estimate("local", cells, 1, at.TASKS)
    assert both.calls == 15 * 6 + 15 * 6
    priced = at.estimate("gpt-4o-mini", [(("ToM-0", "ToM-0"), "memory_1")], 1, at.TASKS)
    assert priced.usd is not None and priced.usd > 0 and priced.prompt_tokens == 30 * at.TOKENS_PER_CALL[0]


def test_section_6_1_expert_weights_are_averaged_from_the_run_log(make_model, server, isolated: Path) -> None:  # type: ignore[no-untyped-def]
    server.responder = lambda request: json.dumps({"thought": "wait", "action": "stay"})
    chat = make_model(json_mode="json_object_schema")
    r = run(at.table3(model="fake", chat=chat, agents=["A-ToM (FTL)", "Greedy", "PBT"], episodes=1, progress=False))
    raw = at.expert_weights([r])
    validate_results(raw)
    w = raw.set_index(["algorithm", "partner", "expert"])
    ftl = w.loc[("FTL", "Greedy")]
    # every expert predicts "stay" and Greedy moves: all miss alike, and FTL's leader stays the lowest order
    assert list(ftl["value"]) == [1.0, 0.0, 0.0] and list(ftl["paper_value"]) == [0.93, 0.01, 0.05]
    assert "steps" in ftl["note"].iloc[0]
    assert w.loc[("FTL", "PBT"), "value"].isna().all() and "pretrained" in w.loc[("FTL", "PBT"), "note"].iloc[0]
    assert "did not play" in w.loc[("Hedge", "Greedy"), "note"].iloc[0]


def test_atom_losses_start_afresh_each_episode_unless_carried(isolated: Path) -> None:
    from tomlib.trace import load_runs

    def first_losses(carry: bool) -> list[list[float]]:
        r = run(at.table2(tasks=["memory_1"], algorithms=["FTL"], episodes=3, progress=False, carry_losses=carry))
        ev = load_runs(None, run_ids=[r.run_id], kinds=["expert_weights"])
        ev = ev[(ev["condition"] == "memory_1:A-ToM (FTL) vs ToM-1") & (ev["step"] == 0) & (ev["agent"] == "player1")]
        return [p["losses"] for p in ev.sort_values("episode")["payload"]]

    assert all(losses == [0.0, 0.0, 0.0] for losses in first_losses(False))
    carried = first_losses(True)
    assert carried[0] == [0.0, 0.0, 0.0] and sum(carried[2]) >= sum(carried[1]) > 0  # episode 2 starts where 1 ended


def test_the_weights_kept_in_memory_are_the_logged_ones_and_the_log_keeps_only_detail_episodes(isolated: Path) -> None:
    """Issue 35: §6.1 and Fig. 3 read A-ToM's per-step weights from the run, not its log. With every episode logged
    they are the logged ones, step by step; with fewer, the log drops the steps of the other episodes and the tables
    do not change."""
    from tomlib.trace import load_runs

    agents = ["ToM-1", "Greedy", "A-ToM (Hedge)"]
    full = run(at.table3(agents=agents, episodes=3, progress=False, detail_episodes=3))
    ev = load_runs(None, run_ids=[full.run_id], kinds=["expert_weights"])
    logged = {
        (c, a, e, s): p["probabilities"]
        for c, a, e, s, p in ev[["condition", "agent", "episode", "step", "payload"]].itertuples(index=False)
    }
    kept = {(c, a, e, s): p["probabilities"] for c, a, e, s, p in full.weights.itertuples(index=False)}
    assert len(kept) > 100 and kept == logged
    brief = run(at.table3(agents=agents, episodes=3, progress=False, detail_episodes=1))
    pd.testing.assert_frame_equal(brief.table, full.table)
    pd.testing.assert_frame_equal(brief.weights, full.weights)
    pd.testing.assert_frame_equal(at.expert_weights([brief]), at.expert_weights([full]))
    kinds = load_runs(None, run_ids=[brief.run_id]).groupby("episode")["kind"].agg(set)
    assert {"expert_weights", "alignment", "action"} <= kinds[0] and kinds[2] == {"env_state", "score"}


def test_table3_with_the_ppo_stand_in_fills_pbts_row_and_labels_every_row_it_touched(isolated: Path) -> None:
    agents = ["ToM-0", "Greedy", "PBT", "A-ToM (FTL)"]
    plain = run(at.table3(agents=agents, episodes=2, progress=False))
    stand_in = run(at.table3(agents=agents, episodes=2, progress=False, pbt="ppo-selfplay"))
    validate_results(stand_in.table)
    assert set(plain.table["source"]) == {"formal"} and set(stand_in.table["source"]) == {"formal+ppo:selfplay"}
    pbt = cell(stand_in.table, agent_type="PBT", metric="time")
    assert 0 < pbt["value"] <= 100 and "not the paper's PBT" in pbt["note"] and pbt["paper_value"] > 0
    assert pd.isna(cell(plain.table, agent_type="PBT", metric="time")["value"])
    # the stand-in's episodes go into its partners' cells too: ToM-0 has three partners now, two before
    assert len(stand_in.episodes.query("player1 == 'ToM-0' or player2 == 'ToM-0'")) == 3 * 2 * 2
    w = at.expert_weights([plain, stand_in])
    validate_results(w)
    got = w.set_index(["algorithm", "partner", "source", "expert"])["value"].sort_index()
    assert abs(got[("FTL", "PBT", "formal+ppo:selfplay")].sum() - 1) < 1e-6  # the stand-in run's weights
    assert got[("FTL", "PBT", "formal")].isna().all()  # the plain run says why not
    assert len(got[("FTL", "Greedy")]) == 3 and set(got[("FTL", "Greedy")].index.get_level_values(0)) == {"formal"}
    # a table with no PBT seat does not claim the stand-in
    none = run(at.table3(agents=["ToM-0", "Greedy"], episodes=1, progress=False, pbt="ppo-selfplay"))
    assert set(none.table["source"]) == {"formal"}


def test_a_typo_in_who_plays_pbt_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="parameter pbt must be one of none, ppo-selfplay"):
        at.check_parameters(model="", llm_mode="replay", episodes=1, llm_episodes=1, seed=1, pbt="ppo")
    with pytest.raises(ValueError, match="pbt must be one of"):
        at.Setup(pbt="PPO")


def test_the_stand_ins_playing_rule_is_shown_against_the_pbt_cell_it_moves(isolated: Path) -> None:
    agents = ["ToM-1", "Greedy", "PBT"]
    table = run(at.table3(agents=agents, episodes=3, progress=False, pbt="ppo-selfplay")).table
    variants = {"default": {}, "member 1": {"ppo_member": 1}, "argmax": {"ppo_deterministic": True}}
    got = run(at.stand_in_sensitivity(agents=agents, episodes=3, variants=variants, progress=False))
    got = got.set_index("variant")
    # the default variant replays Table 3's PBT episodes exactly; the others change only the stand-in's rule
    assert got.loc["default", "PBT cell (time)"] == round(cell(table, agent_type="PBT", metric="time")["value"], 2)
    assert (got["episodes"] == 2 * 2 * 3).all() and (got["paper (PBT)"] == 49.09).all()
    assert set(got["source"]) == {"formal+ppo:selfplay"}


def test_a_run_under_another_tie_model_writes_its_units_beside_the_defaults(isolated: Path) -> None:
    """The tie curve once replaced Table 1's default Memory-N units with its last ε; the reading is now a column."""
    from tomlib.claims import read_units

    pair = [("ToM-0", "ToM-0")]
    run(at.table1(tasks=["memory_n"], pairs=pair, episodes=4, progress=False))
    run(at.tie_sensitivity([0.0, 1.0], episodes=4))
    units = read_units()["adaptive_tom.table1"]
    cells = units[(units["player1"] == "ToM-0") & (units["player2"] == "ToM-0")]
    assert cells.groupby("tie_break").size().to_dict() == {
        "independent": 4,
        "shared(ε=0)": 4,
        "shared(ε=1)": 4,
    }
    assert (cells.loc[cells["tie_break"] == "shared(ε=0)", "value"] == 0).all()
    assert set(units["llm_history"].astype(str)) == {""} and set(units["carry_losses"].astype(str)) == {"False"}


def test_the_weights_claims_get_units_per_episode(isolated: Path) -> None:
    """§6.1's and Fig. 3's claims are judged per episode: an episode's mean weight per expert against a non-LLM
    partner, and the weights at an episode's last step (they were 'not reproduced' with no units)."""
    from tomlib.claims import read_units

    fig = run(at.fig3(tasks=["game1"], partners=["ToM-1"], episodes=3, progress=False))
    t3 = run(at.table3(episodes=2, progress=False, agents=["A-ToM (Hedge)", "Greedy"]))
    table = at.expert_weights([t3])
    units = read_units()
    final = units["adaptive_tom.fig3_weights"]
    assert len(final) == 3 * 3 and set(final["expert"]) == {"ToM-0", "ToM-1", "ToM-2"}
    assert (final.groupby("episode")["value"].sum() - 1).abs().max() < 1e-5  # a distribution per episode
    events = fig.table[fig.table["step"] == fig.table["step"].max()]
    assert set(events["expert"]) == set(final["expert"])
    weights = units["adaptive_tom.weights"]
    assert set(weights["partner"]) == {"Greedy"} and weights["episode"].nunique() == 2
    mean = weights.groupby("expert")["value"].mean()  # the episodes' means average to the table's step mean here
    shown = table[(table["algorithm"] == "Hedge") & (table["partner"] == "Greedy")].set_index("expert")["value"]
    assert (mean - shown).abs().max() < 0.02, (mean, shown)


def test_a_run_under_another_preference_writes_its_units_beside_the_defaults_and_the_claims_see_it(
    isolated: Path,
) -> None:
    """``prefer`` (what formal agents prefer among equally good moves) is a units column with each game's own default,
    a run under another preference adds its rows beside the default's, and the claims are judged under each."""
    from tomlib.claims import judge, read_units

    base = run(at.table1(tasks=["game2", "overcooked"], episodes=2, progress=False))
    frame = run(at.prefer_sensitivity("table1", default=base, tasks=["game2", "overcooked"], episodes=2))
    assert set(frame["prefer"]) == {"none", "own", "own-then-stay"} and frame["value"].notna().all()
    assert not frame.duplicated(["table", "task", "cell", "prefer"]).any()  # each cell once under each preference
    default = frame[(frame["task"] == "overcooked") & (frame["prefer"] == "none")].set_index("cell")["value"]
    shown = base.table[(base.table["task"] == "overcooked") & (base.table["metric"] == "time")]
    assert (
        default.sort_index().to_numpy()
        == shown.set_index(shown["player1"] + " vs " + shown["player2"])["value"].sort_index().to_numpy()
    ).all()  # the default column is the table as run, not a rerun
    units = read_units()["adaptive_tom.table1"]
    runs = units.groupby(["task", "prefer"])["episode"].count().to_dict()
    assert runs == {(t, p): 9 * 2 for t in ("game2", "overcooked") for p in ("none", "own", "own-then-stay")}
    got = judge(robustness=True, papers=["adaptive_tom"]).set_index(["claim_id", "source"])
    row = got.loc[("adaptive_tom.alignment_matters_time", "formal")]
    assert "prefer=own-then-stay" in f"{row['flips_under']}; {row['held_under']}"
    with pytest.raises(ValueError, match="parameter prefer must be one of none, own, own-then-stay"):
        at.check_parameters(model="", llm_mode="replay", episodes=1, llm_episodes=1, seed=1, prefer="mine")
