"""A verdict per claim and source: supported, contradicted or inconclusive, with the units that would decide it.

The decision is two-sided at ``alpha``: the claim's one-sided test and the opposite one, the smaller p doubled, then
Holm's correction over the paper's claims for that source (statsmodels ``multipletests``). An adjusted p below
``alpha`` decides for the side that gave it. So under no difference at all a verdict either way is wrong at most
``alpha`` of the time, whatever the claim says. Claims of "similar" use two one-sided tests against the margin (TOST);
"no better" and "no worse", one test against the margin. A universal claim (``test=all``, a theorem) holds when every
unit holds and fails with the first unit that does not.
"""

from __future__ import annotations

import contextlib
import gc
import math
import threading
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace

import pandas as pd

from tomlib.claims import _memo
from tomlib.claims._coverage import ALL, covers, shared_with
from tomlib.claims._query import MissingColumn, QueryError, mask
from tomlib.claims._registry import Claim
from tomlib.claims._robust import RowMasks
from tomlib.claims._stats import GAP, SMALL, Estimate, joined, one_sample, paired, rate, rate_diff, stratified, welch
from tomlib.claims._truth import TOLERANCE, TRUTH_COLUMNS, inside
from tomlib.errors import TomlibError

ALPHA = 0.05
REACH = 100
"""Units for power past this many times the paper's n (or, without one, the units judged) are beyond reach: no run
of this kind will gather them, and the count itself means "never"."""
BEYOND = "beyond reach: needs over "
POWER = 0.8
NO_POWER = "no units for 80% power: "
VERDICT_COLUMNS = [
    "paper_id",
    "claim_id",
    "source",
    "verdict",
    "effect",
    "ci_low",
    "ci_high",
    "p_value",
    "n_units",
    "units_in_clusters",
    "covers",
    "units_for_power",
    "robust",
    "flips_under",
    "held_under",
    "not_checked",
    "method",
    *TRUTH_COLUMNS,
]


class ClaimDataError(TomlibError, ValueError):
    """A claim's queries do not fit its units table (a column it names is missing, or a row is in both groups)."""


def groups(claim: Claim, units: pd.DataFrame) -> pd.DataFrame:
    """The units of one claim: its metric, its shared selection, and a ``group`` column (A or B; A-D for a
    difference of gaps); :class:`ClaimDataError` when a query does not fit the table or a row is in two groups.

    Args:
        claim: the claim whose units are picked.
        units: its units table, or some of its rows (one source's).
    """
    rows = units[units["metric"] == claim.metric].reset_index(drop=True)  # one label per unit, for the overlap check
    frame, both = _picked(claim, rows)
    if both.size:
        raise _overlap(claim)
    return frame


def _picked(claim: Claim, rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.Index]:
    """The claim's A and B rows among ``rows`` (of its metric) with a ``group`` column and numeric values, and the
    labels of rows in both groups; :class:`ClaimDataError` when a query does not fit."""
    if claim.select:
        rows = _where(claim, "select", rows)
    picked = [_where(claim, g.lower(), rows).assign(group=g) for g in group_names(claim)]
    frame = pd.concat(picked) if len(picked) > 1 else picked[0]
    # rounded: shares that sum to 1 differ by 1e-17 where they are equal, and a t-test of that noise is no evidence
    frame["value"] = pd.to_numeric(frame["value"], errors="coerce").round(10)
    labels = picked[0].index.append([p.index for p in picked[1:]])
    return frame.dropna(subset=["value"]), labels[labels.duplicated()].unique()


def group_names(claim: Claim) -> list[str]:
    """The claim's groups: A; A and B; or A, B, C and D for a difference of gaps (``gap_diff``)."""
    return ["A", "B", "C", "D"] if claim.test == "gap_diff" else ["A", "B"] if claim.b else ["A"]


