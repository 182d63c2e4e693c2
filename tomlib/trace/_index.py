"""An episode index of a run log, so readers parse only the episodes they show.

For every ``(condition, episode)`` the index keeps the byte offset and length of each of its lines in
``events.jsonl`` and the per-episode facts a summary needs (the last ``score`` payload, the first ``env_state``'s
``agents`` and ``game``, the agents that acted, the last step). :class:`tomlib.trace.RunLog` builds it while it
writes and saves it as ``events.index.json`` when it closes. A reader trusts the saved index for the bytes it covers
(``size``) and scans only the rest of the file, so a live run, a killed run and an old log without an index all
load correctly, just more slowly.

A finished run's log can be compressed (:func:`compress_log`, which the runner does after each notebook): it
becomes ``events.jsonl.gz``, a series of gzip members of whole lines whose places the index keeps, so a reader still
decompresses only the members that hold the episodes it shows. Anything that opens a run log must go through
:func:`log_in` / :func:`open_log`, never the literal ``events.jsonl``: the log may be the compressed one.
"""

from __future__ import annotations

import bisect
import gzip
import itertools
import json
import shlex
import shutil
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson

from tomlib.errors import TomlibError

LOG_NAME = "events.jsonl"
GZ_NAME = "events.jsonl.gz"
INDEX_NAME = "events.index.json"
BLOCK_BYTES = 1 << 18  # plain bytes per gzip member of a compressed log: an episode's read decompresses a few
INDEX_VERSION = 2  # 2: each episode's offsets as differences (1: absolute); both are read
SUMMARY_KINDS = ("score", "env_state", "run_start")


STREAM_ERRORS = (OSError, EOFError, zlib.error)  # what a cut or corrupted gzip file raises while it is read


class DamagedLog(TomlibError):
    """A run log that cannot be read to its end (a compressed log cut short or corrupted)."""


def damaged_log(path: Path, exc: BaseException) -> DamagedLog:
    """The error for a run log that cannot be read past some point: names the file and the fix."""
    return DamagedLog(
        f"The run log {path} is damaged ({type(exc).__name__}: {exc}), so what follows that point cannot be read. "
        f"If nothing needs that run, remove its folder {path.parent} (`.venv/bin/tomlib runs prune` removes it "
        "once no executed notebook uses it); else rerun the notebook that wrote it."
    )


def compressed_twice(path: Path) -> DamagedLog:
    """The error for a compressed log whose content is itself gzip (compressed once more after tomlib compressed
    it, e.g. by a backup or a hand-run ``gzip``): names the file and the command that undoes one compression."""
    p = shlex.quote(str(path))
    return DamagedLog(
        f"The run log {path} is gzip-compressed twice, so its lines cannot be read. Undo one compression: "
        f"`gunzip -c {p} > {p}.once && mv {p}.once {p}`."
    )


def _is_compressed_twice(path: Path) -> bool:
    try:
        with gzip.open(path, "rb") as fh:
            return fh.read(2) == b"\x1f\x8b"
    except STREAM_ERRORS:
        return False


def parse_line(line: bytes) -> dict[str, Any] | None:
    """One log line as an event, or None when it is not one (e.g. cut by a kill). orjson first; json for what only
    it reads (NaN in logs written before orjson)."""
    try:
        ev = orjson.loads(line)
    except orjson.JSONDecodeError:
        try:
            ev = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None
    return ev if isinstance(ev, dict) else None


@dataclass
class EpisodeIndex:
    condition: str
    episode: int
    offsets: list[int] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    score: dict[str, Any] | None = None
    state_agents: list[str] | None = None
    game: str | None = None
    acted: list[str] = field(default_factory=list)
    last_step: int | None = None


