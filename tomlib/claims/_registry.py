"""The papers' claims as data (``data/claims/<paper_id>.csv``; columns in ``data/claims/README.md``)."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError, field_validator, model_validator

from tomlib.claims._query import check as check_query
from tomlib.errors import ConfigFileError, describe_validation
from tomlib.paths import data_dir, project_root

PAPERS = ("adaptive_tom", "coalition", "tom_ib")
TESTS = ("mean_diff", "gap_diff", "mean", "rate_diff", "rate", "all")
DIRECTIONS = ("greater", "less", "equivalent", "not_greater", "not_less", "all")
DRAFTS = {"coalition-matching-iclr-draft.txt": "ICLR draft", "coalition-matching-neurips-draft.txt": "NeurIPS draft"}
"""A paper with two versions: which one a claim quotes."""
PAPER_FILES = {
    "adaptive_tom": ("adaptive-tom-aaai2026.txt",),
    "coalition": ("coalition-matching-iclr-draft.txt", "coalition-matching-neurips-draft.txt"),
    "tom_ib": ("tom-internal-beliefs-asp.txt",),
}


class Claim(BaseModel):
    """One claim of a paper, what it rests on, and how its units decide it."""

    model_config = ConfigDict(extra="forbid")

    claim_id: str
    label: str = ""
    statement: str
    quote: str
    paper_file: str
    line: int
    rests_on: str
    comparison: str
    test: Literal["mean_diff", "gap_diff", "mean", "rate_diff", "rate", "all"]
    direction: Literal["greater", "less", "equivalent", "not_greater", "not_less", "all"]
    margin: float | None = None
    margin_why: str = ""
    paper_effect: float | None = None
    paper_effect_sd: float | None = None
    paper_n: int | None = None
    note: str = ""
    units: str
    metric: str
    select: str = ""
    a: str
    b: str = ""
    c: str = ""
    d: str = ""
    null: float | None = None
    strata: str = ""
    pair_on: str = ""
    cluster_on: str = ""
    each_stratum: bool = False
    by: Literal["paper", "ours"] = "paper"
    """``ours``: a check of ours, not a claim the paper makes (what its design assumes, or its claim asked of an agent
    of ours); its quote is the paper's words it checks, its label starts with "Ours:" and it has no paper effect."""
    _origin: str = PrivateAttr(default="")  # the registry file and line it was read from, for messages
    _number: str = PrivateAttr(default="")  # A1, C12, T3: the paper's prefix and the claim's row in its registry

    @property
    def number(self) -> str:
        """The claim's short number in REPORT, the book and the forest plots: the paper's prefix (``A``, ``C``,
        ``T``; ``data/papers.csv``) and its row in the registry (rows are only ever appended)."""
        return self._number or self.claim_id

    @property
    def origin(self) -> str:
        """Where the claim was registered (``data/claims/<paper>.csv:<line> (<claim_id>)``), for messages."""
        return f"{self._origin} ({self.claim_id})" if self._origin else self.claim_id

    @property
    def cited(self) -> str:
        """``“quote” (Table 1; ICLR draft; arXiv:2405.18044)``: the paper's words, where they rest and the paper's
        public address, for a reader who has no copy of the paper's text."""
        paper = next((p for p, files in PAPER_FILES.items() if self.paper_file in files), "")
        known = _papers().get(paper)
        where = [self.rests_on, DRAFTS.get(self.paper_file, ""), known.address_short if known else ""]
        return f"“{self.quote}” ({'; '.join(w for w in where if w)})"

    @property
    def tables(self) -> list[str]:
        """The units tables the claim reads (``units`` may list several, separated by ``;``)."""
        return [t.strip() for t in self.units.split(";") if t.strip()]

    @field_validator("label")
    @classmethod
    def _label(cls, v: str) -> str:
        if len(v) > 56:
            raise ValueError("a label is a few words (at most 56 characters) that name the claim in a grid")
        return v

    @field_validator("quote")
    @classmethod
    def _short(cls, v: str) -> str:
        if not 2 <= len(v.split()) <= 30:
            raise ValueError("a quote is a few words (2-30) as the paper prints them")
        return v

    @field_validator("select", "a", "b", "c", "d")
    @classmethod
    def _condition(cls, v: str) -> str:
        return check_query(v)  # a registry is data: its conditions are parsed, never run (tomlib.claims._query)

    @model_validator(mode="after")
    def _consistent(self) -> Claim:
        two = self.test in ("mean_diff", "rate_diff", "gap_diff")
        if two and not self.b:
            raise ValueError(f"test {self.test} compares A with B: give b")
        if (self.test == "gap_diff") != bool(self.c and self.d):
            raise ValueError(
                "test gap_diff compares the gap A - B with the gap C - D: give c and d (and only for gap_diff)"
            )
        if not two and self.b:
            raise ValueError(f"test {self.test} has one group: leave b empty")
        if self.test in ("mean", "rate") and self.null is None:
            raise ValueError(f"test {self.test} compares A with a value: give null")
        if (self.test == "all") != (self.direction == "all"):
            raise ValueError("direction 'all' goes with test 'all' and only with it")
        if self.direction in ("equivalent", "not_greater", "not_less") and self.margin is None:
            raise ValueError(f"direction {self.direction} needs a margin")
        cols = self.columns
        if cols["pair_on"] and not set(cols["cluster_on"]) <= set(cols["pair_on"]):
            raise ValueError("paired units' clusters are named by pair_on's columns: cluster_on must be among them")
        if self.test in ("mean", "rate", "all") and self.cluster_on:
            raise ValueError(
                f"test {self.test} takes each unit as independent and reads no cluster_on: write one unit per cluster "
                "(its rows averaged) instead"
            )
        if self.by == "ours" and (not self.label.startswith("Ours:") or self.paper_effect is not None):
            raise ValueError('a claim of ours (by = ours) has a label starting "Ours:" and no paper_effect')
        if self.each_stratum and not self.strata:
            raise ValueError("each_stratum judges the claim in each stratum: name them in strata")
        if self.test in ("mean", "rate") and self.strata and not self.each_stratum:
            raise ValueError(
                f"test {self.test} has one group, so its strata can only mean 'in each stratum': set each_stratum "
                "to yes (or leave strata empty for one pooled sample)"
            )
        return self

    @property
    def columns(self) -> dict[str, list[str]]:
        """``strata``, ``pair_on`` and ``cluster_on`` as lists of column names."""
        keys = ("strata", "pair_on", "cluster_on")
        return {k: [c.strip() for c in getattr(self, k).split(",") if c.strip()] for k in keys}