def _where(claim: Claim, field: str, rows: pd.DataFrame) -> pd.DataFrame:
    """The rows the claim's query ``field`` (select, a or b) picks (:mod:`tomlib.claims._query`: parsed, never run)."""
    text = getattr(claim, field)
    try:
        return rows[mask(text, rows)]
    except MissingColumn as exc:
        raise ClaimDataError(
            f"{claim.origin}: its {field} `{text}` names {', '.join(exc.missing)}, which the units "
            f"{claim.units} lack{exc.hint}. Fix the query in the registry, or rerun the notebook that writes "
            f"{claim.units} if its units are from an older tomlib."
        ) from None
    except QueryError as exc:
        raise ClaimDataError(f"{claim.origin}: its {field} is refused: {exc}.") from None
    except (TypeError, ValueError) as exc:  # a string column compared with a number by < ...
        why = " ".join(str(exc).split())
        raise ClaimDataError(
            f"{claim.origin}: its {field} `{text}` cannot be evaluated on the units {claim.units} ({why}). "
            "Fix the query in the registry."
        ) from None


def _overlap(claim: Claim) -> ClaimDataError:
    named = " and ".join(f"{g} (`{getattr(claim, g.lower())}`)" for g in group_names(claim))
    return ClaimDataError(
        f"{claim.origin}: some units are in {'more than one of' if claim.test == 'gap_diff' else 'both'} {named}. "
        "Make the groups exclusive in the registry."
    )


class Grouper:
    """:func:`groups` of frames that are row subsets of whole units tables (``roots``, by a claim's ``units`` text:
    a source's rows, the rows under a reading), computed once per claim on the whole table and then read at the
    subset's rows. A claim picks rows one by one (its metric, ``select``, ``a`` and ``b`` compare a row's own values),
    so a subset's groups are the whole table's at the subset's rows, in the same order. A judgement under every
    reading asks for each claim's groups about five times, and the three queries were most of its time. A frame
    that is not such a subset, or a claim whose queries do not fit the whole table, is grouped directly."""

    def __init__(self, roots: dict[str, pd.DataFrame]) -> None:
        self.roots = roots
        self._whole: dict[tuple[str, ...], tuple[pd.DataFrame, pd.Index] | None] = {}

    def __call__(self, claim: Claim, frame: pd.DataFrame) -> pd.DataFrame:
        root = self.roots.get(claim.units)
        if root is None or frame.empty or not _subset_of(frame, root):
            return groups(claim, frame)
        key = (claim.units, claim.metric, claim.select, claim.a, claim.b, claim.c, claim.d)
        if key not in self._whole:
            self._whole[key] = _whole_groups(claim, root)
        whole = self._whole[key]
        if whole is None:
            return groups(claim, frame)
        picked, both = whole
        if both.size and both.isin(frame.index).any():
            raise _overlap(claim)
        return picked[picked.index.isin(frame.index)]


def _subset_of(frame: pd.DataFrame, root: pd.DataFrame) -> bool:
    """Whether ``frame`` is rows of ``root``, as they are there (labels, columns and values)."""
    if not frame.columns.equals(root.columns) or not frame.index.isin(root.index).all():
        return False
    return frame.equals(root.loc[frame.index])


def _whole_groups(claim: Claim, root: pd.DataFrame) -> tuple[pd.DataFrame, pd.Index] | None:
    """:func:`_picked` on a whole table, keeping its row labels (None when the queries do not fit it: the subset's
    own :func:`groups` then says what does not fit, as without the memo)."""
    try:
        return _picked(claim, root[root["metric"] == claim.metric])
    except ClaimDataError:
        return None


def estimate(claim: Claim, frame: pd.DataFrame) -> Estimate:
    """The claim's effect on its unit of analysis (see :mod:`tomlib.claims._stats`).

    Args:
        claim: the claim, whose test and columns choose the design (paired, stratified, clustered, two samples).
        frame: its units with a ``group`` column (:func:`groups`).
    """
    cols = claim.columns
    a = frame.loc[frame["group"] == "A", "value"].to_numpy(float)
    if claim.test == "all":
        est = rate((a != 0).astype(float), 1.0)
        est.exact = None
        est.method = (
            f"every unit checked: it holds in {int((a != 0).sum())} of {len(a)} (no test runs: a theorem holds when "
            "every unit does; the interval is Wilson's, of the share that holds)"
        )
        return est
    if claim.test == "rate":
        return rate(a, float(claim.null or 0.0))
    if claim.test == "mean":
        return one_sample(a, float(claim.null or 0.0))
    if claim.test == "gap_diff":
        return stratified(frame, cols["strata"], cols["cluster_on"], GAP)
    if cols["pair_on"]:
        return paired(frame, cols["pair_on"], cols["cluster_on"])
    if cols["strata"] or cols["cluster_on"]:
        return stratified(frame, cols["strata"], cols["cluster_on"])
    if claim.test == "rate_diff":
        return rate_diff(frame)
    return welch(frame)


