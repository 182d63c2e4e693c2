"""The coalition paper's debate (§6.4, Table 4 of both drafts) from :mod:`tomlib.debate` — groundwork for its notebook.

Rows: for each setting and side, the win rate of that side (%), over all round verdicts of the debates in which that
side is the tested one (No-ToM: one set of debates gives both sides' rates), the draw rate beside it, and the
cooperation rate of the matched ToM-1/ToM-2 pair at rounds 1 and 5. Our protocol (one verdict per round) is the
ICLR draft's granularity (11 debates × 5 rounds = 55 verdicts), so rows carry ``draft = iclr`` for the paper value;
the NeurIPS draft's values (affirmative only, another model) are shown beside them in the notebook.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tomlib.debate import Debate, DebateConfig, cooperation_rate, run_debate, win_rates
from tomlib.llm import ChatModel
from tomlib.report import attach_paper_values
from tomlib.trace import RunLog

PAPER_ID = "coalition"
PAPER_SETTING = {"no_tom": "no_tom", "tom": "tom_wo_matching", "tom_matching": "tom_w_matching"}
SIDES = ("affirmative", "negative")


def configs(sides: tuple[str, ...] = SIDES) -> list[DebateConfig]:
    """No-ToM once, and ToM with and without matching for each tested side (ICLR tests both)."""
    return [DebateConfig(setting="no_tom")] + [
        DebateConfig(setting=s, tested_side=side) for s in ("tom", "tom_matching") for side in sides
    ]


@dataclass
class DebateRuns:
    model: str
    judge: str
    debates: list[Debate]
    run_id: str


async def run_debates(
    *,
    model: str = "local",
    judge: str | None = None,
    llm_mode: str = "replay",
    debates: int = 1,
    results: str | None = None,
    chat: ChatModel | None = None,
    judge_chat: ChatModel | None = None,
) -> DebateRuns:
    """``debates`` seeded debates per configuration (the paper: 11)."""
    chat = chat or ChatModel.from_name(model, mode=llm_mode)  # type: ignore[arg-type]
    judge_chat = judge_chat or (chat if not judge or judge == model else ChatModel.from_name(judge, mode=llm_mode))  # type: ignore[arg-type]
    log = RunLog(
        "coalition.table4",
        results=results,
        meta={"model": model, "judge": judge or model, "source": f"llm:{model}", "debates": debates},
    )
    log.observe(chat)
    if judge_chat is not chat:
        log.observe(judge_chat)
    try:
        got = await asyncio.gather(
            *(run_debate(chat, judge_chat, c, seed=s, log=log) for c in configs() for s in range(debates))
        )
    finally:
        log.close()
    return DebateRuns(model, judge or model, list(got), log.run_id)


def table4(runs: DebateRuns) -> pd.DataFrame:
    """Win and draw rates per setting and side, and the ToM-1/ToM-2 cooperation rate (rounds 1 and 5)."""
    rows = []
    for setting, paper_setting in PAPER_SETTING.items():
        for side in SIDES:
            group = [
                d
                for d in runs.debates
                if d.config.setting == setting and (setting == "no_tom" or d.config.tested_side == side)
            ]
            if not group:
                continue
            w = win_rates(group)
            note = f"{len(group)} debate(s), {w.verdicts} round verdicts; judge {runs.judge}"
            base = {"draft": "iclr", "setting": paper_setting, "side": side}
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
                            "ToM-2 debaters",
                        }
                    )
    df = pd.DataFrame(rows)
    df.insert(0, "table_id", "table4")
    df.insert(0, "paper_id", PAPER_ID)
    df["source"] = f"llm:{runs.model}"
    return attach_paper_values(df.assign(paper_value=np.nan))
