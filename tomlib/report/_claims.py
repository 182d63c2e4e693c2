"""REPORT's claims table and forest plot per paper, from ``results/claims.csv`` (written by :mod:`tomlib.claims`)."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd

from tomlib.claims import load_claims, verdict_text
from tomlib.claims._robust import load_readings
from tomlib.claims._text import fmt, robustness_across, robustness_text
from tomlib.llm import describe_source
from tomlib.paths import write_atomic


def claims_table(paper_id: str, verdicts: pd.DataFrame) -> pd.DataFrame:
    """One row per claim: what it says, where, the paper's evidence, and our verdict per source (sim apart)."""
    rows = []
    mine = verdicts[verdicts["paper_id"] == paper_id]
    sources = sorted(s for s in mine["source"].unique() if not str(s).startswith("sim:"))
    headers = {s: f"{s} ({what})" if (what := describe_source(str(s))) else str(s) for s in sources}
    for c in load_claims(paper_id):
        got = mine[mine["claim_id"] == c.claim_id].set_index("source")
        evidence = c.rests_on + (f": {fmt(c.paper_effect)}" if c.paper_effect is not None else ": no number printed")
        row = {"claim": c.statement, "paper line": f"{c.paper_file}:{c.line}", "the paper's evidence": evidence}
        for s in sources:
            row[headers[s]] = verdict_text(got.loc[s]) if s in got.index else "not reproduced (no units)"
        if not sources:
            row["ours"] = f"not reproduced: no run has written {c.units} yet"
        texts = {s: robustness_text(got.loc[s]) for s in sources if s in got.index}
        row["robust to our readings?"] = robustness_across(texts) or "no verdict to check"
        rows.append(row)
    return pd.DataFrame(rows)


def claims_tally(paper_id: str, verdicts: pd.DataFrame) -> str:
    """``formal: 11 supported, 2 contradicted, 3 inconclusive · llm:local: …`` for a paper's claims, a simulated
    model's rows apart (they are no reproduction)."""
    mine = verdicts[(verdicts["paper_id"] == paper_id) & (verdicts["verdict"] != "not reproduced")]
    mine = mine[~mine["source"].astype(str).str.contains(r" \(|^sim:", regex=True)]  # other readings and the sim apart
    parts = []
    for source, part in mine.groupby("source", sort=True):
        counts = part["verdict"].value_counts()
        said = [f"{int(counts[v])} {v}" for v in ("supported", "contradicted", "inconclusive") if v in counts]
        parts.append(f"{source}: {', '.join(said)}")
    return " · ".join(parts) or "no claim judged yet"


TRUTH_WORDS = {
    "yes": "yes",
    "undecided": "not decided (too few units; not wrong)",
    "no": "no: a false verdict",
}