def _sides(claim: Claim, est: Estimate) -> tuple[float, float]:
    """The p-values of the claim and of its opposite."""
    base = float(claim.null or 0.0) if claim.test in ("mean", "rate") else 0.0
    m = float(claim.margin or 0.0)
    d = claim.direction
    if d == "greater":
        return est.p_above(base), est.p_below(base)
    if d == "less":
        return est.p_below(base), est.p_above(base)
    if d == "not_greater":
        return est.p_below(base + m), est.p_above(base + m)
    if d == "not_less":
        return est.p_above(base - m), est.p_below(base - m)
    # equivalent: both one-sided tests inside the margin; against: the estimate significantly outside it
    return max(est.p_above(base - m), est.p_below(base + m)), min(est.p_above(base + m), est.p_below(base - m))


def paper_distance(claim: Claim) -> float | None:
    """How far the paper's effect lies inside the claim (the effect to plan power at), or None without one.

    Args:
        claim: the claim, with the paper's effect (``paper_effect``) where the paper prints one.
    """
    if claim.paper_effect is None or claim.test == "all":
        return None
    return inside(claim, claim.paper_effect)


def units_for_power(
    claim: Claim, est: Estimate, base_rate: float | None = None, *, alpha: float = ALPHA, power: float = POWER
) -> int | None:
    """Units of analysis for ``power`` (80%) at the paper's effect under this design (statsmodels' power solvers),
    two-sided at ``alpha``, with the paper's SD where it prints one, else the SD these units show; None when there is
    no effect or spread to plan with, or when at the paper's own effect the claim could not be supported.

    Args:
        claim: the claim to plan for.
        est: its estimate on the units so far (their SD, rows per unit and design effect).
        base_rate: group B's rate, for a difference of rates (None: 0.5).
        alpha: the level, two-sided, as verdicts are decided.
        power: the power to reach, 80%.
    """
    distance = paper_distance(claim)
    if distance is None or distance <= 0:
        return None  # no effect to plan with, or at the paper's own effect the claim cannot be supported
    with warnings.catch_warnings():  # a solver that cannot converge returns nan, handled below
        warnings.simplefilter("ignore")
        n = solve_power(claim, est.sd, distance, base_rate, alpha=alpha, power=power)
    if n is None or not math.isfinite(n):
        return None
    # clustered units: the rows needed, inflated by the design effect, counted in clusters
    return max(math.ceil(n * est.design_effect / est.rows_per_unit), 2)


def power_at(
    claim: Claim,
    n_units: int,
    sd: float | None,
    base_rate: float | None = None,
    *,
    rows_per_unit: float = 1.0,
    design_effect: float = 1.0,
    alpha: float = ALPHA,
) -> float | None:
    """The power this engine plans with at ``n_units`` units of analysis (the inverse of :func:`units_for_power`;
    clustered units count as ``n_units * rows_per_unit / design_effect`` independent rows).

    Args:
        claim: the claim, at the paper's effect (:func:`paper_distance`).
        n_units: units of analysis.
        sd: the spread these units show (the paper's SD comes first, where it prints one).
        base_rate: group B's rate, for a difference of rates (None: 0.5).
        rows_per_unit: rows per unit of analysis (a cluster's size).
        design_effect: the variance inflation of clustering (1: none).
        alpha: the level, two-sided, as verdicts are decided.
    """
    distance = paper_distance(claim)
    if distance is None or distance <= 0:
        return None
    rows = int(n_units * rows_per_unit / design_effect)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return solve_power(claim, sd, distance, base_rate, n_units=rows, alpha=alpha)


