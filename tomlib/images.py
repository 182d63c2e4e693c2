"""Smaller PNGs: the plots an executed notebook keeps twice (in the ``.ipynb`` and again in its exported page), and
the saved figures.

A plot's anti-aliased lines and translucent points need far fewer than the millions of colours a full-colour PNG
can hold: a palette of 256 (64 for the explorer's strip of thousands of points) draws the same picture at a third
to a quarter of the bytes. The figures under ``results/figures`` are written the same way (:func:`save_png`).
"""

from __future__ import annotations

import base64
import binascii
import io
from pathlib import Path
from typing import Any

from tomlib.paths import write_atomic

PNG_COLORS = 256
"""Palette of a notebook's inline plots once executed (the explorer's summary strip uses 64)."""


def small_png(data: bytes, colors: int = PNG_COLORS) -> bytes:
    """``data`` (a PNG) with a palette of ``colors``, or ``data`` itself when that is not smaller or not a PNG."""
    from PIL import Image, UnidentifiedImageError

    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except (UnidentifiedImageError, OSError, ValueError):
        return data
    if image.mode == "P":
        return data  # already a palette
    base = image if image.mode in ("RGB", "RGBA") else image.convert("RGBA")
    method = Image.Quantize.FASTOCTREE if base.mode == "RGBA" else Image.Quantize.MEDIANCUT  # MEDIANCUT is RGB only
    out = io.BytesIO()
    base.quantize(colors, method=method).save(out, format="PNG", optimize=True)
    return out.getvalue() if out.tell() < len(data) else data


def save_png(fig: Any, path: Path, **savefig: Any) -> None:
    """``fig`` written to ``path`` as a palette PNG (:func:`small_png`); ``savefig``: matplotlib's options."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", **savefig)
    write_atomic(path, small_png(buf.getvalue()))


def _shrink_outputs(outputs: list[Any]) -> int:
    saved = 0
    for output in outputs:
        data = output.get("data", {}) if isinstance(output, dict) else {}
        encoded = data.get("image/png")
        if not isinstance(encoded, str):
            continue
        try:
            raw = base64.b64decode(encoded)
        except (binascii.Error, ValueError):
            continue
        small = small_png(raw)
        if len(small) < len(raw):
            data["image/png"] = base64.b64encode(small).decode("ascii")
            saved += len(encoded) - len(data["image/png"])
    return saved


def shrink_notebook_images(path: Path) -> int:
    """Rewrite the inline PNGs of an executed notebook (cell outputs and Output widgets' saved state) with a
    palette (:func:`small_png`); returns the bytes saved. The notebook is otherwise written back as it was read."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    saved = sum(_shrink_outputs(cell.get("outputs", [])) for cell in nb.cells)
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    for model in state.values():
        saved += _shrink_outputs(model.get("state", {}).get("outputs", []) or [])
    if saved:
        nbformat.write(nb, path)
    return saved
