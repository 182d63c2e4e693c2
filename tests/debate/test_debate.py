"""The debate against the fake server: settings, the matched pair, re-asks, verdicts, win rates, cooperation."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from tomlib.debate import DebateConfig, cooperation_rate, debater_names, run_debate, win_rates
from tomlib.trace import RunLog, load_runs, logging_to, payload_frame

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def responder(request: dict) -> str:  # type: ignore[type-arg]
    system, user = request["messages"][0]["content"], request["messages"][-1]["content"]
    if "impartial debate judge" in system:
        r = int(re.search(r"Judge round (\d+)", user).group(1))  # type: ignore[union-attr]
        return json.dumps({"winner": "affirmative" if r % 2 else "draw", "reason": "clearer"})
    if "evaluating your own beliefs" in system:
        me = re.search(r"You are (\w+),", system).group(1)  # type: ignore[union-attr]
        names = re.findall(r'"(\w+)": "', user)
        # the ToM-1 and ToM-2 debaters expect each other and not the ToM-0 one
        return json.dumps(
            {n: {"score": -0.5 if n.endswith("1") else 0.9, "explanation": me, "justification": "j"} for n in names}
        )
    name = re.search(r"You are (\w+),", system).group(1)  # type: ignore[union-attr]
    keys = re.search(r"with the key\(s\) ([\w, ]+)\.", user).group(1).split(", ")  # type: ignore[union-attr]
    block = {"belief": "they argue cost", "explanation": "e", "action": f"argument of {name}"}
    return json.dumps(
        {k: block if k != "ToM_level0" else {"belief": "no belief", "action": f"argument of {name}"} for k in keys}
    )


def play(make_model, server, cfg: DebateConfig, seed: int = 0, log: RunLog | None = None):  # type: ignore[no-untyped-def]
    server.responder = responder
    chat = make_model(json_mode="json_object")
    with logging_to(log):
        return asyncio.run(run_debate(chat, chat, cfg, seed=seed))


def test_no_tom_draws_two_speakers_per_side_and_judges_every_round(make_model, server) -> None:  # type: ignore[no-untyped-def]
    d = play(make_model, server, DebateConfig(setting="no_tom"))
    assert len(d.rounds) == 5 and all(len(r.speakers[s]) == 2 for r in d.rounds for s in r.speakers)
    assert len(server.requests) == 5 * (2 + 2 + 1)  # two speakers a side prepare, one verdict
    w = win_rates([d])
    assert (w.affirmative, w.draw, w.negative, w.verdicts) == (0.6, 0.4, 0.0, 5)
    again = play(make_model, server, DebateConfig(setting="no_tom"))
    assert [r.speakers for r in again.rounds] == [r.speakers for r in d.rounds]  # seeded draws


def test_matching_picks_the_pair_that_trusts_each_other(make_model, server, isolated) -> None:  # type: ignore[no-untyped-def]
    log = RunLog("coalition.debate_test")
    d = play(make_model, server, DebateConfig(setting="tom_matching", tested_side="affirmative"), log=log)
    log.close()
    aff = debater_names("affirmative")
    assert all(r.speakers["affirmative"] == [aff[1], aff[2]] for r in d.rounds)
    assert d.rounds[0].picked_by["affirmative"].endswith("(re-formed)")
    assert all(r.picked_by["affirmative"].endswith("(kept)") for r in d.rounds[1:])
    assert cooperation_rate([d], 1) == cooperation_rate([d], 5) == 1.0
    assert d.rounds[0].scores[aff[1]] == {aff[0]: -0.5, aff[2]: 0.9}
    # per round: three tested debaters prepare, ToM-1 and ToM-2 evaluate, two others speak, one verdict
    assert len(server.requests) == 5 * (3 + 2 + 2 + 1)
    ev = load_runs(run_ids=[log.run_id])
    assert set(payload_frame(ev, "coalition")["structure"]) == {"{Aff2, Aff3}"}
    assert payload_frame(ev, "score")["winner"].tolist() == ["affirmative", "draw"] * 2 + ["affirmative"]


def test_the_other_side_is_tested_too(make_model, server) -> None:  # type: ignore[no-untyped-def]
    d = play(make_model, server, DebateConfig(setting="tom_matching", tested_side="negative"))
    neg = debater_names("negative")
    assert all(r.speakers["negative"] == [neg[1], neg[2]] for r in d.rounds)
    assert DebateConfig(setting="tom", tested_side="negative").orders("affirmative") == (0, 0, 0)


def test_the_iclr_columns_use_the_iclr_coalitions_and_let_their_best_pair_speak(make_model, server) -> None:  # type: ignore[no-untyped-def]
    aff = debater_names("affirmative")
    cfg = DebateConfig(setting="tom_matching", mechanism="iclr")
    assert cfg.label == "tom_matching:affirmative:iclr"
    d = play(make_model, server, cfg)
    assert all(r.speakers["affirmative"] == [aff[1], aff[2]] for r in d.rounds)
    assert "matched coalition" in d.rounds[0].picked_by["affirmative"]

    # everyone trusts everyone alike, and a rule that then keeps all three in the team: only two speak, a pair of
    # the team drawn among the equally aligned ones (seeded)
    def alike(request: dict) -> str:  # type: ignore[type-arg]
        reply = responder(request)
        evaluating = "evaluating your own beliefs" in request["messages"][0]["content"]
        return reply.replace("-0.5", "0.9") if evaluating else reply

    chat = make_model(json_mode="json_object")
    server.responder = alike
    cfg3 = DebateConfig(setting="tom_matching", mechanism="iclr", selection="fewest-outside")
    three = asyncio.run(run_debate(chat, chat, cfg3, seed=0))
    first = three.rounds[0].picked_by["affirmative"]
    assert "{Aff1, Aff2, Aff3}" in first and "best-aligned pair speaks" in first
    assert len(three.rounds[0].speakers["affirmative"]) == 2
    with pytest.raises(ValueError, match="mechanism"):
        DebateConfig(setting="tom_matching", mechanism="both")  # type: ignore[arg-type]


def test_bad_settings_are_named() -> None:
    with pytest.raises(ValueError, match="setting"):
        DebateConfig(setting="tom-matching")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tested_side"):
        DebateConfig(tested_side="aff")


def test_table4_rows_follow_the_contract_with_the_iclr_values(make_model, server, isolated) -> None:  # type: ignore[no-untyped-def]
    from tomlib.experiments import coalition_debate as cd
    from tomlib.report import validate_results

    server.responder = responder
    chat = make_model(json_mode="json_object")
    runs = asyncio.run(cd.run_debates(model="fake", chat=chat, debates=1))
    t = cd.table4(runs)
    validate_results(t)
    win = t[t["metric"] == "win_rate_pct"].set_index(["draft", "setting", "side"])
    assert win.loc[("iclr", "no_tom", "affirmative"), "value"] == 60.0
    assert win.loc[("iclr", "no_tom", "negative"), "value"] == 0.0
    # ToM with matching: one row per draft, each from debates under that draft's own mechanism
    assert win.loc[("iclr", "tom_w_matching", "affirmative"), "paper_value"] == 67.27
    assert win.loc[("neurips", "tom_w_matching", "affirmative"), "paper_value"] == 68.89
    assert "ICLR mechanism" in win.loc[("iclr", "tom_w_matching", "negative"), "note"]
    assert set(t["judge"]) == {"fake"}  # the judge is part of every row
    coop = t[t["metric"] == "cooperation_rate_round1_pct"]
    assert set(coop["value"]) == {100.0} and len(coop) == 4
    grid = cd.compare_drafts(t)
    assert ("tom_w_matching", "ICLR mechanism") in grid.index and ("tom_w_matching", "NeurIPS mechanism") in grid.index
    assert cd.plot_table4(t) is not None


def test_the_pairs_by_rule_are_read_from_the_folder_the_debates_were_logged_in(  # type: ignore[no-untyped-def]
    make_model, server, isolated
) -> None:
    from tomlib.experiments import coalition_debate as cd

    server.responder = responder
    side = str(isolated / "side")  # a side run's folder, not results/
    runs = asyncio.run(cd.run_debates(model="fake", chat=make_model(json_mode="json_object"), debates=1, results=side))
    shares = cd.pair_by_rule(runs, draws=10)
    recorded = {str(col[0]) for col in shares.columns if "recorded round 1" in str(col[0])}
    assert recorded, "the recorded round-1 scores were not found in the run's own folder"


def test_notebook_parameters_and_the_estimate(make_model, server, isolated) -> None:  # type: ignore[no-untyped-def]
    from tomlib.experiments import coalition_debate as cd

    assert cd.check_debate_parameters("local", judge="", llm_mode="replay", debates=1) == ("local", "local")
    for bad in (0, -1):  # -1 used to be told "0 = all", which 0 then refused
        with pytest.raises(ValueError, match=f"debates must be at least 1 \\(the paper: 11\\); got {bad}"):
            cd.check_debate_parameters("local", judge="", llm_mode="replay", debates=bad)
    with pytest.raises(TypeError, match="debates must be a whole number"):
        cd.check_debate_parameters("local", judge="", llm_mode="replay", debates="11")
    with pytest.raises(ValueError, match="one debater model"):
        cd.check_debate_parameters("local,gpt-4o-mini", judge="", llm_mode="replay", debates=1)
    with pytest.raises(Exception, match="gpt-9"):
        cd.check_debate_parameters("local", judge="gpt-9", llm_mode="replay", debates=1)
    with pytest.raises(ValueError, match=r'parameter model names no model; give e.g. model = "local"'):
        cd.check_debate_parameters(" ", judge="", llm_mode="replay", debates=1)  # its own parameter's name
    # the estimate counts what a run makes: replay the fake server's debate and count the requests
    server.responder = responder
    asyncio.run(cd.run_debates(model="fake", chat=make_model(json_mode="json_object"), debates=1))
    assert cd.estimate("local", "local", 1)["local"].calls == len(server.requests)
    both = cd.estimate("gpt-4o-mini", "gpt-4-0613", 11)
    # seven settings: no ToM, ToM for each side, ToM with matching for each side under each draft's mechanism
    assert both["gpt-4-0613"].calls == 11 * 5 * 7 and both["gpt-4o-mini"].usd is not None