@dataclass
class RunIndex:
    """Where each episode's lines are, and what the run's summary needs; ``size`` is the bytes it covers."""

    run_id: str = ""
    experiment: str = ""
    run_start: dict[str, Any] | None = None
    size: int = 0
    skipped: list[int] = field(default_factory=list)  # offsets of unreadable lines
    events: int = 0
    episodes: dict[tuple[str, int], EpisodeIndex] = field(default_factory=dict)
    # for a compressed log: (offset in the plain log, offset in the .gz file, compressed length) of each gzip member
    blocks: list[tuple[int, int, int]] = field(default_factory=list)

    def add(self, offset: int, length: int, ev: dict[str, Any]) -> None:
        """Index one event written at ``offset`` (``length`` bytes without its newline)."""
        if not self.run_id:
            self.run_id, self.experiment = str(ev.get("run_id", "")), str(ev.get("experiment", ""))
        self.add_fields(
            offset,
            length,
            ev.get("kind"),
            ev.get("condition") or "",
            ev.get("episode"),
            ev.get("step"),
            ev.get("agent"),
            ev.get("payload"),
        )

    def add_fields(
        self,
        offset: int,
        length: int,
        kind: str | None,
        condition: str,
        episode: int | None,
        step: int | None,
        agent: str | None,
        payload: dict[str, Any] | None,
    ) -> None:
        """:meth:`add` from the event's fields (the writer's fast path: no dict to look into)."""
        self.events += 1
        if episode is None:
            if kind == "run_start" and self.run_start is None:
                self.run_start = payload or {}
            return
        key = (condition, episode)
        ep = self.episodes.get(key)
        if ep is None:
            ep = self.episodes[key] = EpisodeIndex(condition, int(episode))
        ep.offsets.append(offset)
        ep.lengths.append(length)
        if step is not None and (ep.last_step is None or step > ep.last_step):
            ep.last_step = int(step)
        if agent and agent not in ep.acted:
            ep.acted.append(agent)
        if kind == "score":
            ep.score = payload or {}
        elif kind == "env_state" and ep.game is None:
            p = payload or {}
            ep.game = str(p.get("game", "")) if "levels" not in p else "city"
            ep.state_agents = [str(a) for a in p["agents"]] if p.get("agents") else None

    def wants_state(self, condition: str, episode: int | None) -> bool:
        """Whether an ``env_state`` event would be its episode's first (the only one the index keeps)."""
        ep = self.episodes.get((condition or "", episode))  # type: ignore[arg-type]
        return ep is None or ep.game is None

    def scan(self, path: Path, start: int = 0) -> None:
        """Index the lines of ``path`` from byte ``start`` (a line boundary, in the plain log) to its end."""
        try:
            with open_log(path) as fh:
                fh.seek(start)
                offset = start
                for raw in fh:
                    line = raw.rstrip(b"\n")
                    if line:
                        ev = parse_line(line)
                        if ev is None:
                            self.skipped.append(offset)
                        else:
                            self.add(offset, len(line), ev)
                    offset += len(raw)
        except STREAM_ERRORS as exc:
            raise damaged_log(path, exc) from None
        self.size = offset

    # -- saving and loading --------------------------------------------------------------------------------------
    def to_json(self) -> bytes:
        eps = [
            [
                e.condition,
                e.episode,
                _deltas(e.offsets),
                e.lengths,
                e.score,
                e.state_agents,
                e.game,
                e.acted,
                e.last_step,
            ]
            for e in self.episodes.values()
        ]
        doc = {
            "version": INDEX_VERSION,
            "run_id": self.run_id,
            "experiment": self.experiment,
            "run_start": self.run_start,
            "size": self.size,
            "skipped": self.skipped,
            "events": self.events,
            "episodes": eps,
            "blocks": self.blocks,
        }
        return orjson.dumps(doc, default=str, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY)

    @classmethod
    def from_json(cls, data: bytes) -> RunIndex:
        doc = index_doc(data)
        version = doc.get("version")
        if version not in (1, INDEX_VERSION):
            raise ValueError("index version")
        idx = cls(
            doc["run_id"], doc["experiment"], doc["run_start"], int(doc["size"]), list(doc["skipped"]), doc["events"]
        )
        for cond, ep, offs, lens, score, agents, game, acted, last in doc["episodes"]:
            offsets = list(itertools.accumulate(offs)) if version == INDEX_VERSION else offs
            idx.episodes[(cond, ep)] = EpisodeIndex(cond, ep, offsets, lens, score, agents, game, acted, last)
        idx.blocks = [tuple(b) for b in doc.get("blocks", [])]  # type: ignore[misc]
        return idx

    def save(self, log_path: Path) -> None:
        """Write the index beside ``log_path``: plain JSON beside a plain log (a rerun extends it), gzip-compressed
        beside a compressed one (offsets as differences compress about 8x)."""
        tmp = log_path.with_name(INDEX_NAME + ".tmp")
        data = self.to_json()
        tmp.write_bytes(gzip.compress(data, compresslevel=6, mtime=0) if log_path.suffix == ".gz" else data)
        tmp.replace(log_path.with_name(INDEX_NAME))


