"""Check one paper's claims registry: every row well formed, every quote on its line (``python scripts/check_claims.py
adaptive_tom``); the tests do the same for every paper."""

from __future__ import annotations

import sys

from tomlib.claims import load_claims, misquoted, papers_dir

if __name__ == "__main__":
    for paper in sys.argv[1:]:
        claims = load_claims(paper)
        papers = papers_dir()
        bad = misquoted(claims, papers) if papers else ["../shared/papers not found: quotes not checked"]
        print(f"{paper}: {len(claims)} claims; " + ("every quote on its line" if not bad else "; ".join(bad)))
        sys.exit(1 if bad else 0)
