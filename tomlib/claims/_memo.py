"""Claims judged once per run: one claim's judgement on one source's rows, kept by what it is a function of.

:meth:`tomlib.claims.Judge.claim` reads nothing but the claim and its units table (under the default
readings, or under an alternative of one), so its answer is kept under the claim's definition, the source and a
digest of that table's content. Every notebook of the adaptive-ToM series judges its whole paper again for its claims
table (Holm's families hold every claim), and each judges the claims on the tables before it as the one before did:
their judgements are kept in memory and, through the run's shared folder (:mod:`tomlib.runshare`), left for the
kernels after it. The runner deletes the folder when the run ends.
"""

from __future__ import annotations

import hashlib
import itertools
import uuid
import weakref
from typing import TYPE_CHECKING, Any

import pandas as pd

from tomlib import runshare

if TYPE_CHECKING:
    from tomlib.claims._registry import Claim

PART = "claims"
"""The judgements' part of the run's shared folder."""
KEPT = 20_000
"""Judgements kept at most in a process (the oldest go first): a whole series makes about 2,000, each about a
kilobyte; a long-lived kernel that judges changing results again and again stays bounded."""
MISSING = object()

_kept: dict[str, Any] = {}
_new: dict[str, Any] = {}
_read: set[str] = set()
_digests: dict[int, tuple[weakref.ref[pd.DataFrame], str]] = {}


def digest(table: pd.DataFrame) -> str:
    """The SHA-256 of a table's columns, dtypes, row labels and values (pandas' row hashes), worked out once per table
    object: a judgement reads the same derived table for many claims."""
    got = _digests.get(id(table))
    if got is not None and got[0]() is table:
        return got[1]
    h = hashlib.sha256(repr([(str(c), str(t)) for c, t in table.dtypes.items()]).encode())
    h.update(pd.util.hash_pandas_object(table, index=True).to_numpy().tobytes())
    out = h.hexdigest()
    for k in [k for k, (ref, _) in _digests.items() if ref() is None]:
        del _digests[k]
    _digests[id(table)] = (weakref.ref(table), out)
    return out


def key(claim: Claim, source: str, table: pd.DataFrame) -> str:
    """What a claim's judgement on ``source`` is a function of: the claim as defined (every field), the source and
    the content of its units table."""
    return hashlib.sha256(f"{claim!r}\n{source}\n{digest(table)}".encode()).hexdigest()


def recall(at: str) -> Any:
    """The judgement kept under ``at`` (here, or by an earlier kernel of the run as of the last :func:`load`), or
    :data:`MISSING`."""
    return _kept.get(at, MISSING)


def keep(at: str, judged: Any) -> None:
    """Keep a judgement (None: the source lacks a group) here, and for :func:`share`."""
    _kept[at] = _new[at] = judged
    _bound()


def share() -> None:
    """Leave the judgements made since the last call for the run's later kernels (one file per call)."""
    if not _new:
        return
    name = f"{uuid.uuid4().hex}.pickle"
    runshare.put(PART, name, dict(_new))
    _read.add(name)  # its own: nothing to read back
    _new.clear()


def forget() -> None:
    """Drop what this process kept (not what is in the run's folder)."""
    _kept.clear()
    _new.clear()
    _read.clear()


def load() -> None:
    """Take in the files earlier kernels of the run left that this process has not read yet (once per judgement)."""
    for path in runshare.files(PART, "*.pickle"):
        if path.name in _read:
            continue
        _read.add(path.name)
        got = runshare.load(path)
        if isinstance(got, dict):
            for k, v in got.items():
                _kept.setdefault(k, v)
    _bound()


def _bound() -> None:
    for k in list(itertools.islice(_kept, max(0, len(_kept) - KEPT))):
        del _kept[k]
