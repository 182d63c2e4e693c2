"""Claims judged ahead: a paper's verdicts worked out on a background thread while a run goes on, and used once by
:func:`tomlib.claims.judge` if what they are a function of is unchanged.

The runner starts it when the notebooks that write a paper's tables are done (``tomlib run``), so the report at the
end of the series finds that paper judged: the judging runs on a core the later notebooks leave idle. A judgement is
used only for the same bytes of every units table the paper's claims rest on, the same claims registry and the same
readings file; otherwise the paper is judged again. One judgement runs at a time, and :func:`settle` waits for it.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor

import pandas as pd

from tomlib.claims._registry import Claim, claims_dir
from tomlib.paths import data_dir

_lock = threading.Lock()
_kept: dict[str, pd.DataFrame] = {}  # key -> one paper's verdicts, handed out once
_pool: ThreadPoolExecutor | None = None


def key(paper: str, claims: Iterable[Claim], digests: dict[str, str], robustness: bool) -> str:
    """What one paper's verdicts are a function of: the SHA-256 of every units table its claims rest on (``digests``,
    from :func:`tomlib.claims.read_units`; an absent table is named so), its claims registry, its readings file and
    whether robustness is judged."""
    h = hashlib.sha256(f"{paper}\0{robustness}\0".encode())
    for table in sorted({t for c in claims for t in c.tables}):
        h.update(f"{table}={digests.get(table, 'absent')}\0".encode())
    for path in (claims_dir() / f"{paper}.csv", data_dir() / "readings" / f"{paper}.csv"):
        h.update(hashlib.sha256(path.read_bytes()).digest() if path.exists() else b"absent")
    return h.hexdigest()


def keep(at: str, judged: pd.DataFrame) -> None:
    with _lock:
        _kept[at] = judged


def recall(at: str) -> pd.DataFrame | None:
    """The verdicts judged ahead under key ``at`` (handed out once), or None."""
    with _lock:
        return _kept.pop(at, None)


def submit(work: Callable[[], None]) -> Future[None]:
    """Run ``work`` on the one background thread, after what was submitted before."""
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tomlib-claims-ahead")
        return _pool.submit(work)


def settle() -> None:
    """Wait until nothing is being judged ahead: the one thread runs what it was given in order, so a no-op given now
    ends after all of it. A judgement that failed is dropped: the caller judges again, and meets the error itself."""
    with _lock:
        pool = _pool
    if pool is not None:
        pool.submit(lambda: None).result()


def forget() -> None:
    """Drop every judgement kept (tests)."""
    settle()
    with _lock:
        _kept.clear()
