"""The coalition paper's debate (§6.4, Table 4 of both drafts) from :mod:`tomlib.debate` — groundwork for its notebook.

Rows: for each setting and side, the win rate of that side (%), over all round verdicts of the debates in which that
side is the tested one (No-ToM: one set of debates gives both sides' rates), the draw rate beside it, and the
cooperation rate of the matched ToM-1/ToM-2 pair at rounds 1 and 5. Our protocol (one verdict per round) is the
ICLR draft's granularity (11 debates × 5 rounds = 55 verdicts), so rows carry ``draft = iclr`` for the paper value;
the NeurIPS draft's values (affirmative only, another model) are shown beside them in the notebook.

:func:`table4` also writes its units (``results/units/coalition.table4.csv``): per debate, round and counted side,
``win`` and ``draw`` (0/1), and for the settings with a tested side ``tom_pair_speaks`` (0/1; ToM without matching
gives its chance level). ``debate`` names one debate (its configuration and seed): its rounds share a cluster.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from tomlib.coalition import DEFAULT_SELECTION, check_selection
from tomlib.debate import Debate, DebateConfig, best_pairs, cooperation_rate, debater_names, run_debate, win_rates
from tomlib.experiments._checks import check_models, check_whole
from tomlib.experiments._cost import Estimate, price
from tomlib.experiments._selection import random_instances, recorded_instances, selection_shares
from tomlib.experiments._units import write_units_with_truth
from tomlib.llm import ChatModel, source_of
from tomlib.report import attach_paper_values
from tomlib.trace import RunLog, logging_to

PAPER_ID = "coalition"
PAPER_SETTING = {"no_tom": "no_tom", "tom": "tom_wo_matching", "tom_matching": "tom_w_matching"}
SIDES = ("affirmative", "negative")
PAPER_COOPERATION = {1: 9.1, 5: 18.2}
"""§6.4's cooperation rate between the ToM-1 and ToM-2 debaters at rounds 1 and 5 (prose only, not in Table 4)."""


def check_debate_parameters(model: str, *, judge: str, llm_mode: str, debates: Any) -> tuple[str, str]:
    """Check notebook 12's parameters before any work; return (debater model, judge model).

    Args:
        model: the one model that plays every debater (a name in ``configs/models.yaml``).
        judge: the judge's model; blank: the debaters' model.
        llm_mode: ``replay``, ``auto`` or ``live``, which decides whether each model must be reachable.
        debates: seeded debates per configuration, at least 1 (the paper: 11, §6.4).
    """
    check_whole("debates", debates, None)
    if debates < 1:  # not a count from the start of a set: no 0 for "all" here
        raise ValueError(f"parameter debates must be at least 1 (the paper: 11); got {debates}")
    names = check_models(model, llm_mode, "model")
    if len(names) != 1:
        raise ValueError(f"parameter model names one debater model; got {names}")
    judge_name = judge.strip() or names[0]
    check_models(judge_name, llm_mode, "judge")
    return names[0], judge_name


TOKENS_PER_CALL = (1200, 300)  # our guess of (prompt, completion) tokens per call; transcripts grow over 5 rounds


def estimate(model: str, judge: str, n_debates: int, rounds: int = 5) -> dict[str, Estimate]:
    """Calls, tokens and USD of the whole table from scratch (before re-asks), for the debaters and the judge: per
    debate and round, the two speakers of each side and one verdict; with matching the tested side prepares all three
    and its ToM-1/ToM-2 debaters score their teammates."""
    per_round = {"no_tom": 4, "tom": 4, "tom_matching": 7}
    debater_calls = n_debates * rounds * sum(per_round[c.setting] for c in configs())
    judge_calls = n_debates * rounds * len(configs())
    if judge == model:
        return {model: price(model, debater_calls + judge_calls, TOKENS_PER_CALL)}
    return {model: price(model, debater_calls, TOKENS_PER_CALL), judge: price(judge, judge_calls, TOKENS_PER_CALL)}


def announce(model: str, judge: str, n_debates: int, llm_mode: str) -> None:
    """Before live debates: each model's estimate, then the two together, which is what the budget must cover
    (refused before any call when it does not: :meth:`Estimate.announce`); replay costs nothing and says nothing.

    Args:
        model: the debaters' model.
        judge: the judge's model (the same name: one estimate).
        n_debates: seeded debates per configuration, as :func:`run_debates` plays them.
        llm_mode: ``replay`` says nothing; any other mode prints the estimate and checks it against the budget.
    """
    if llm_mode == "replay":
        return
    parts = estimate(model, judge, n_debates)
    if len(parts) > 1:
        for name, est in parts.items():
            print(est.line(name))
    total = sum(parts.values(), Estimate(0, 0, 0, 0.0))
    total.announce(" and ".join(parts), "debaters and judge together" if len(parts) > 1 else "")


