"""REPORT's claims table and forest plot per paper, from ``results/claims.csv`` (written by :mod:`tomlib.claims`)."""

from __future__ import annotations

import html
import io
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from tomlib.claims import (
    Claim,
    fmt,
    is_firm,
    load_claims,
    load_readings,
    mc_bound,
    rests_on_readings,
    robustness_across,
    robustness_text,
    verdict_text,
)
from tomlib.llm import describe_source
from tomlib.paths import write_atomic

if TYPE_CHECKING:
    from matplotlib.axes import Axes


def report_sources(paper_id: str, verdicts: pd.DataFrame) -> list[str]:
    """The sources REPORT sets beside the paper: neither a simulated model (``sim:``) nor a run under another reading
    (``formal (tie_break=...)``), whose verdicts are the robustness column's.

    Args:
        paper_id: the paper (``coalition``, ``adaptive_tom``, ``tom_ib``).
        verdicts: the claims' verdicts (``results/claims.csv``).
    """
    mine = verdicts[verdicts["paper_id"] == paper_id]["source"].astype(str)
    return sorted(s for s in mine.unique() if not s.startswith("sim:") and " (" not in s)


def _by_claim(paper_id: str, verdicts: pd.DataFrame) -> tuple[list[str], list[tuple[Claim, pd.DataFrame]]]:
    """REPORT's sources for the paper, and each registered claim with its verdicts indexed by source."""
    mine = verdicts[verdicts["paper_id"] == paper_id]
    got = [(c, mine[mine["claim_id"] == c.claim_id].set_index("source")) for c in load_claims(paper_id)]
    return report_sources(paper_id, verdicts), got


def claims_table(paper_id: str, verdicts: pd.DataFrame) -> pd.DataFrame:
    """One row per claim: its number, what it says, the paper's words and where they rest, the paper's evidence, and
    our verdict per source (sim apart).

    Args:
        paper_id: the paper whose registered claims (``data/claims/<paper>.csv``) are the rows.
        verdicts: the claims' verdicts (``results/claims.csv``).
    """
    rows = []
    sources, by_claim = _by_claim(paper_id, verdicts)
    headers = {s: f"{s} ({what})" if (what := describe_source(str(s))) else str(s) for s in sources}
    for c, got in by_claim:
        evidence = fmt(c.paper_effect) if c.paper_effect is not None else "no number printed"
        row = {"#": c.number, "claim": c.statement, "the paper says": c.cited, "the paper's effect": evidence}
        for s in sources:
            row[headers[s]] = verdict_text(got.loc[s], c.paper_effect) if s in got.index else NOT_RUN
        if not sources:
            row["ours"] = f"not reproduced: no run has written {c.units} yet"
        texts = {s: robustness_text(got.loc[s]) for s in sources if s in got.index}
        row["robust to our readings?"] = robustness_across(texts) or "no verdict to check"
        rows.append(row)
    return pd.DataFrame(rows)


NOT_RUN = "not reproduced (no units)"
VERDICT_COLOURS = {
    "supported": ("🟩", "#d4edda"),
    "contradicted": ("🟥", "#f8d7da"),
    "inconclusive": ("🟨", "#fff3cd"),
    "not reproduced": ("⬜", "#f0f0f0"),
}
RESTS_MARK = "⚑"
GRID_LEGEND = (
    f"{VERDICT_COLOURS['supported'][0]} supported · {VERDICT_COLOURS['contradicted'][0]} contradicted · "
    f"{VERDICT_COLOURS['inconclusive'][0]} inconclusive (too few units, no spread, or the CI excludes the paper's "
    f"effect: the detail below says which) · {VERDICT_COLOURS['not reproduced'][0]} not run for this source · "
    f"{RESTS_MARK} rests on a reading of ours: the verdict flips under the alternative named"
)


def grid_legend_html() -> str:
    """:data:`GRID_LEGEND` with each verdict's colour as a swatch (a page may have no emoji font)."""
    out = html.escape(GRID_LEGEND)
    for mark, colour in VERDICT_COLOURS.values():
        swatch = f"<span style='background:{colour};border:1px solid #ccc;padding:0 6px'>&nbsp;</span>"
        out = out.replace(html.escape(mark), swatch, 1)
    return out


@dataclass(frozen=True)
class GridCell:
    """One verdict of the grid: the word, and the alternative readings it flips under (what it rests on of ours)."""

    verdict: str
    rests_on: tuple[str, ...] = ()

    @property
    def words(self) -> str:
        """``supported ⚑ trust=uniform``: the verdict and the readings it rests on (HTML colours the cell)."""
        word = "not run" if self.verdict == "not reproduced" else self.verdict
        return word + (f" {RESTS_MARK} {', '.join(self.rests_on)}" if self.rests_on else "")

    @property
    def text(self) -> str:
        """:attr:`words` after the verdict's coloured mark (Markdown has no colour)."""
        mark, _ = VERDICT_COLOURS.get(self.verdict, ("", ""))
        return f"{mark} {self.words}".strip()


Grid = tuple[list[str], list[tuple[str, str, list[GridCell]]]]
"""The sources, then per claim its number, label and one cell per source."""


