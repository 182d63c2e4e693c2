"""tom_ib.fig5's per-trial units (``results/units/tom_ib.fig5.csv``) and the registry's claims judged on them."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from tomlib.claims import Claim, judge, load_claims, read_units, verdicts
from tomlib.experiments import tom_ib
from tomlib.paths import data_dir
from tomlib.sim._play import city_reply, city_translation, city_view

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

COLUMNS = [
    "paper_id",
    "table_id",
    "model",
    "configuration",
    "tom",
    "ib",
    "dynamics",
    "verification",
    "observation",
    "temperature",
    "trial",
    "metric",
    "value",
    "source",
]
METRICS = {
    "final_health",
    "invalid_actions",
    "invalid_translations",
    "inconsistencies",
    "verifications",
    "revisions",
    "failed_turns",
}
CROSS_MODEL = {
    "tom_ib.gpt35_below_gpt4o",
    "tom_ib.gpt4o_mini_above_gpt35",
    "tom_ib.gpt4o_mini_below_gpt4o",
    "tom_ib.claude_matches_gpt4o",
}


def _units(isolated: Path) -> pd.DataFrame:
    return pd.read_csv(isolated / "results" / "units" / "tom_ib.fig5.csv", keep_default_na=False)


def test_the_notebooks_default_run_leaves_units_that_answer_a_within_model_comparison(isolated: Path) -> None:
    """Notebook 06's defaults (``local``, replayed, one trial a configuration): one row per trial and metric, and
    every claim of the paper judged on ``llm:local`` without an error."""
    shutil.copy(data_dir() / "transcripts" / "tom_ib.fig5.jsonl.gz", isolated / "transcripts")
    got = asyncio.run(tom_ib.fig5(models=["local"], trials=1, progress=False, results=str(isolated / "results")))
    units = _units(isolated)
    assert list(units.columns) == COLUMNS
    assert len(units) == len(got.trials) * len(METRICS) == 4 * 7 and set(units["metric"]) == METRICS
    assert set(units["source"]) == {"llm:local"} and set(units[["paper_id", "table_id"]].agg(".".join, axis=1)) == {
        "tom_ib.fig5"
    }
    assert set(units["configuration"]) == {"Base", "ToM", "IB", "ToM+IB"}
    assert units[["dynamics", "verification", "observation"]].drop_duplicates().values.tolist() == [
        ["authors", "authors", "partial"]
    ]
    mine = units.set_index(["configuration", "trial", "metric"])["value"]
    for row in got.trials.itertuples():
        for metric in METRICS:
            assert mine[(row.configuration, row.trial, metric)] == getattr(row, metric)

    judged = judge(str(isolated / "results"))
    assert set(judged["claim_id"]) == {c.claim_id for c in load_claims("tom_ib")}
    # each model's own source, and the claims that compare models on every llm: source together (llm:*)
    assert set(judged["source"]) == {"llm:local", "llm:*"} and judged["verdict"].notna().all()
    assert set(judged.loc[judged["source"] == "llm:*", "claim_id"]) == CROSS_MODEL
    # the registry's claims name other models, so their groups are empty here; a test-only claim on this run's
    # model compares its configurations with IB against those without (two trials a side)
    claim = Claim(
        claim_id="tom_ib.test_local_ib",
        statement="IB changes local's illegal actions.",
        quote="a test-only claim",
        paper_file="tom-internal-beliefs-asp.txt",
        line=1,
        rests_on="Fig. 5",
        comparison="local: IB and ToM+IB against Base and ToM",
        test="mean_diff",
        direction="less",
        units="tom_ib.fig5",
        metric="invalid_actions",
        select="model == 'local' and dynamics == 'authors' and observation == 'partial'",
        a="configuration in ['IB', 'ToM+IB']",
        b="configuration in ['Base', 'ToM']",
    )
    row = verdicts("tom_ib", [claim], read_units(str(isolated / "results"))).iloc[0]
    trials = got.trials.set_index("configuration")["invalid_actions"]
    assert row["source"] == "llm:local" and row["n_units"] == 4
    assert row["effect"] == (trials["IB"] + trials["ToM+IB"] - trials["Base"] - trials["ToM"]) / 2
    assert row["verdict"] in ("supported", "contradicted", "inconclusive")


def responder(request: dict) -> str:  # type: ignore[type-arg]
    """Agents with internal beliefs play the simulated model's declared city policy; those without keep asking to
    MOVE(2), which is illegal once they stand in d2, and never supply anything."""
    system, user = request["messages"][0]["content"], request["messages"][-1]["content"]
    if system.startswith("Translate"):
        return json.dumps(city_translation(user, grounded=False))
    fields = {"response": "going", "action": "MOVE(2)"}
    if "beliefs_about_others" in system:
        fields["beliefs_about_others"] = "they serve their districts"
    if "internal_beliefs" in system:
        view = city_view(user)
        assert view is not None
        return json.dumps(city_reply(view, {**fields, "internal_beliefs": ""}))
    return json.dumps(fields)


def test_a_models_run_decides_its_own_claims_and_leaves_the_cross_model_ones_open(  # type: ignore[no-untyped-def]
    make_model, server, isolated: Path
) -> None:
    """A fake model under a registry name (``gpt-3.5-turbo``) whose IB agents play well: the registry's claims on
    that model are decided from its units, claims on other models find no units, and claims comparing two models
    cannot be judged within one source."""
    server.responder = responder
    chat = make_model(json_mode="json_object", name="gpt-3.5-turbo")
    results = str(isolated / "results")
    got = asyncio.run(tom_ib.fig5(models=["gpt-3.5-turbo"], chats={"gpt-3.5-turbo": chat}, trials=4, progress=False))
    means = got.trials.groupby("configuration")[["final_health", "invalid_actions"]].mean()
    assert means.loc["ToM+IB", "final_health"] > means.loc["Base", "final_health"]
    assert means.loc[["IB", "ToM+IB"], "invalid_actions"].max() < means.loc[["Base", "ToM"], "invalid_actions"].min()
    units = _units(isolated)
    assert list(units.columns) == COLUMNS and set(units["source"]) == {"llm:gpt-3.5-turbo"}
    assert len(units) == 16 * len(METRICS)

    every = judge(results)
    assert set(every["source"]) == {"llm:gpt-3.5-turbo", "llm:*"}
    across = every[every["source"] == "llm:*"].set_index("claim_id")
    assert set(across.index) == CROSS_MODEL and (across["verdict"] == "not reproduced").all()  # one model only
    judged = every[every["source"] == "llm:gpt-3.5-turbo"].set_index("claim_id")
    assert judged.loc["tom_ib.gpt35_tomib_helps", "verdict"] == "supported"
    assert judged.loc["tom_ib.gpt35_tomib_helps", "n_units"] == 8
    assert judged.loc["tom_ib.ib_fewer_errors", "verdict"] == "supported"
    assert judged.loc["tom_ib.ib_fewer_errors", "method"].startswith("within tom")
    for claim_id in {"tom_ib.gpt4o_no_loss", "tom_ib.llama8b_tom_helps"}:  # other models' claims: no units here
        assert judged.loc[claim_id, "verdict"] == "not reproduced", claim_id

    # a second model's run adds its own rows beside the first's
    other = make_model(json_mode="json_object", name="fake")
    asyncio.run(tom_ib.fig5(models=["fake"], chats={"fake": other}, configs=["Base"], trials=1, progress=False))
    assert _units(isolated).groupby("source").size().to_dict() == {
        "llm:gpt-3.5-turbo": 16 * len(METRICS),
        "llm:fake": len(METRICS),
    }