MECHANISMS = ("iclr", "neurips")
"""ToM with matching runs once per draft's mechanism: ICLR coalitions with adaptation, NeurIPS pairs."""


def configs(sides: tuple[str, ...] = SIDES, selection: str | None = None) -> list[DebateConfig]:
    """No-ToM once, ToM without matching for each tested side (ICLR tests both), and ToM with matching for each side
    under each draft's mechanism; ``selection`` is the rule that picks among stable outcomes (None: each draft's
    default)."""
    return (
        [DebateConfig(setting="no_tom")]
        + [DebateConfig(setting="tom", tested_side=side) for side in sides]
        + [
            DebateConfig(setting="tom_matching", tested_side=side, selection=selection, mechanism=m)  # type: ignore[arg-type]
            for m in MECHANISMS
            for side in sides
        ]
    )


@dataclass
class DebateRuns:
    model: str
    judge: str
    debates: list[Debate]
    run_id: str
    selection: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_SELECTION))
    results: str | None = None  # where the run was logged: table4 writes its units there


async def run_debates(
    *,
    model: str = "local",
    judge: str | None = None,
    llm_mode: str = "replay",
    debates: int = 1,
    results: str | None = None,
    chat: ChatModel | None = None,
    judge_chat: ChatModel | None = None,
    selection: str | None = None,
) -> DebateRuns:
    """Every configuration of Table 4's debate (§6.4 of both drafts), ``debates`` seeded debates each.

    Args:
        model: the debaters' model (a name in ``configs/models.yaml``); ``local`` is the bundled model.
        judge: the judge's model; None: the debaters' model.
        llm_mode: ``replay`` (the committed transcripts, the offline default), ``auto`` or ``live``.
        debates: seeded debates per configuration (the paper: 11).
        results: the results folder the run log goes to; None: the default one.
        chat: a client to use instead of one made from ``model`` and ``llm_mode`` (tests pass a fake endpoint's).
        judge_chat: the judge's client likewise; None: ``chat`` when the judge is the debaters' model.
        selection: the rule that picks among stable pairs (:data:`tomlib.coalition.SELECTIONS`; None: the NeurIPS
            draft's default).
    """
    rules = {m: check_selection(selection, m) for m in MECHANISMS}
    chat = chat or ChatModel.from_name(model, mode=llm_mode)  # type: ignore[arg-type]
    judge_chat = judge_chat or (chat if not judge or judge == model else ChatModel.from_name(judge, mode=llm_mode))  # type: ignore[arg-type]
    log = RunLog(
        "coalition.table4",
        results=results,
        meta={
            "model": model,
            "judge": judge or model,
            "source": source_of(model),
            "debates": debates,
            "selection": rules,
        },
    )
    log.observe(chat)
    if judge_chat is not chat:
        log.observe(judge_chat)
    try:
        with logging_to(log):
            got = await asyncio.gather(
                *(run_debate(chat, judge_chat, c, seed=s) for c in configs(selection=selection) for s in range(debates))
            )
    finally:
        log.close()
    return DebateRuns(model, judge or model, list(got), log.run_id, rules, results)


def table4(runs: DebateRuns) -> pd.DataFrame:
    """Win and draw rates per setting and side, and the ToM-1/ToM-2 cooperation rate (rounds 1 and 5). ToM with
    matching has a row per draft, each from debates under that draft's mechanism; the other settings are the same in
    both drafts and carry ``draft = iclr`` (whose protocol, both sides tested, ours follows).

    Args:
        runs: the debates :func:`run_debates` played; their units are written beside the results they name.
    """
    rows = []
    groups = [("no_tom", "iclr"), ("tom", "iclr"), *(("tom_matching", m) for m in MECHANISMS)]
    for setting, draft in groups:
        for side in SIDES:
            group = [
                d
                for d in runs.debates
                if d.config.setting == setting
                and (setting == "no_tom" or d.config.tested_side == side)
                and (setting != "tom_matching" or d.config.mechanism == draft)
            ]
            if not group:
                continue
            w = win_rates(group)
            note = f"{len(group)} debate(s), {w.verdicts} round verdicts; judge {runs.judge}"
            if setting == "tom_matching":
                rule = runs.selection.get(draft, "")
                note += f"; {draft.upper()} mechanism, stable outcome chosen by rule {rule}"
            # the judge decides every verdict, so it is part of the row (the paper's: gpt-4-0613)
            base = {"draft": draft, "setting": PAPER_SETTING[setting], "side": side, "judge": runs.judge}
            rows.append({**base, "metric": "win_rate_pct", "value": round(100 * getattr(w, side), 2), "note": note})
            rows.append({**base, "metric": "draw_rate_pct", "value": round(100 * w.draw, 2), "note": note})
            if setting == "tom_matching":
                for r in (1, 5):
                    rows.append(
                        {
                            **base,
                            "metric": f"cooperation_rate_round{r}_pct",
                            "value": round(100 * cooperation_rate(group, r), 2),
                            "note": f"{len(group)} debate(s): share whose round-{r} speakers are the ToM-1 and "
                            f"ToM-2 debaters ({draft.upper()} mechanism, rule {runs.selection.get(draft, '')}); the "
                            f"paper's text (§6.4, both drafts): {PAPER_COOPERATION[r]}%",
                        }
                    )
    df = pd.DataFrame(rows)
    df.insert(0, "table_id", "table4")
    df.insert(0, "paper_id", PAPER_ID)
    df["source"] = source_of(runs.model)
    units = debate_units(runs)
    if len(units):
        write_units_with_truth(units, runs.results)
    return attach_paper_values(df.assign(paper_value=np.nan))