def sim_truth(paper_id: str, verdicts: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """A simulated model's verdicts beside the truth its declared competence implies (:mod:`tomlib.claims._truth`),
    and one sentence that counts them; empty when no sim verdict of the paper has a declared truth."""
    mine = verdicts[(verdicts["paper_id"] == paper_id) & verdicts["source"].astype(str).str.startswith("sim:")]
    if "declared_truth" not in mine.columns:
        return pd.DataFrame(), ""
    known = mine[mine["declared_truth"].notna()]
    if known.empty:
        return pd.DataFrame(), ""
    statements = {c.claim_id: c.statement for c in load_claims(paper_id)}
    rows = [
        {
            "claim": statements.get(str(r["claim_id"]), str(r["claim_id"])),
            "source": r["source"],
            "declared truth": f"{r['declared_truth']} (declared effect {fmt(r['declared_effect'])})"
            if r["declared_truth"] != "boundary"
            else f"on its boundary (declared effect {fmt(r['declared_effect']) or '0'})",
            "verdict": verdict_text(r),
            "matches?": TRUTH_WORDS.get(str(r["matches_truth"]), str(r["matches_truth"])),
        }
        for _, r in known.iterrows()
    ]
    counts = known["matches_truth"].value_counts()
    decided = known["verdict"].isin(["supported", "contradicted"]) & (known["matches_truth"] == "yes")
    other = int((mine["verdict"] != "not reproduced").sum()) - len(known)
    text = (
        f"{len(known)} verdicts on a simulated model's rows have a truth its declared competence implies: "
        f"{int(counts.get('yes', 0))} match it ({int(decided.sum())} decided), {int(counts.get('undecided', 0))} are "
        f"inconclusive where the declared effect is real (too few units), and {int(counts.get('no', 0))} are false. "
        f"{other} other verdicts rest on rows whose expectation has no closed form in the sim (tomlib.sim._declared)."
    )
    return pd.DataFrame(rows), text


def readings_reach(paper_id: str) -> pd.DataFrame:
    """The paper's readings that bear on claims, the units column that carries each, and what computes an
    alternative (the ``claims_*`` columns of ``data/readings/<paper>.csv``)."""
    rows = [
        {
            "reading": r.parameter,
            "units column": r.column or "(none)",
            "bears on": r.concerns,
            "an alternative": r.computed_by,
        }
        for r in load_readings(paper_id)
        if r.tables
    ]
    return pd.DataFrame(rows)


def forest_plot(paper_id: str, verdicts: pd.DataFrame, path: Path) -> Path | None:
    """Effect ± 95% CI per claim and source, the paper's effect marked, one strip per claim (each on its own scale:
    the claims' metrics differ)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mine = verdicts[(verdicts["paper_id"] == paper_id) & verdicts["effect"].notna()]
    mine = mine[~mine["source"].astype(str).str.startswith("sim:")]
    claims = {c.claim_id: c for c in load_claims(paper_id)}
    ids = [i for i in claims if i in set(mine["claim_id"])]
    if not ids:
        return None
    sources = sorted(mine["source"].unique())
    colors = dict(zip(sources, plt.rcParams["axes.prop_cycle"].by_key()["color"], strict=False))
    fig, axes = plt.subplots(len(ids), 1, figsize=(9, 0.55 * len(ids) + 1.2), squeeze=False)
    for ax, cid in zip(axes[:, 0], ids, strict=True):
        part = mine[mine["claim_id"] == cid]
        for k, r in enumerate(part.itertuples()):
            y = k - (len(part) - 1) / 2
            lo, hi = r.ci_low, r.ci_high
            ax.errorbar(
                r.effect,
                y,
                xerr=[[r.effect - lo], [hi - r.effect]],
                fmt="o",
                color=colors[r.source],
                capsize=2,
                ms=4,
                label=r.source,
            )
        if claims[cid].paper_effect is not None:
            ax.axvline(claims[cid].paper_effect, color="crimson", lw=1.5)
        c, base = claims[cid], float(claims[cid].null or 0.0)
        if c.margin is not None:  # where "similar" or "no better/worse" ends
            bounds = {"equivalent": (-c.margin, c.margin), "not_greater": (c.margin,), "not_less": (-c.margin,)}
            for x in bounds.get(c.direction, ()):
                ax.axvline(base + x, color="seagreen", lw=1, ls="--")
        ax.axvline(0, color="grey", lw=0.6, ls=":")
        ax.set_yticks([])
        ax.set_ylim(-1, 1)
        ax.set_ylabel(cid.split(".", 1)[1], rotation=0, ha="right", va="center", fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
    handles = [plt.Line2D([], [], marker="o", ls="", color=colors[s]) for s in sources]
    handles += [plt.Line2D([], [], color="crimson"), plt.Line2D([], [], color="seagreen", ls="--")]
    labels = [*sources, "the paper's effect", "the claim's margin"]
    fig.legend(handles, labels, loc="lower center", ncol=len(handles), fontsize=8, frameon=False)
    fig.suptitle(f"{paper_id}: effect and 95% CI per claim (each strip on its own scale)", fontsize=10)
    fig.tight_layout(rect=(0, 0.05, 1, 0.97))
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    write_atomic(path, buf.getvalue())  # a link planted at the figure's name is replaced, not written through
    plt.close(fig)
    return path


def engine_check(rows: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    """One sentence and a table of the claims engine against declared truth (``results/claims_calibration.csv``,
    :func:`tomlib.claims._calibrate.engine_check`): false verdicts under a declared null, pooled against alpha and its
    Monte-Carlo bound, and the supported rate under the paper's effect against the power the engine computes."""
    from tomlib.claims import ALPHA
    from tomlib.claims._calibrate import mc_bound

    if rows.empty:
        return "", pd.DataFrame()
    total, false = int(rows["reps"].sum()), int(rows["false_verdicts"].sum())
    # power is the planner's, meant for planned sizes: at 8 units a stratum holds one or two (shown, not averaged)
    powered = rows[rows["size"] == "planned"].dropna(subset=["supported_rate", "power"])
    gaps = (powered["supported_rate"] - powered["power"]).abs()
    said = (
        f"Under a declared null, {false:,} of {total:,} replications ({false / total:.1%}) gave a false verdict "
        f"(alpha {ALPHA:.0%}; with {total:,} replications up to {mc_bound(ALPHA, total):.1%} is chance)"
    )
    if len(powered):
        said += (
            f"; under the paper's effect, at the units the engine plans, the supported rate was "
            f"{100 * gaps.mean():.0f} points from the power it computes, on average over {len(powered)} designs "
            f"(at most {100 * gaps.max():.0f}; {int(rows['reps'].iloc[0])} replications each)"
        )
    table = pd.DataFrame(
        {
            "design": rows["path"] + rows["size"].map({"planned": "", "small": " (few units: exact tests)"}),
            "claim whose design it is": rows["claim_id"],
            "units": rows["n_units"].astype(int),
            "false verdicts under the null": [
                f"{int(f)} of {int(r)}" for f, r in zip(rows["false_verdicts"], rows["reps"], strict=True)
            ],
            "supported under the paper's effect": rows["supported_rate"].map(
                lambda v: "" if pd.isna(v) else f"{v:.0%}"
            ),
            "power computed": rows["power"].map(lambda v: "" if pd.isna(v) else f"{v:.0%}"),
        }
    )
    return said + ".", table
