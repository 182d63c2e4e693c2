"""The papers' claims and verdicts on them from per-unit outcomes (``data/claims/``, ``results/units/``).

Reads results and imports no experiment, so a claim can be judged again under every reading without rerunning
anything it need not.
"""

from tomlib.claims._calibrate import declared_sd, design, mc_bound, write_engine_check
from tomlib.claims._judge import (
    claims_on,
    engine_check_ahead,
    judge,
    judge_ahead,
    judge_paper,
    units_for,
    write_claims,
)
from tomlib.claims._registry import PAPERS, Claim, Paper, load_claims, misquoted, paper_info, papers_dir
from tomlib.claims._robust import load_readings
from tomlib.claims._sequential import NeedsConfseq, require_confseq, sequential_verdict
from tomlib.claims._stats import Estimate
from tomlib.claims._text import fmt, is_firm, rests_on_readings, robustness_across, robustness_text, verdict_text
from tomlib.claims._units import EXPECTED, read_units, units_dir, write_units
from tomlib.claims._verdict import (
    ACROSS_MODELS,
    ALPHA,
    VERDICT_COLUMNS,
    ClaimDataError,
    Judge,
    Judged,
    across_models,
    estimate,
    groups,
    holds_groups,
    judge_claim,
    paper_distance,
    power_at,
    units_for_power,
    verdicts,
)

__all__ = [
    "ACROSS_MODELS",
    "ALPHA",
    "EXPECTED",
    "PAPERS",
    "VERDICT_COLUMNS",
    "Claim",
    "ClaimDataError",
    "Estimate",
    "Judge",
    "Judged",
    "NeedsConfseq",
    "Paper",
    "across_models",
    "claims_on",
    "declared_sd",
    "design",
    "engine_check_ahead",
    "estimate",
    "fmt",
    "groups",
    "holds_groups",
    "is_firm",
    "judge",
    "judge_ahead",
    "judge_claim",
    "judge_paper",
    "load_claims",
    "load_readings",
    "mc_bound",
    "misquoted",
    "paper_distance",
    "paper_info",
    "papers_dir",
    "power_at",
    "read_units",
    "require_confseq",
    "rests_on_readings",
    "robustness_across",
    "robustness_text",
    "sequential_verdict",
    "units_dir",
    "units_for",
    "units_for_power",
    "verdict_text",
    "verdicts",
    "write_claims",
    "write_engine_check",
    "write_units",
]