def debate_units(runs: DebateRuns) -> pd.DataFrame:
    """Table 4's units, long-form: one row per debate, round, counted side and metric. ``win`` is 1 when the round's
    verdict goes to that side (a missing verdict counts as no win, as in :func:`win_rates`), ``draw`` when it is a
    draw; No-ToM debates count both sides, the others their tested side. ``tom_pair_speaks`` is 1 when the tested
    side's speakers are its ToM-1 and ToM-2 debaters. Conditions as in :func:`table4`, plus the readings: the
    matching's selection rule and ε."""
    rows = []
    for d in runs.debates:
        cfg = d.config
        draft = cfg.mechanism if cfg.setting == "tom_matching" else "iclr"
        sides = SIDES if cfg.setting == "no_tom" else (cfg.tested_side,)
        base = {
            "draft": draft,
            "setting": PAPER_SETTING[cfg.setting],
            "judge": runs.judge,
            "selection": runs.selection.get(draft, "") if cfg.setting == "tom_matching" else "",
            "epsilon": cfg.epsilon if cfg.setting == "tom_matching" else "",
            "debate": f"{cfg.label}#{d.seed}",
            "seed": d.seed,
        }
        for rnd in d.rounds:
            for side in sides:
                unit = {**base, "side": side, "round": rnd.round}
                rows.append({**unit, "metric": "win", "value": int(rnd.verdict == side)})
                rows.append({**unit, "metric": "draw", "value": int(rnd.verdict == "draw")})
                if cfg.setting != "no_tom":
                    rows.append({**unit, "metric": "tom_pair_speaks", "value": int(d.tom_pair_speaks(rnd.round))})
    cols = ["draft", "setting", "side", "judge", "selection", "epsilon", "debate", "seed", "round", "metric", "value"]
    f = pd.DataFrame(rows, columns=cols)
    f.insert(0, "table_id", "table4")
    f.insert(0, "paper_id", PAPER_ID)
    f["source"] = source_of(runs.model)
    return f


def compare_drafts(table: pd.DataFrame) -> pd.DataFrame:
    """Win rates (%) by setting: ours per side with draws (ToM with matching once per draft's mechanism), the ICLR
    draft's per side and the NeurIPS draft's (affirmative only; another model and judge) on the rows they apply to.

    Args:
        table: Table 4 as :func:`table4` returns it.
    """
    from tomlib.report import paper_table

    judges = ", ".join(sorted(set(table["judge"]))) if "judge" in table.columns else "?"
    drafts = {"iclr": "ICLR", "neurips": "NeurIPS"}
    index = []
    for s in PAPER_SETTING.values():
        part = table[table["setting"] == s]
        if part.empty:
            continue
        if s == PAPER_SETTING["tom_matching"]:
            index += [(s, f"{drafts[d]} mechanism") for d in MECHANISMS if (part["draft"] == d).any()]
        else:
            index.append((s, "both drafts"))
    grid = pd.DataFrame(index=pd.MultiIndex.from_tuples(index, names=["setting", "matching"]))
    paper = paper_table(PAPER_ID, "table4")
    paper = paper[paper["metric"] == "win_rate_pct"]
    for metric, word in (("win_rate_pct", "win"), ("draw_rate_pct", "draw")):
        for side in SIDES:
            t = table[(table["metric"] == metric) & (table["side"] == side)]
            col = {}
            for setting, how in index:
                d = next((k for k, v in drafts.items() if how.startswith(v)), "iclr")
                v = t[(t["setting"] == setting) & (t["draft"] == d)]["value"]
                if len(v):
                    col[(setting, how)] = float(v.iloc[0])
            if col:
                grid[f"ours {word} {side[:3]}. (judge {judges})"] = pd.Series(col)
    for draft, label in (("iclr", "ICLR, judge gpt-4-0613"), ("neurips", "NeurIPS, judge ChatGPT 4")):
        for side in SIDES:
            part = paper[(paper["draft"] == draft) & (paper["side"] == side)].set_index("setting")["value"]
            if len(part):
                grid[f"{label} {side[:3]}."] = [
                    part.get(setting) if how in ("both drafts", f"{drafts[draft]} mechanism") else None
                    for setting, how in grid.index
                ]
    return grid