class Paper(BaseModel):
    """A paper as a reader cites it (``data/papers.csv``)."""

    model_config = ConfigDict(extra="forbid")

    paper_id: str
    prefix: str
    topic: str
    title: str
    authors: str
    venue: str
    address: str = ""
    code: str = ""

    @property
    def citation(self) -> str:
        """``Authors. Title. Venue. address`` in one line."""
        return ". ".join(p.rstrip(".") for p in (self.authors, self.title, self.venue, self.address) if p)

    @property
    def address_short(self) -> str:
        """``arXiv:2603.16264`` for an arXiv address, else the address."""
        got = re.match(r"https://arxiv\.org/abs/(\S+)$", self.address)
        return f"arXiv:{got.group(1)}" if got else self.address


def paper_info(paper_id: str) -> Paper:
    """The paper's citation (``data/papers.csv``); an unknown paper id is a one-line error.

    Args:
        paper_id: one of :data:`PAPERS`.
    """
    known = _papers()
    if paper_id not in known:
        raise ConfigFileError(f"{papers_file()} has no paper {paper_id!r}; known: {sorted(known)}")
    return known[paper_id]


def papers_file() -> Path:
    """The papers' citations: beside the claims registries, not among them (each CSV there is one paper's claims)."""
    return data_dir() / "papers.csv"


@functools.cache
def _papers() -> dict[str, Paper]:
    path = papers_file()
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    out = {}
    for i, row in enumerate(frame.to_dict("records"), start=2):
        try:
            out[row["paper_id"]] = Paper(**{k: v.strip() for k, v in row.items()})
        except ValidationError as exc:
            raise ConfigFileError(f"{path}:{i}: {describe_validation(exc)}") from None
    return out


def claims_dir() -> Path:
    return data_dir() / "claims"


def papers_dir() -> Path | None:
    """Where the paper texts are (``TOMLIB_PAPERS``, else ``../shared/papers`` beside the checkout); None if absent."""
    env = os.environ.get("TOMLIB_PAPERS")
    folder = Path(env) if env else project_root().parent / "shared" / "papers"
    return folder if folder.is_dir() else None


def load_claims(paper_id: str, folder: str | os.PathLike[str] | None = None) -> list[Claim]:
    """The registered claims of one paper; a malformed row names its file, row and field.

    Args:
        paper_id: one of :data:`PAPERS` (its registry is ``<paper_id>.csv``).
        folder: the registries' folder, by default ``data/claims/``.
    """
    path = Path(folder or claims_dir()) / f"{paper_id}.csv"
    if not path.exists():
        raise ConfigFileError(f"No claims registry {path}; see data/claims/README.md.")
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    out: list[Claim] = []
    for i, row in enumerate(frame.to_dict("records"), start=2):
        fields = {k: v.strip() for k, v in row.items() if v.strip()}  # an empty cell takes the field's default
        try:
            claim = Claim(**fields)
        except ValidationError as exc:
            raise ConfigFileError(f"{path}:{i} ({row.get('claim_id', '?')}): {describe_validation(exc)}") from None
        claim._origin = f"{path}:{i}"
        if not claim.label:
            raise ConfigFileError(f"{path}:{i} ({claim.claim_id}): give a label, a few words that name it in a grid")
        known = _papers().get(paper_id)
        claim._number = f"{known.prefix}{i - 1}" if known else ""
        if (claim.margin is not None or claim.null not in (None, 0.0)) and not claim.margin_why:
            raise ConfigFileError(
                f"{path}:{i} ({claim.claim_id}): a margin or a null other than 0 is a threshold of ours the claim is "
                "judged against: say in margin_why where it comes from and why the paper's own comparison cannot do"
            )
        if claim.paper_file not in PAPER_FILES[paper_id]:
            raise ConfigFileError(f"{path}:{i}: paper_file {claim.paper_file!r} is not one of {PAPER_FILES[paper_id]}")
        out.append(claim)
    ids = [c.claim_id for c in out]
    if len(set(ids)) != len(ids):
        raise ConfigFileError(f"{path}: claim ids repeat: {sorted({i for i in ids if ids.count(i) > 1})}")
    return out


def misquoted(claims: list[Claim], papers: Path) -> list[str]:
    """Claims whose quote does not stand on their line of the paper (whitespace runs compared as one space).

    Args:
        claims: the claims to check (:func:`load_claims`).
        papers: the folder of the paper texts (:func:`papers_dir`).
    """
    bad = []
    cache: dict[str, list[str]] = {}
    for c in claims:
        lines = cache.setdefault(c.paper_file, (papers / c.paper_file).read_text(encoding="utf-8").splitlines())
        text = " ".join(lines[c.line - 1].split()) if 1 <= c.line <= len(lines) else ""
        if " ".join(c.quote.split()) not in text:
            bad.append(f"{c.claim_id}: {c.quote!r} is not on {c.paper_file}:{c.line}")
    return bad