def solve_power(
    claim: Claim,
    observed_sd: float | None,
    distance: float,
    base_rate: float | None,
    n_units: int | None = None,
    *,
    alpha: float = ALPHA,
    power: float = POWER,
) -> float | None:
    """Units for ``power`` (``n_units`` None), or the power at ``n_units``: two-sided at ``alpha``, as decided."""
    from statsmodels.stats.power import NormalIndPower, TTestIndPower, TTestPower
    from statsmodels.stats.proportion import proportion_effectsize

    try:
        if claim.test in ("rate", "rate_diff"):
            p0 = base_rate if base_rate is not None else 0.5
            size = abs(proportion_effectsize(min(max(p0 + distance, 1e-6), 1 - 1e-6), p0))
            # pairs count once (planned as if the pair's two outcomes were independent: conservative when they agree)
            paired_rates = claim.test == "rate_diff" and bool(claim.columns["pair_on"])
            solver, per = NormalIndPower(), (2 if claim.test == "rate_diff" and not paired_rates else 1)
            kw = {"ratio": 1.0} if claim.test == "rate_diff" else {"ratio": 0.0}
        else:
            observed = observed_sd if observed_sd and math.isfinite(observed_sd) and observed_sd > 0 else None
            sd = claim.paper_effect_sd or observed  # the paper's own spread first (its SDs), else what this run saw
            if not sd:
                return None
            size = distance / sd
            one = claim.test == "mean" or bool(claim.columns["pair_on"])
            solver, per, kw = (TTestPower(), 1, {}) if one else (TTestIndPower(), 2, {"ratio": 1.0})
            if claim.test == "gap_diff":  # four cells of n: the contrast's variance 4 sd^2 / n, two samples' 2 sd^2 / n
                size, per = size / math.sqrt(2), 4
        if n_units is not None:
            if n_units // per < 2:
                return None
            nobs = {"nobs": n_units} if isinstance(solver, TTestPower) else {"nobs1": n_units // per}
            got = float(solver.power(effect_size=size, alpha=alpha, **nobs, **kw))
            return got if math.isfinite(got) or size <= 1.5 else 1.0  # the solvers give nan far past any doubt
        n = solver.solve_power(effect_size=size, alpha=alpha, power=power, **kw)
        if not math.isfinite(n) and size > 1.5:  # the solvers stop at 2 units: an effect this large needs no more
            n = 2.0
        return math.ceil(n) * per
    except (ValueError, RuntimeError, ZeroDivisionError):
        return None


@dataclass
class Judged:
    """One claim judged on one source, before Holm's correction."""

    claim: Claim
    est: Estimate
    p_decision: float  # two-sided: twice the smaller of the claim's and its opposite's one-sided p
    favours: str  # supported | contradicted
    base_rate: float | None
    covers: str = ALL  # the part of the claim the source's units ran (:mod:`tomlib.claims._coverage`)


def judge_one(claim: Claim, frame: pd.DataFrame) -> Judged:
    if claim.each_stratum:
        return judge_each(claim, frame)
    est = estimate(claim, frame)
    b = frame.loc[frame["group"] == "B", "value"]
    base = float(b.mean()) if claim.test == "rate_diff" and len(b) else None
    if claim.test == "all" or not math.isfinite(est.effect):
        return Judged(claim, est, math.nan, "", base)
    ps, pc = _sides(claim, est)
    return Judged(claim, est, min(1.0, 2 * min(ps, pc)), "supported" if ps <= pc else "contradicted", base)


def judge_each(claim: Claim, frame: pd.DataFrame) -> Judged:
    """A claim about every stratum (``each_stratum``), judged in each one apart and then together by an
    intersection-union test: it is supported only when every stratum supports it (p, the largest of the strata's),
    and contradicted when some stratum contradicts it (p, the smallest of theirs times the number of strata:
    Bonferroni). The effect and interval shown are the weakest stratum's; the method names each stratum's effect and
    the strata where the claim fails."""
    inner = claim.model_copy(update={"each_stratum": False, "strata": ""})
    names = claim.columns["strata"]
    parts: dict[str, tuple[Estimate, float, float]] = {}
    for name, part in frame.groupby(joined(frame, names), sort=True):
        if not holds_groups(inner, part):
            continue
        est = estimate(inner, part)
        if math.isfinite(est.effect):
            parts[str(name)] = (est, *_sides(inner, est))
    if not parts:
        none = Estimate(math.nan, math.nan, math.nan, 0, "no stratum holds both groups")
        return Judged(claim, none, math.nan, "", None)
    ps = max(p for _, p, _ in parts.values())
    pc = min(1.0, len(parts) * min(p for _, _, p in parts.values()))
    weakest = min(parts, key=lambda n: inside(claim, parts[n][0].effect))
    shown = []
    for name, (est, _, _) in parts.items():
        lo, hi = est.interval()
        fails = " (outside the claim)" if inside(claim, est.effect) <= TOLERANCE else ""
        shown.append(f"{name} {est.effect:+.3g} [{lo:+.3g}, {hi:+.3g}], n = {est.n_units}{fails}")
    est = replace(
        parts[weakest][0],
        n_units=sum(e.n_units for e, _, _ in parts.values()),
        in_clusters=None
        if any(e.in_clusters is None for e, _, _ in parts.values())
        else sum(e.in_clusters or 0 for e, _, _ in parts.values()),
        rows_per_unit=parts[weakest][0].rows_per_unit / len(parts),  # power: the weakest's units, in every stratum
        method=f"each {', '.join(names)} apart, all must hold (intersection-union; shown: the weakest, {weakest}): "
        + "; ".join(shown),
    )
    return Judged(claim, est, min(1.0, 2 * min(ps, pc)), "supported" if ps <= pc else "contradicted", None)


class Judge:
    """Judges claims on units tables and keeps what judging them again reuses: each claim's groups in the whole
    tables (:class:`Grouper`), the readings' row masks (:class:`tomlib.claims._robust.RowMasks`), the judgements of
    the run (:mod:`tomlib.claims._memo`) and each source's judged claims of the last :meth:`verdicts`
    (:attr:`judged`, to judge again under another reading without redoing the rest).

    Args:
        roots: the whole units tables (by a claim's ``units`` text) that the frames judged are row subsets of, so a
            claim's groups are picked once per table; None, each frame is grouped anew.
        memo: keep each judgement for the run, by the claim, the source and the table's content: for the judgements
            of results, which every notebook of a series repeats (not the draws of a calibration, which never do).
    """

    def __init__(self, roots: dict[str, pd.DataFrame] | None = None, *, memo: bool = False) -> None:
        self.group = Grouper(roots or {})
        self.masks = RowMasks()
        self.memo = memo
        self.judged: dict[str, dict[str, Judged]] = {}

    def verdicts(
        self,
        paper_id: str,
        claims: Sequence[Claim],
        units: dict[str, pd.DataFrame],
        sources: Iterable[str] | None = None,
    ) -> pd.DataFrame:
        """See :func:`verdicts`; each source's judged claims (before Holm) are kept in :attr:`judged`."""
        if sources is None:
            sources = sorted({s for f in units.values() for s in f["source"].unique()})
        sources = [*sources, *([ACROSS_MODELS] if any(across_models(c) for c in claims) else [])]
        rows = []
        for source in sources:
            judged: dict[str, Judged] = {}
            missing: list[Claim] = []
            for c in claims:
                j = self.claim(c, units, source)
                if j is None:
                    missing.append(c)
                else:
                    judged[c.claim_id] = j
            self.judged[source] = judged
            rows += holm_rows(paper_id, source, list(judged.values()))
            for c in missing:  # named only where the source ran the claim's table (a stand-in's source plays in one)
                table = units.get(c.units)
                ran = table is not None and (source == ACROSS_MODELS or (table["source"] == source).any())
                if ran and across_models(c) == (source == ACROSS_MODELS):
                    rows.append(_absent(paper_id, source, c))
        return pd.DataFrame(rows, columns=VERDICT_COLUMNS)

    def claim(self, claim: Claim, units: dict[str, pd.DataFrame], source: str) -> Judged | None:
        """See :func:`judge_claim`; kept for the run when the judge keeps a memo."""
        table = units.get(claim.units)
        if table is None:
            return None
        at = _memo.key(claim, source, table) if self.memo else None
        if at is not None and (got := _memo.recall(at)) is not _memo.MISSING:
            return got  # type: ignore[no-any-return]
        mine = table[_of_source(table, source, across_models(claim))]
        frame = None if mine.empty else self.group(claim, mine)
        judged = None if frame is None or not holds_groups(claim, frame) else judge_one(claim, frame)
        if judged is not None and frame is not None:
            judged.covers = _covers(claim, frame, table, source, self.group)
        if at is not None:
            _memo.keep(at, judged)
        return judged


def verdicts(
    paper_id: str,
    claims: Sequence[Claim],
    units: dict[str, pd.DataFrame],
    sources: Iterable[str] | None = None,
) -> pd.DataFrame:
    """Every claim of a paper for every source its units hold, Holm-corrected within the paper and source
    (:class:`Judge` judges again with what it kept). A claim whose units (or one of its groups) a source lacks is
    "not reproduced" for it. Claims that compare models are judged once on all ``llm:`` sources together (source
    ``llm:*``).

    Args:
        paper_id: the paper whose claims these are (the ``paper_id`` column; Holm's family is the paper's claims).
        claims: the claims to judge (:func:`load_claims`).
        units: table id (a claim's ``units`` text) -> units frame (:func:`read_units`, :func:`units_for`).
        sources: the sources to judge, by default every source the units hold.
    """
    return Judge().verdicts(paper_id, claims, units, sources)


def judge_claim(claim: Claim, units: dict[str, pd.DataFrame], source: str) -> Judged | None:
    """One claim on one source's units, before Holm; None when the source lacks its units or one of its groups.

    Args:
        claim: the claim to judge.
        units: table id (a claim's ``units`` text) -> units frame.
        source: the source whose rows are judged (``llm:*``: every ``llm:`` source, for a claim across models).
    """
    return Judge().claim(claim, units, source)


def _covers(claim: Claim, frame: pd.DataFrame, table: pd.DataFrame, source: str, group: Grouper) -> str:
    """What of the claim ``frame`` (a source's groups) covers, against every source's units of the claim; for a
    source composed on another (``formal+ppo:selfplay``), how many of its units are the other's own."""
    alone = len(frame) == len(table) or table["source"].nunique() == 1  # every source's units are this one's
    said = covers(claim, frame, None if source == ACROSS_MODELS else frame if alone else group(claim, table))
    base = source.split("+")[0]
    if "+" in source and (table["source"] == base).any():
        shared = shared_with(base, frame, group(claim, table[table["source"] == base]))
        said = f"{said}; {shared}" if shared else said
    return said


_GC_LOCK = threading.Lock()


@contextlib.contextmanager
def _without_gc_collect() -> Iterator[None]:
    """statsmodels 0.14's Holm branch calls ``gc.collect()`` after every correction (0.1 s with a notebook's objects
    alive; 14 families make a claims table 1.5 s slower). The collection changes no number, so it is skipped. The
    lock keeps two threads from saving each other's stand-in as the real one."""
    with _GC_LOCK:
        saved = gc.collect
        gc.collect = lambda *args, **kwargs: 0  # type: ignore[assignment]
        try:
            yield
        finally:
            gc.collect = saved


def holm_rows(paper_id: str, source: str, judged: list[Judged]) -> list[dict]:
    """The verdict rows of one source's judged claims, Holm-corrected over those with a p-value: the paper's claims
    are one family, our checks (``by = ours``) another, so adding a check of ours never moves a verdict of the
    paper's."""
    from statsmodels.stats.multitest import multipletests

    adjusted: dict[int, float] = {}
    for by in ("paper", "ours"):
        family = [j for j in judged if math.isfinite(j.p_decision) and j.claim.by == by]
        with _without_gc_collect():
            holm = multipletests([j.p_decision for j in family], method="holm")[1] if family else []
        adjusted.update(zip(map(id, family), holm, strict=True))
    return [_row(paper_id, source, j, adjusted.get(id(j))) for j in judged]


ACROSS_MODELS = "llm:*"
"""The source label of claims that compare models with each other: judged on every ``llm:`` source together."""


def across_models(claim: Claim) -> bool:
    """A claim whose groups are named by model (``model == 'gpt-4o'``) compares models, so no one source holds it.

    Args:
        claim: the claim asked about.
    """
    return any("model" in q for q in (claim.a, claim.b)) and bool(claim.b)


def _of_source(table: pd.DataFrame, source: str, across: bool) -> pd.Series:
    if source == ACROSS_MODELS:
        return table["source"].astype(str).str.startswith("llm:") if across else table["source"] != table["source"]
    return (table["source"] == source) & (not across)


def holds_groups(claim: Claim, frame: pd.DataFrame) -> bool:
    """Whether the units hold each of the claim's groups: A, and B for a comparison (C and D for a difference of gaps).

    Args:
        claim: the claim whose groups are asked for.
        frame: its units with a ``group`` column (:func:`groups`).
    """
    return set(group_names(claim)) <= set(frame["group"])


def decide(source: str, j: Judged, p_adj: float | None) -> tuple[str, str]:
    """The verdict of a judged claim at its Holm-adjusted p, and what to add to its method (an exact answer's why)."""
    est, claim = j.est, j.claim
    exact = _exact_answer(source, claim, est)
    if claim.test == "all":
        return ("inconclusive" if est.n_units == 0 else "supported" if est.effect == 1.0 else "contradicted"), ""
    if exact is not None:
        return exact[0], f"; {exact[1]}"
    if p_adj is not None and p_adj < ALPHA:
        return j.favours, ""
    return "inconclusive", ""


def _row(paper_id: str, source: str, j: Judged, p_adj: float | None) -> dict:
    est, claim = j.est, j.claim
    lo, hi = est.interval() if math.isfinite(est.effect) else (math.nan, math.nan)
    verdict, why = decide(source, j, p_adj)
    method = est.method + why
    need = units_for_power(claim, est, j.base_rate) if verdict == "inconclusive" else None
    if need is not None and need > (reach := REACH * (claim.paper_n or max(est.n_units, 1))):
        method += f"; {BEYOND}{reach:,}"
    if verdict == "inconclusive" and need is None:
        distance = paper_distance(claim)
        why = (
            "the paper prints no effect to plan with"
            if distance is None
            else "at the paper's own effect the claim does not hold"
            if distance <= 0
            else "no spread to plan with"
        )
        method += f"; {NO_POWER}{why}"
    return {
        "paper_id": paper_id,
        "claim_id": claim.claim_id,
        "source": source,
        "verdict": verdict,
        "effect": est.effect,
        "ci_low": lo,
        "ci_high": hi,
        "p_value": p_adj if p_adj is not None else math.nan,
        "n_units": est.n_units,
        "units_in_clusters": est.in_clusters,
        "covers": j.covers,
        "units_for_power": need,
        "robust": None,
        "flips_under": None,
        "held_under": None,
        "not_checked": None,
        "method": method,
        **dict.fromkeys(TRUTH_COLUMNS),
    }


DETERMINISTIC = "formal"
"""The source whose agents are exact: where every unit of both conditions agrees, it has no sampling error at all."""


def _exact_answer(source: str, claim: Claim, est: Estimate) -> tuple[str, str] | None:
    """The verdict of an effect with no sampling error: the ``formal`` source, every unit alike (``se == 0``), and
    enough units (``2 * SMALL``) that the agreement is no accident of a few draws. Its effect is exact, so it answers
    the claim by where it lies: inside (supported), outside, or on the boundary of a strict claim ("A > B" with an
    effect of exactly 0: contradicted). None otherwise (the p-value decides)."""
    if source != DETERMINISTIC or est.se != 0 or est.n_units < 2 * SMALL or not math.isfinite(est.effect):
        return None
    d = inside(claim, est.effect)
    strict = claim.direction in ("greater", "less")
    if d > TOLERANCE or (abs(d) <= TOLERANCE and not strict):
        return "supported", f"every unit alike: the exact effect {est.effect:+.4g} lies inside the claim"
    where = "on its boundary" if abs(d) <= TOLERANCE else "outside it"
    return "contradicted", f"every unit alike: the exact effect {est.effect:+.4g} lies {where}, not inside the claim"


def _absent(paper_id: str, source: str, claim: Claim) -> dict:
    return {
        **dict.fromkeys(VERDICT_COLUMNS),
        "paper_id": paper_id,
        "claim_id": claim.claim_id,
        "source": source,
        "verdict": "not reproduced",
        "method": f"no units of this source in {claim.units}",
    }
