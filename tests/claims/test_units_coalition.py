"""The coalition experiments write their per-unit outcomes beside their tables (``results/units/coalition.*.csv``),
in the columns the registry's queries name, and every coalition claim whose units a run produced gets a verdict.

Small real runs on the simulated model (``tomlib.sim``) and the formal Appendix G check, into the test's own results
folder (the autouse ``isolated`` fixture)."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from tomlib.claims import judge, load_claims, read_units
from tomlib.experiments import coalition_debate as cd
from tomlib.experiments import coalition_mechanism as cm
from tomlib.experiments import coalition_programming as cp
from tomlib.experiments import coalition_reasoning as cr
from tomlib.programming import TeamConfig
from tomlib.sim import SimServer, SimSpec

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

ROOT = Path(__file__).resolve().parents[2]
HEAD = ["paper_id", "table_id"]
TAIL = ["metric", "value", "source"]


@pytest.fixture
def sim_model(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SimServer]:
    """The simulated model registered as ``sim`` in a copy of the configs (as tests/sim/conftest.py's ``sim``)."""
    configs = isolated / "configs"
    shutil.copytree(ROOT / "configs", configs)
    monkeypatch.setenv("TOMLIB_CONFIGS", str(configs))
    with SimServer(SimSpec(name="sim")) as srv:
        with open(configs / "models.yaml", "a") as fh:
            fh.write(srv.model_entry("sim"))
        yield srv


def units(isolated: Path, table_id: str) -> pd.DataFrame:
    path = isolated / "results" / "units" / f"coalition.{table_id}.csv"
    assert path.exists(), f"{path.name} was not written"
    return read_units(isolated / "results")[f"coalition.{table_id}"]


def check_columns(frame: pd.DataFrame, *columns: str) -> None:
    cols = [c for c in frame.columns if c != "expected"]  # a simulated model's declared value comes last
    assert list(cols[:2]) == HEAD and list(cols[-3:]) == TAIL, list(frame.columns)
    assert "expected" not in frame.columns or frame.columns[-1] == "expected", list(frame.columns)
    missing = [c for c in columns if c not in frame.columns]
    assert not missing, f"missing columns {missing}"
    assert frame["value"].notna().all()


def binary(frame: pd.DataFrame, *metrics: str) -> None:
    for m in metrics:
        values = set(frame.loc[frame["metric"] == m, "value"])
        assert values and values <= {0, 1}, (m, values)


def assert_every_claim_judged(source: str) -> pd.DataFrame:
    """Every coalition claim whose units table holds rows of ``source`` has a verdict other than "not reproduced" for
    it (a query that does not fit its units raises ClaimDataError here); returns the verdicts."""
    produced = {k for k, f in read_units().items() if (f["source"] == source).any()}
    mine = [c for c in load_claims("coalition") if c.units in produced]
    assert mine, f"no coalition claim reads {sorted(produced)}"
    verdicts = judge(papers=["coalition"])
    rows = verdicts[verdicts["source"] == source].set_index("claim_id")
    for c in mine:
        assert c.claim_id in rows.index, c.claim_id
        assert rows.loc[c.claim_id, "verdict"] != "not reproduced", (c.claim_id, rows.loc[c.claim_id, "method"])
        assert rows.loc[c.claim_id, "n_units"] > 0, c.claim_id
    return rows


@pytest.mark.sim
def test_the_programming_tables_write_their_units(sim_model: SimServer, isolated: Path) -> None:
    configs = [*cp.tables10_12_configs(), TeamConfig(pm_tom=0)]  # every condition of Tables 1-3, 6, 10-12
    runs = asyncio.run(
        cp.run_programming(
            configs, model="sim", llm_mode="auto", humaneval_tasks=2, mbpp_tasks=2, progress=False, on_sandbox=None
        )
    )
    assert not sim_model.refused
    t1, t2, t3, t10 = cp.table1(runs), cp.table2(runs), cp.table3(runs), cp.tables10_12(runs)
    readings = ("epsilon", "pm_history", "alignment", "selection")

    u1 = units(isolated, "table1")
    check_columns(u1, "model", "benchmark", "tom_order", "round", "task_id", "seed", *readings)
    assert set(u1["metric"]) == {"ftm", "ftm_team"} and set(u1["round"]) == {1, 5}
    assert set(u1["pm_history"]) == {"full"} and set(u1["epsilon"]) == {0.25}
    # the table's cells are the means of its units (one seed)
    ftm = u1[u1["metric"] == "ftm"].groupby(["benchmark", "tom_order", "round"])["value"].mean()
    cells = t1[t1["metric"] == "ftm"].astype({"tom_order": int, "round": int})
    assert cells.set_index(["benchmark", "tom_order", "round"])["value"].sort_index().to_dict() == pytest.approx(
        ftm.round(4).to_dict()
    )

    for table_id, bench in (("table2", "humaneval"), ("table6", "mbpp")):
        u = units(isolated, table_id)
        check_columns(u, "model", "matching", "tom_order", "round", "task_id", "seed", *readings)
        assert set(u["benchmark"]) == {bench} and set(u["metric"]) == {"ftm", "ftm_team", "ftm_next"}
        assert 5 not in set(u.loc[u["metric"] == "ftm_next", "round"])  # no round after the last
        assert set(u.loc[u["matching"] == "matching", "selection"]) == {"best-aligned"}
        assert set(u.loc[u["matching"] == "no_matching", "selection"]) == {""}
    assert set(t2["table_id"]) == {"table2", "table6"}

    u3 = units(isolated, "table3")
    check_columns(u3, "benchmark", "method", "tom_order", "task_id", "seed")
    binary(u3, "pass")
    per_episode = u3[u3["metric"] == "coalition_stability"]
    assert set(per_episode["method"]) == {"ours"} and not per_episode.duplicated(["tom_order", "task_id"]).any()
    assert len(per_episode) == 2 * 4  # ToM 1 and 2, four tasks, one seed: once per episode
    assert set(u3.loc[u3["method"] == "metagpt", "tom_order"]) == {""}
    stab = t3[t3["metric"] == "coalition_stability"].set_index(["benchmark", "tom_order"])["value"]
    mean = per_episode.assign(tom_order=per_episode["tom_order"].astype(str))
    assert stab.to_dict() == pytest.approx(mean.groupby(["benchmark", "tom_order"])["value"].mean().round(3).to_dict())

    for table_id, rounds, settings in (
        ("table10", {1}, {"no_matching"}),
        ("table11", {1, 5}, {"no_matching"}),
        ("table12", {5}, {"matching", "no_matching"}),  # Table 12 compares with Table 11's round 5
    ):
        u = units(isolated, table_id)
        check_columns(u, "benchmark", "pm_tom", "eng_tom", "matching", "round", "task_id", "seed", *readings)
        binary(u, "pass")
        assert set(u["round"]) == rounds and set(u["matching"]) == settings, table_id
        cells = u.groupby(["pm_tom", "eng_tom", "matching", "round"]).size()
        assert cells.eq(4).all(), cells  # four tasks a cell, one seed
        assert set(cp.TOM_CONFIGS) <= set(zip(u["pm_tom"], u["eng_tom"], strict=True))
    assert {"table10", "table11", "table12"} <= set(t10["table_id"])

    rows = assert_every_claim_judged("sim:sim")
    # each of the 4 tasks (2 HumanEval, 2 MBPP) is paired under every ToM configuration: 24 pairs, 4 tasks sampled
    assert rows.loc["coalition.matching_recovers_pass", "n_units"] == 4
    assert f"{len(cp.TOM_CONFIGS) * 4} pairs in 4 clusters" in rows.loc["coalition.matching_recovers_pass", "method"]


def test_the_debate_table_writes_its_units(sim_model: SimServer, isolated: Path) -> None:
    runs = asyncio.run(cd.run_debates(model="sim", llm_mode="auto", debates=2))
    assert not sim_model.refused
    table = cd.table4(runs)
    u = units(isolated, "table4")
    check_columns(u, "draft", "setting", "side", "judge", "debate", "round", "selection")
    binary(u, "win", "draw", "tom_pair_speaks")
    assert set(u["setting"]) == {"no_tom", "tom_wo_matching", "tom_w_matching"}
    assert set(u.loc[u["setting"] == "tom_w_matching", "draft"]) == {"iclr", "neurips"}
    assert "tom_pair_speaks" not in set(u.loc[u["setting"] == "no_tom", "metric"])
    # one debate is one cluster: the same (draft, setting, seed) run for each tested side is two debates
    assert u.groupby("debate")["side"].nunique().max() == 2  # only No-ToM counts both sides of one debate
    assert u["debate"].nunique() == len(runs.debates)
    # the table's rates are the shares of its units
    wins = u[u["metric"] == "win"].groupby(["draft", "setting", "side"])["value"].mean() * 100
    rates = table[table["metric"] == "win_rate_pct"].set_index(["draft", "setting", "side"])["value"]
    assert rates.sort_index().to_dict() == pytest.approx(wins.round(2).to_dict())
    coop = u[(u["metric"] == "tom_pair_speaks") & (u["setting"] == "tom_w_matching") & u["round"].isin([1, 5])]
    got = coop.groupby(["draft", "side", "round"])["value"].mean() * 100
    want = table[table["metric"].str.startswith("cooperation_rate")].assign(
        round=lambda t: t["metric"].str.extract(r"round(\d)")[0].astype(int)
    )
    assert want.set_index(["draft", "side", "round"])["value"].sort_index().to_dict() == pytest.approx(
        got.round(2).to_dict()
    )
    assert_every_claim_judged("sim:sim")


def test_the_reasoning_tables_write_their_units(sim_model: SimServer, isolated: Path) -> None:
    runs = asyncio.run(
        cr.run_reasoning(
            cr.METHODS + cr.CODE_METHODS,
            model="sim",
            llm_mode="auto",
            aqua_questions=2,
            mmlu_questions=1,
            humaneval_tasks=2,
            progress=False,
            on_sandbox=None,
        )
    )
    assert not sim_model.refused
    t5, t9 = cr.table5(runs), cr.table9(runs)
    t7, t8 = cr.table7(runs, zero_credit="drop"), cr.table8(runs)

    u5, u9 = units(isolated, "table5"), units(isolated, "table9")
    for u in (u5, u9):
        check_columns(u, "model", "task", "method", "qid", "seed")
        binary(u, "correct")
    assert set(u5["method"]) == {"chateval_w_tom", "dylan_w_tom", "ours_matching"}
    assert set(u5.loc[u5["method"] == "ours_matching", "selection"]) == {"best-aligned"}
    assert set(u9["method"]) == {"chateval", "chateval_w_tom"}
    acc = u5.groupby(["task", "method"])["value"].mean() * 100
    cells = t5[t5["metric"] == "accuracy_pct"].set_index(["task", "method"])["value"]
    assert cells.sort_index().to_dict() == pytest.approx(acc.round(2).to_dict())
    assert len(t9)

    u7 = units(isolated, "table7")
    check_columns(u7, "method", "role", "zero_credit", "qid", "seed")
    assert set(u7["method"]) == {"dylan", "dylan_w_2tom"} and set(u7["metric"]) == {"importance", "pass"}
    imp = u7[u7["metric"] == "importance"]
    assert set(imp["role"]) == set(cr.CODE_ROLES) and set(imp["zero_credit"]) <= set(cr.ZERO_CREDIT)
    assert "as-zero" in set(imp["zero_credit"])  # both readings are written, whichever the table was asked for
    binary(u7, "pass")
    # the table under the reading it was asked for is the mean of those units
    assert set(imp["importance_scale"]) == {
        "per-step",
        "per-task",
    }  # both scales too, for the claims to be judged under
    table_rows = (imp["zero_credit"] == "drop") & (imp["importance_scale"] == "per-step")
    drop = imp[table_rows].groupby(["method", "role"])["value"].mean().round(4)
    cells = t7[t7["metric"] == "importance_score"].set_index(["method", "role"])["value"]
    assert cells.sort_index().to_dict() == pytest.approx(drop.to_dict())

    u8 = units(isolated, "table8")
    check_columns(u8, "task", "method", "role", "zero_credit", "qid", "seed")
    assert set(u8["method"]) == {"dylan", "dylan_w_2tom"} and set(u8["metric"]) == {"importance", "correct"}
    assert set(u8["task"]) == set(cr.SUBJECTS)  # the subject, as the aggregated table8 names it
    binary(u8, "correct")
    assert set(u8.loc[u8["metric"] == "correct", "zero_credit"]) == {""}
    assert len(t8)

    assert_every_claim_judged("sim:sim")


def test_appendix_g_writes_one_unit_per_instance(isolated: Path) -> None:
    table, per = cm.appendix_g(trials=3, seed=0)
    assert (per["no_cycle"] == per["cycle_length"].isna()).all()
    u = units(isolated, "appendix_g")
    check_columns(u, "n", "min_size", "trial", "everyone_in", "blocking", "trust", "blocking_at_start", "steps")
    binary(u, "converged", "stable_exists", "no_cycle")
    assert set(u["source"]) == {"formal"} and len(u) == 3 * len(per)
    assert set(u["blocking"]) == {"G.2", "§4.2", "§4.2, |C| ≥ n - 1"}  # every reading, beside each other
    assert set(u["trust"].astype(str)) == {"0.8", "uniform"}
    assert (u["blocking_at_start"] == (u["steps"] > 0)).all()
    keys = ["trust", "blocking", "n", "min_size"]
    wide = u.pivot_table(index=[*keys, "trial"], columns="metric", values="value")
    got = wide.groupby(keys)["converged"].mean()
    rates = table[table["metric"] == "dynamics_converged_rate"].set_index(keys)["value"]
    assert {(str(k[0]), *k[1:]): v for k, v in rates.to_dict().items()} == pytest.approx(
        {(str(k[0]), *k[1:]): v for k, v in got.round(4).to_dict().items()}
    )
    rows = assert_every_claim_judged("formal")
    # the theorems are judged on the default draw's instances where some coalition could block, under G.2
    tested = per[(per["trust"] == "0.8") & (per["blocking"] == "G.2") & per["blocking_at_start"]]
    assert rows.loc["coalition.g1_convergence", "n_units"] == len(tested)
    assert set(
        rows.loc[["coalition.g1_convergence", "coalition.g2_stable_exists", "coalition.g3_no_cycles"], "verdict"]
    ) <= {
        "supported",
        "contradicted",
    }