def _deltas(offsets: list[int]) -> list[int]:
    return [b - a for a, b in zip([0, *offsets], offsets, strict=False)]


def index_doc(data: bytes) -> dict[str, Any]:
    """A saved index's JSON document, from plain or gzip-compressed bytes."""
    doc = orjson.loads(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)
    if not isinstance(doc, dict):
        raise ValueError("not an index")
    return doc


def open_log(path: Path) -> IO[bytes]:
    """A run log for reading, plain or compressed (``events.jsonl.gz``)."""
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


def log_in(folder: Path) -> Path | None:
    """The run log in a run folder: the plain one while it is written (or after a rerun reopened it), else the
    compressed one."""
    for name in (LOG_NAME, GZ_NAME):
        if (folder / name).exists():
            return folder / name
    return None


def read_index(log_path: Path, *, warn: bool = True) -> RunIndex:
    """The index of one run log: the saved one for the bytes it covers, extended by a scan of the rest. A
    compressed log is complete (it is compressed only once its index is saved); one cut short or corrupted since,
    or compressed twice, raises :class:`DamagedLog`. ``warn``: lines that cannot be read (a run killed mid-write)
    are warned about, naming file and line (a reader's; the writer extending its own log does not)."""
    idx = _read_index(log_path)
    if warn and idx.skipped:
        warn_skipped(log_path, idx.skipped)
    return idx


def warn_skipped(log_path: Path, offsets: list[int]) -> None:
    """Warn that the lines at ``offsets`` (in the plain log) were skipped, naming the first few as file:line."""
    first = sorted(offsets)[:3]
    try:
        lines = _line_numbers(log_path, first)
    except STREAM_ERRORS:
        lines = {}
    where = ", ".join(f"{log_path}:{lines[o]}" if o in lines else f"{log_path} at byte {o}" for o in first)
    more = ", ..." if len(offsets) > len(first) else ""
    warnings.warn(
        f"skipped {len(offsets)} unreadable log line(s) (a run killed mid-write, or a damaged log): {where}{more}",
        stacklevel=3,
    )


def _line_numbers(log_path: Path, offsets: list[int]) -> dict[int, int]:
    """The 1-based line number at each of ``offsets`` (line starts in the plain log), counted from the start."""
    want, out = sorted(set(offsets)), {}
    with open_log(log_path) as fh:
        pos = 0
        for number, raw in enumerate(fh, 1):
            if pos in want:
                out[pos] = number
                if len(out) == len(want):
                    break
            pos += len(raw)
    return out


def _read_index(log_path: Path) -> RunIndex:
    saved = log_path.with_name(INDEX_NAME)
    idx = None
    if saved.exists():
        try:
            idx = RunIndex.from_json(saved.read_bytes())
        except (ValueError, KeyError, TypeError, orjson.JSONDecodeError, OSError, EOFError, zlib.error):
            idx = None
    if log_path.suffix == ".gz":
        if idx is None or not idx.blocks:
            if _is_compressed_twice(log_path):
                raise compressed_twice(log_path)
            idx = RunIndex()
            idx.scan(log_path)
        elif (end := idx.blocks[-1][1] + idx.blocks[-1][2]) > (size := log_path.stat().st_size):
            # cut short after it was compressed: its last members are gone, and reading them would fail later
            if _is_compressed_twice(log_path):
                raise compressed_twice(log_path)
            raise damaged_log(log_path, EOFError(f"{size} bytes where its index expects {end}"))
        return idx
    size = log_path.stat().st_size
    if idx is not None and (idx.size > size or idx.blocks):  # the log was replaced or truncated
        idx = None
    if idx is None:
        idx = RunIndex()
    if idx.size < size:
        idx.scan(log_path, idx.size)
    return idx


