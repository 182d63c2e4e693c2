"""Palette PNGs for executed notebooks (issue 35): smaller, same picture size, and nothing else touched."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import nbformat
import numpy as np
from PIL import Image

from tomlib.images import shrink_notebook_images, small_png

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def _plot_png() -> bytes:
    rng = np.random.default_rng(1)
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.scatter(rng.normal(size=2000), rng.normal(size=2000), alpha=0.3, s=8)
    ax.plot(np.linspace(-3, 3, 50), np.sin(np.linspace(-3, 3, 50)), "r-")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    return buf.getvalue()


def test_a_plot_with_a_palette_is_smaller_and_the_same_picture() -> None:
    raw = _plot_png()
    small = small_png(raw)
    before, after = Image.open(io.BytesIO(raw)), Image.open(io.BytesIO(small))
    assert len(small) < 0.6 * len(raw) and after.mode == "P" and after.size == before.size
    # a palette with transparency is read through RGBA (Pillow warns on a palette straight to RGB)
    diff = np.abs(np.asarray(before.convert("RGBA"), int) - np.asarray(after.convert("RGBA"), int))[..., :3]
    assert diff.mean() < 2.0  # the same picture: on average under 2 of 255 per channel
    assert small_png(small) == small  # a palette is left alone
    assert small_png(b"not a png") == b"not a png"


def test_an_executed_notebook_keeps_everything_but_its_plots_bytes(tmp_path: Path) -> None:
    raw = _plot_png()
    nb = nbformat.v4.new_notebook()
    png = {"image/png": base64.b64encode(raw).decode(), "text/plain": "<Figure>"}
    nb.cells = [
        nbformat.v4.new_code_cell("plot()", outputs=[nbformat.v4.new_output("display_data", data=png)]),
        nbformat.v4.new_markdown_cell("text"),
    ]
    state = {"m": {"model_name": "OutputModel", "state": {"outputs": [{"output_type": "display_data", "data": png}]}}}
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": state, "version_major": 2}}
    path = tmp_path / "run.ipynb"
    nbformat.write(nb, path)
    assert shrink_notebook_images(path) > 0
    got = nbformat.read(path, as_version=4)
    for data in (
        got.cells[0].outputs[0].data,
        got.metadata.widgets["application/vnd.jupyter.widget-state+json"]["state"]["m"]["state"]["outputs"][0]["data"],
    ):
        assert len(data["image/png"]) < 0.6 * len(png["image/png"]) and data["text/plain"] == "<Figure>"
    assert got.cells[1].source == "text" and shrink_notebook_images(path) == 0  # a second pass changes nothing


def test_a_grey_png_is_read_not_refused() -> None:
    """A mode without a colour palette method of its own (grey) is converted first; it used to raise in the runner."""
    buf = io.BytesIO()
    Image.linear_gradient("L").resize((300, 300)).save(buf, format="PNG")
    out = small_png(buf.getvalue())
    assert Image.open(io.BytesIO(out)).size == (300, 300)