def plot_table4(table: pd.DataFrame) -> Any:
    """Win rates per setting: ours (with draws stacked on top) beside the ICLR and NeurIPS drafts' values.

    Args:
        table: Table 4 as :func:`table4` returns it.
    """
    import matplotlib.pyplot as plt

    grid = compare_drafts(table)
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharey=True)
    for ax, side in zip(axes, SIDES, strict=True):
        x = np.arange(len(grid))
        short = side[:3]

        def column(prefix: str, empty: float) -> pd.Series:
            hit = [c for c in grid.columns if c.startswith(prefix)]
            return grid[hit[0]].astype(float) if hit else pd.Series(empty, index=grid.index)

        ours = column(f"ours win {short}.", np.nan)
        draws = column(f"ours draw {short}.", 0.0).fillna(0)
        ax.bar(x - 0.25, ours, 0.25, color="#4c72b0", label="ours: win")
        ax.bar(x - 0.25, draws, 0.25, bottom=ours, color="#4c72b0", alpha=0.35, label="ours: draw")
        for dx, label, color in ((0.0, "ICLR", "#dd8452"), (0.25, "NeurIPS", "#55a868")):
            paper = column(f"{label},", np.nan)
            if paper.notna().any():
                ax.bar(x + dx, paper, 0.25, color=color, label=f"{label} (paper)")
        ax.set_xticks(x, [f"{s}\n{how}" for s, how in grid.index], fontsize=7)
        ax.set_title(f"tested side: {side}", fontsize=9)
    axes[0].set_ylabel("share of round verdicts (%)")
    handles = {lab: h for ax in axes for h, lab in zip(*ax.get_legend_handles_labels(), strict=True)}
    axes[1].legend(list(handles.values()), list(handles), fontsize=7)
    fig.tight_layout()
    return fig


def pair_by_rule(runs: DebateRuns, *, results: str | None = None, draws: int = 1000) -> pd.DataFrame:
    """Round 1 with matching: the share (%) of debates in which each rule lets each pair speak, under each draft's
    mechanism (NeurIPS pairs; ICLR coalitions of at least two, whose best-aligned pair speaks) and, for the pairs,
    each reading of how a debater ranks its partners (``pair_order``: eq. 3's aligned-or-not, or strictly by φ). On
    the scores this run recorded (no new calls, per tested side) and on uniform random scores. The ToM-1/ToM-2 row is
    the paper's round-1 cooperation rate (9.1%): how much of it the rules and readings alone decide.

    Args:
        runs: the debates :func:`run_debates` played (their recorded round-1 scores).
        results: the results folder whose run log holds those scores (default: the one ``runs`` was logged in).
        draws: how many uniform random score draws the "random scores" rows average over.
    """
    results = results if results is not None else runs.results
    frames = {}
    orders = {"NeurIPS pairs, eq. 3 order": "eq3", "NeurIPS pairs, strict φ order": "phi"}
    for side in SIDES:
        names = debater_names(side)
        kw = {"no_beliefs": [names[0]], "min_size": 2}

        def drafted(c: str, side: str = side, draft: str = "neurips") -> bool:
            return c.startswith(f"tom_matching:{side}") and (":iclr" in c) == (draft == "iclr")

        for label, order in orders.items():
            got = recorded_instances([runs.run_id], names, results=results, condition=drafted, pair_order=order, **kw)
            if got:
                frames[f"{side}, recorded round 1: {label}"] = selection_shares(got, "neurips")
        iclr = recorded_instances(
            [runs.run_id], names, results=results, condition=lambda c, s=side: drafted(c, s, "iclr"), **kw
        )
        if iclr:
            frames[f"{side}, recorded round 1: ICLR coalitions"] = selection_shares(iclr, "iclr", within=best_pairs)
    names = debater_names("affirmative")
    for label, order in orders.items():
        random = random_instances(names, no_beliefs=[names[0]], draws=draws, min_size=2, pair_order=order)
        frames[f"uniform random scores ({draws} draws): {label}"] = selection_shares(random, "neurips")
    random = random_instances(names, no_beliefs=[names[0]], draws=draws, min_size=2)
    frames[f"uniform random scores ({draws} draws): ICLR coalitions"] = selection_shares(
        random, "iclr", within=best_pairs
    )
    return pd.concat(frames, axis=1)