def verdict_grid(paper_id: str, verdicts: pd.DataFrame) -> Grid:
    """The paper's claims by source at a glance (the same verdicts as ``claims.csv``).

    Args:
        paper_id: the paper.
        verdicts: the claims' verdicts (``results/claims.csv``).
    """
    sources, by_claim = _by_claim(paper_id, verdicts)
    rows = []
    for c, got in by_claim:
        cells = [
            GridCell(str(got.loc[s, "verdict"]), tuple(rests_on_readings(got.loc[s])))
            if s in got.index
            else GridCell("not reproduced")
            for s in sources
        ]
        rows.append((c.number, c.label, cells))
    return sources, rows


def grid_frame(paper_id: str, verdicts: pd.DataFrame) -> pd.DataFrame:
    """:func:`verdict_grid` as a table of text (Markdown).

    Args:
        paper_id: the paper.
        verdicts: the claims' verdicts (``results/claims.csv``).
    """
    return frame_of(verdict_grid(paper_id, verdicts))


def frame_of(grid: Grid) -> pd.DataFrame:
    """A grid as a table of text.

    Args:
        grid: a :func:`verdict_grid`.
    """
    sources, rows = grid
    return pd.DataFrame(
        [{"#": n, "claim": label, **{s: cell.text for s, cell in zip(sources, cells, strict=True)}} for n, label, cells
         in rows],
        columns=["#", "claim", *sources],
    )  # fmt: skip


def grid_html(paper_id: str, verdicts: pd.DataFrame, anchor: str) -> str:
    """:func:`verdict_grid` as an HTML table, each cell coloured by its verdict, each number a link to the claim's
    row in the detail table (``<anchor>-<number>``: ``#claim-coalition-C1``, or a page's, ``../REPORT.html#...``).

    Args:
        paper_id: the paper.
        verdicts: the claims' verdicts (``results/claims.csv``).
        anchor: where a claim's number links, before ``-<number>``.
    """
    return html_of(verdict_grid(paper_id, verdicts), anchor)


def html_of(grid: Grid, anchor: str) -> str:
    """A grid as an HTML table (see :func:`grid_html`).

    Args:
        grid: a :func:`verdict_grid`.
        anchor: where a claim's number links, before ``-<number>``.
    """
    sources, rows = grid
    head = "".join(f"<th>{html.escape(s)}</th>" for s in ["#", "claim", *sources])
    body = []
    for number, label, cells in rows:
        tds = "".join(
            f"<td style='background:{VERDICT_COLOURS.get(c.verdict, ('', '#fff'))[1]}'>{html.escape(c.words)}</td>"
            for c in cells
        )
        link = f"<a href='{html.escape(anchor)}-{html.escape(number)}'>{html.escape(number)}</a>"
        body.append(f"<tr><td>{link}</td><td>{html.escape(label)}</td>{tds}</tr>")
    return f"<table class='grid'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def claims_tally(paper_id: str, verdicts: pd.DataFrame) -> str:
    """``formal: 11 supported (3 firm), 2 contradicted, 3 inconclusive · llm:local: …`` for a paper's claims: the
    grid's counts, a simulated model's rows and other readings' runs apart. *Firm*: the same verdict under every
    alternative reading of ours, none left unchecked.

    Args:
        paper_id: the paper.
        verdicts: the claims' verdicts (``results/claims.csv``).
    """
    mine = verdicts[(verdicts["paper_id"] == paper_id) & (verdicts["verdict"] != "not reproduced")]
    mine = mine[mine["source"].astype(str).isin(report_sources(paper_id, verdicts))]
    parts = []
    for source, part in mine.groupby("source", sort=True):
        said = []
        for v in ("supported", "contradicted", "inconclusive"):
            these = part[part["verdict"] == v]
            if these.empty:
                continue
            firm = int(sum(1 for _, r in these.iterrows() if is_firm(r)))
            said.append(f"{len(these)} {v}" + (f" ({firm} firm)" if v != "inconclusive" else ""))
        parts.append(f"{source}: {', '.join(said)}")
    return " · ".join(parts) or "no claim judged yet"


FIRM = "firm: the same verdict under every alternative reading of ours, none left unchecked"


TRUTH_WORDS = {
    "yes": "yes",
    "undecided": "not decided (too few units; not wrong)",
    "no": "no: a false verdict",
}