def read_lines(
    log_path: Path, offsets: list[int], lengths: list[int], blocks: list[tuple[int, int, int]] | None = None
) -> list[dict[str, Any]]:
    """The events at the given offsets (in order, offsets in the plain log), parsed. For a compressed log only the
    gzip members holding them are decompressed (``blocks`` from its index, read from disk when not given); a member
    that cannot be decompressed raises :class:`DamagedLog`."""
    if log_path.suffix != ".gz":
        out = []
        with open(log_path, "rb") as fh:
            for off, n in zip(offsets, lengths, strict=True):
                fh.seek(off)
                ev = parse_line(fh.read(n))
                if ev is not None:
                    out.append(ev)
        return out
    if blocks is None:
        blocks = read_index(log_path, warn=False).blocks
    if not blocks:  # compressed without tomlib's index (by hand, or the index was lost): read the stream
        return _read_stream(log_path, offsets, lengths)
    starts = [b[0] for b in blocks]
    plain: dict[int, bytes] = {}
    out = []
    with open(log_path, "rb") as fh:
        for off, n in zip(offsets, lengths, strict=True):
            i = bisect.bisect_right(starts, off) - 1
            if i not in plain:
                fh.seek(blocks[i][1])
                try:
                    plain[i] = zlib.decompress(fh.read(blocks[i][2]), wbits=31)
                except zlib.error as exc:  # a corrupted or missing member
                    if _is_compressed_twice(log_path):
                        raise compressed_twice(log_path) from None
                    raise damaged_log(log_path, exc) from None
            ev = parse_line(plain[i][off - starts[i] : off - starts[i] + n])
            if ev is not None:
                out.append(ev)
    return out


def _read_stream(log_path: Path, offsets: list[int], lengths: list[int]) -> list[dict[str, Any]]:
    """:func:`read_lines` of a compressed log without member places: decompressed as one stream, read in the
    order of the offsets (a seek back would decompress from the start again), returned in the order asked."""
    got: dict[int, dict[str, Any] | None] = {}
    try:
        with gzip.open(log_path, "rb") as fh:
            for i in sorted(range(len(offsets)), key=offsets.__getitem__):
                fh.seek(offsets[i])
                got[i] = parse_line(fh.read(lengths[i]))
    except STREAM_ERRORS as exc:
        raise damaged_log(log_path, exc) from None
    return [ev for i in range(len(offsets)) if (ev := got[i]) is not None]


def compress_log(log_path: Path, block_bytes: int = BLOCK_BYTES) -> Path:
    """Replace a finished run's ``events.jsonl`` by ``events.jsonl.gz``: gzip members of whole lines, each about
    ``block_bytes`` of plain text, whose places the index records so an episode is read by decompressing only its
    members. Any gzip reader reads the file whole. Returns the compressed path."""
    idx = read_index(log_path, warn=False)
    data = log_path.read_bytes()
    gz = log_path.with_name(GZ_NAME)
    blocks: list[tuple[int, int, int]] = []
    tmp = gz.with_name(GZ_NAME + ".tmp")
    with open(tmp, "wb") as out:
        start = 0
        while start < len(data):
            end = data.rfind(b"\n", start, start + block_bytes) + 1 or data.find(b"\n", start + block_bytes) + 1
            end = end if end > start else len(data)
            member = gzip.compress(data[start:end], mtime=0)
            blocks.append((start, out.tell(), len(member)))
            out.write(member)
            start = end
    idx.size, idx.blocks = len(data), blocks
    tmp.replace(gz)
    idx.save(gz)
    log_path.unlink()
    return gz


def decompress_log(gz_path: Path) -> Path:
    """The plain log back from a compressed one (a rerun with the same run id appends to it)."""
    plain = gz_path.with_name(LOG_NAME)
    if _is_compressed_twice(gz_path):
        raise compressed_twice(gz_path)
    try:
        with gzip.open(gz_path, "rb") as src, open(plain, "wb") as dst:
            shutil.copyfileobj(src, dst)
    except STREAM_ERRORS as exc:
        plain.unlink(missing_ok=True)  # the compressed log stays as it was
        raise damaged_log(gz_path, exc) from None
    idx = read_index(gz_path, warn=False)
    idx.blocks = []
    idx.save(plain)
    gz_path.unlink()
    return plain
