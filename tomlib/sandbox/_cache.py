"""A cache of check outcomes, so re-running a notebook does not re-run code it already judged.

A check's outcome depends only on the program, the tests, the limits and the isolation it ran under (code that
reaches the network passes only without it), so they (with the harness version) are the key. Only ``passed`` and
``failed`` outcomes are kept: a timeout can depend on the machine's load, and an ``error`` is the sandbox's own
failure, so both are checked again next time.

A cached ``passed`` is a verdict no check ran, so the cache lives where only this user can write (the response
store's folder, :func:`tomlib.paths.private_dir`) in a file of this user's alone; one another user owns or could have
written is refused (check keys can be predicted from a task's code, so a planted row would be found).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tomlib.paths import private_file, store_path
from tomlib.sandbox._run import CheckResult, Limits, check_many, isolation_available

HARNESS_VERSION = "4"  # 4: the verdict out of the program's reach (a pass forged under 3 must not be reused)


def default_cache_path() -> Path:
    """Beside the response store (``TOMLIB_STORE``'s folder, else ``.tomlib/``)."""
    return store_path().parent / "sandbox-checks.sqlite"


def check_key(program: str, tests: str, limits: Limits, isolation: Sequence[str] = ()) -> str:
    blob = json.dumps([HARNESS_VERSION, program, tests, dataclasses.asdict(limits), list(isolation)], sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


class CheckCache:
    """``cache.check_many(items)``: like :func:`check_many`, answering repeats from ``path``."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else default_cache_path()
        private_file(self.path, instead="set TOMLIB_STORE to a file in a folder of yours (the cache lives beside it)")
        with self._db() as db:
            db.execute("CREATE TABLE IF NOT EXISTS checks (key TEXT PRIMARY KEY, result TEXT NOT NULL)")
        self.hits = 0

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        """A connection that commits and closes on leaving the block (sqlite3's own ``with`` only commits)."""
        db = sqlite3.connect(self.path, timeout=30)
        try:
            with db:
                yield db
        finally:
            db.close()

    def check_many(
        self,
        items: Iterable[tuple[str, str]],
        *,
        limits: Limits | None = None,
        workers: int | None = None,
        progress: Callable[[CheckResult], None] | None = None,
    ) -> list[CheckResult]:
        lim = limits or Limits()
        jobs: Sequence[tuple[str, str]] = list(items)
        isolation = isolation_available() if jobs else ()
        keys = [check_key(p, t, lim, isolation) for p, t in jobs]
        with self._db() as db:
            known: dict[str, CheckResult] = {}
            for i in range(0, len(keys), 500):
                chunk = keys[i : i + 500]
                marks = ",".join("?" * len(chunk))
                for key, result in db.execute(f"SELECT key, result FROM checks WHERE key IN ({marks})", chunk):
                    known[key] = CheckResult(**json.loads(result))
        todo = [i for i, k in enumerate(keys) if k not in known]
        self.hits += len(jobs) - len(todo)
        if progress is not None:  # an answered item is done too: a bar over every item must reach its total
            for k in keys:
                if k in known:
                    progress(known[k])
        fresh = check_many([jobs[i] for i in todo], limits=lim, workers=workers, progress=progress)
        with self._db() as db:
            for i, res in zip(todo, fresh, strict=True):
                known[keys[i]] = res
                if res.status in ("passed", "failed"):
                    db.execute(
                        "INSERT OR REPLACE INTO checks VALUES (?, ?)", (keys[i], json.dumps(dataclasses.asdict(res)))
                    )
        return [known[k] for k in keys]
