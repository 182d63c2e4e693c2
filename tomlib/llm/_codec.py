"""The response store's compact encoding: each request and response a zstd frame, with a dictionary per paper.

A stored request is mostly text every call of its paper repeats (system prompts, game rules, the JSON schema), so a
dictionary trained on a paper's calls shrinks a 2.4 KB request to about 240 bytes where plain zstd leaves 1 KB. The
dictionaries committed under ``data/dictionaries/`` were trained on the committed transcripts; ``tomlib cache compact
--train`` trains new ones on a store's own calls. Every dictionary a store has used is kept in the store (table
``dictionaries``, keyed by the id zstd writes into each frame), so a store reads back on any checkout. Rows written as
JSON text (stores from before this encoding) are read as they are; ``tomlib cache compact`` rewrites them.
"""

from __future__ import annotations

import functools
import logging
import threading
import warnings
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path

import zstandard

from tomlib.paths import data_dir

log = logging.getLogger("tomlib.llm")

LEVEL = 6
"""zstd level for stored values: above 6 the store gains under 3% and writes slower (benchmarks/bench_store.py)."""
DICT_BYTES = 16_384
"""Dictionary size: a 64 KB dictionary gains under 5% on our calls and costs four times the memory."""
MIN_SAMPLES = 64
"""Fewest stored values a dictionary is trained on (fewer give one that fits those calls and little else)."""
MAX_SAMPLES = 2_000
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def paper_of(experiment: str) -> str:
    """The paper an experiment belongs to (``adaptive_tom.table1`` -> ``adaptive_tom``): one dictionary each."""
    return experiment.split(".", 1)[0]


def shipped_dictionaries() -> dict[str, bytes]:
    """The committed dictionaries, by paper (``data/dictionaries/<paper>.zdict``), read once per process."""
    return dict(_shipped(data_dir() / "dictionaries"))


def with_committed(stored: Mapping[int, bytes]) -> dict[int, bytes]:
    """Every dictionary a store's rows may name: the committed ones, and the store's own (which win)."""
    return {**{dictionary_id(d): d for d in shipped_dictionaries().values()}, **stored}


@functools.cache
def _shipped(folder: Path) -> tuple[tuple[str, bytes], ...]:
    return tuple((p.stem, p.read_bytes()) for p in sorted(folder.glob("*.zdict"))) if folder.is_dir() else ()


def dictionary_id(data: bytes) -> int:
    """The id zstd writes into every frame compressed with this dictionary."""
    return zstandard.ZstdCompressionDict(data).dict_id()


def train(samples: Iterable[bytes], size: int = DICT_BYTES) -> bytes | None:
    """A dictionary trained on these values (zstd's COVER trainer), or None when they are too few or too alike
    to train one."""
    chosen = [s for s in samples if s][:MAX_SAMPLES]
    if len(chosen) < MIN_SAMPLES:
        return None
    try:
        return zstandard.train_dictionary(size, chosen, level=LEVEL).as_bytes()
    except zstandard.ZstdError as exc:  # e.g. every sample the same few bytes
        log.info("no dictionary trained on %d samples: %s", len(chosen), exc)
        return None


