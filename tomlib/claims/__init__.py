"""The papers' claims and verdicts on them from per-unit outcomes (``data/claims/``, ``results/units/``).

Reads results and imports no experiment, so a claim can be judged again under every reading without rerunning
anything it need not.
"""

from tomlib.claims._judge import claims_on, engine_check_ahead, judge, judge_ahead, write_claims
from tomlib.claims._registry import PAPERS, Claim, Paper, load_claims, misquoted, paper_info, papers_dir
from tomlib.claims._sequential import NeedsConfseq, require_confseq
from tomlib.claims._text import verdict_text
from tomlib.claims._units import read_units, units_dir, write_units
from tomlib.claims._verdict import ALPHA, VERDICT_COLUMNS, verdicts

__all__ = [
    "ALPHA",
    "PAPERS",
    "VERDICT_COLUMNS",
    "Claim",
    "NeedsConfseq",
    "Paper",
    "claims_on",
    "engine_check_ahead",
    "judge",
    "judge_ahead",
    "load_claims",
    "misquoted",
    "paper_info",
    "papers_dir",
    "read_units",
    "require_confseq",
    "units_dir",
    "verdict_text",
    "verdicts",
    "write_claims",
    "write_units",
]