def sim_truth(paper_id: str, verdicts: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """A simulated model's verdicts beside the truth its declared competence implies (:mod:`tomlib.claims._truth`),
    and one sentence that counts them; empty when no sim verdict of the paper has a declared truth.

    Args:
        paper_id: the paper.
        verdicts: the claims' verdicts (``results/claims.csv``), with the ``declared_truth`` columns the claims
            engine adds on a sim's rows.
    """
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
    alternative (the ``claims_*`` columns of ``data/readings/<paper>.csv``).

    Args:
        paper_id: the paper whose readings (``data/readings/<paper>.csv``) are read.
    """
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


MARKERS = {"supported": "o", "contradicted": "X", "inconclusive": "D"}


def _strip(ax: Axes, c: Claim, part: pd.DataFrame, colors: dict[str, str]) -> None:
    """One claim's strip of the forest plot: each source's effect and CI (the marker's shape its verdict), the
    paper's effect, the claim's margin, and the strip named by the claim's number, label and metric."""
    for k, r in enumerate(part.itertuples()):
        y = k - (len(part) - 1) / 2
        lo, hi = (r.effect, r.effect) if pd.isna(r.ci_low) else (r.ci_low, r.ci_high)
        ax.errorbar(
            r.effect,
            y,
            xerr=[[r.effect - lo], [hi - r.effect]],
            fmt=MARKERS.get(r.verdict, "o"),
            color=colors[r.source],
            mfc=colors[r.source] if r.verdict == "supported" else "white",
            capsize=2,
            ms=5,
        )
    if c.paper_effect is not None:
        ax.axvline(c.paper_effect, color="crimson", lw=1.5)
    base = float(c.null or 0.0)
    if c.margin is not None:  # where "similar" or "no better/worse" ends
        bounds = {"equivalent": (-c.margin, c.margin), "not_greater": (c.margin,), "not_less": (-c.margin,)}
        for x in bounds.get(c.direction, ()):
            ax.axvline(base + x, color="seagreen", lw=1, ls="--")
    ax.axvline(0, color="grey", lw=0.6, ls=":")
    ax.set_yticks([])
    ax.set_ylim(-1, 1)
    ax.set_ylabel(f"{c.number} {c.label}", rotation=0, ha="right", va="center", fontsize=8)
    ax.text(1.01, 0.5, c.metric, transform=ax.transAxes, fontsize=7, va="center", color="dimgrey")
    ax.tick_params(axis="x", labelsize=7)


def forest_plot(paper_id: str, verdicts: pd.DataFrame, path: Path) -> Path | None:
    """Effect ± 95% CI per claim and source, the paper's effect marked, one strip per claim named by its number and
    label, the marker's shape the verdict; claims of one metric sit together and share a scale.

    Args:
        paper_id: the paper.
        verdicts: the claims' verdicts (``results/claims.csv``).
        path: the PNG to write (``results/figures/claims.<paper>.png``); None is returned, and nothing written, when
            no claim has an effect.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mine = verdicts[(verdicts["paper_id"] == paper_id) & verdicts["effect"].notna()]
    mine = mine[mine["source"].astype(str).isin(report_sources(paper_id, verdicts))]
    claims = {c.claim_id: c for c in load_claims(paper_id)}
    ids = [i for i in claims if i in set(mine["claim_id"])]
    if not ids:
        return None
    metrics = list(dict.fromkeys(claims[i].metric for i in ids))
    ids.sort(key=lambda i: metrics.index(claims[i].metric))  # a metric's claims together, in registry order
    sources = sorted(mine["source"].unique())
    colors = dict(zip(sources, plt.rcParams["axes.prop_cycle"].by_key()["color"], strict=False))
    fig, axes = plt.subplots(len(ids), 1, figsize=(9, 0.45 * len(ids) + 1.6), squeeze=False)
    first: dict[str, object] = {}
    for ax, cid in zip(axes[:, 0], ids, strict=True):
        c = claims[cid]
        if c.metric in first:  # one scale for every claim of a metric
            ax.sharex(first[c.metric])
        else:
            first[c.metric] = ax
        _strip(ax, c, mine[mine["claim_id"] == cid], colors)
    for ax, cid, after in zip(axes[:-1, 0], ids[:-1], ids[1:], strict=True):
        if claims[cid].metric == claims[after].metric:  # the scale is read once, under a metric's last strip
            ax.tick_params(labelbottom=False)
    handles = [plt.Line2D([], [], marker="s", ls="", color=colors[s]) for s in sources]
    handles += [plt.Line2D([], [], marker=m, ls="", color="black", mfc="black" if v == "supported" else "white")
                for v, m in MARKERS.items()]  # fmt: skip
    handles += [plt.Line2D([], [], color="crimson"), plt.Line2D([], [], color="seagreen", ls="--")]
    labels = [*sources, *MARKERS, "the paper's effect", "the claim's margin"]
    fig.legend(handles, labels, loc="lower center", ncol=min(len(handles), 5), fontsize=8, frameon=False)
    fig.suptitle(f"{paper_id}: effect and 95% CI per claim (claims of one metric share a scale)", fontsize=10)
    fig.tight_layout(rect=(0, 0.08, 0.97, 0.97))
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    write_atomic(path, buf.getvalue())  # a link planted at the figure's name is replaced, not written through
    plt.close(fig)
    return path


def engine_check(rows: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    """One sentence and a table of the claims engine against declared truth (``results/claims_calibration.csv``,
    :func:`tomlib.claims._calibrate.engine_check`): false verdicts under a declared null, pooled against alpha and its
    Monte-Carlo bound, and the supported rate under the paper's effect against the power the engine computes.

    Args:
        rows: ``results/claims_calibration.csv``'s rows; empty gives an empty sentence and table.
    """
    from tomlib.claims import ALPHA

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