class Codec:
    """Encodes values for the store and decodes any value it holds.

    ``dictionaries`` maps a dictionary id to its bytes (every dictionary the store holds); ``preferred`` maps a
    paper to the id its new values are compressed with (papers without one get plain zstd)."""

    def __init__(self, dictionaries: Mapping[int, bytes], preferred: Mapping[str, int]) -> None:
        self._dicts = dict(dictionaries)
        self._mine = threading.local()  # zstd's (de)compressors must not be shared between threads
        self.preferred = dict(preferred)

    def knows(self, dict_id: int) -> bool:
        return dict_id == 0 or dict_id in self._dicts

    def dictionary(self, dict_id: int) -> bytes:
        """The bytes of dictionary ``dict_id``."""
        return self._dicts[dict_id]

    def _caches(self) -> tuple[dict[str, zstandard.ZstdCompressor], dict[int, zstandard.ZstdDecompressor]]:
        mine = self._mine
        if not hasattr(mine, "enc"):
            mine.enc, mine.dec = {}, {}
        return mine.enc, mine.dec

    def _dict(self, dict_id: int | None) -> zstandard.ZstdCompressionDict | None:
        data = self._dicts.get(dict_id) if dict_id else None
        return zstandard.ZstdCompressionDict(data) if data is not None else None

    def encode(self, paper: str, text: str) -> bytes:
        """``text`` (canonical JSON) as one zstd frame, with the paper's preferred dictionary when there is one."""
        encoders, _ = self._caches()
        enc = encoders.get(paper)
        if enc is None:
            d = self._dict(self.preferred.get(paper))
            enc = encoders[paper] = (
                zstandard.ZstdCompressor(level=LEVEL, dict_data=d) if d else zstandard.ZstdCompressor(level=LEVEL)
            )
        return enc.compress(text.encode("utf-8"))

    def decode(self, value: str | bytes) -> str:
        """The JSON text of a stored value: a zstd frame decompressed, or a row stored as text returned as is.
        Raises KeyError naming the dictionary id when the frame needs a dictionary this codec lacks."""
        if isinstance(value, str):
            return value
        if not value.startswith(ZSTD_MAGIC):
            return bytes(value).decode("utf-8")  # JSON stored as a blob by some other writer
        dict_id = zstandard.get_frame_parameters(value).dict_id
        _, decoders = self._caches()
        dec = decoders.get(dict_id)
        if dec is None:
            if not self.knows(dict_id):
                raise KeyError(dict_id)
            d = self._dict(dict_id)
            dec = decoders[dict_id] = (
                zstandard.ZstdDecompressor(dict_data=d) if d is not None else zstandard.ZstdDecompressor()
            )
        return dec.decompress(value).decode("utf-8")


def dict_id_of(value: str | bytes) -> int | None:
    """The dictionary id of a stored value (0: plain zstd), None for a value stored as text."""
    if isinstance(value, str) or not value.startswith(ZSTD_MAGIC):
        return None
    return zstandard.get_frame_parameters(value).dict_id


def train_committed(transcripts: Path, out: Path) -> dict[str, int]:
    """Train one dictionary per paper on the committed transcripts (their requests and responses as the store
    writes them) and write ``<out>/<paper>.zdict``; returns each paper's number of samples. A dictionary once
    committed should stay: stores keep their own copy, but a new one only helps rows written after it."""
    import gzip
    import json

    from tomlib.llm._request import canonical_json

    samples: dict[str, list[bytes]] = {}
    skipped: list[str] = []
    for path in sorted(transcripts.glob("*.jsonl.gz")):
        lineno = 0
        try:
            with gzip.open(path, "rb") as fh:
                for lineno, line in enumerate(fh, 1):
                    if not line.strip():
                        continue
                    try:
                        rec = json.loads(line)
                        paper = paper_of(rec["request"]["sample_key"]["experiment"])
                        values = [canonical_json(v).encode("utf-8") for v in (rec["request"], rec["response"])]
                    except (ValueError, KeyError, TypeError, AttributeError) as exc:  # this line only
                        skipped.append(f"{path}:{lineno} ({type(exc).__name__})")
                        continue
                    samples.setdefault(paper, []).extend(values)
        except (OSError, EOFError, zlib.error) as exc:  # cut short or corrupted: the lines before it count
            skipped.append(f"{path}:{lineno + 1} and after ({type(exc).__name__})")
    if skipped:
        more = "; ..." if len(skipped) > 5 else ""
        warnings.warn(
            f"{len(skipped)} transcript line(s) that cannot be read were left out of the dictionaries: "
            f"{'; '.join(skipped[:5])}{more}",
            stacklevel=2,
        )
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for paper, values in sorted(samples.items()):
        step = max(1, len(values) // MAX_SAMPLES)  # spread over the whole transcript, not its first calls
        data = train(values[::step])
        if data is not None:
            (out / f"{paper}.zdict").write_bytes(data)
            written[paper] = len(values[::step])
    return written
