"""Every experiment notebook ends with the claims it bears on, naming units tables the registries use."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from tomlib.claims import PAPERS, load_claims

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def test_each_experiment_notebook_ends_with_its_claims() -> None:
    used = {t for p in PAPERS for c in load_claims(p) for t in c.tables}
    books = sorted(p for p in NOTEBOOKS.glob("[01][0-9]_*.ipynb") if not p.name.startswith("00_"))
    assert len(books) == 15
    for book in books:
        code = [c for c in json.loads(book.read_text())["cells"] if c["cell_type"] == "code"]
        last = "".join(code[-1]["source"])
        call = next(n for n in ast.walk(ast.parse(last)) if isinstance(n, ast.Call))
        assert getattr(call.func, "id", "") == "claims_on", book.name
        tables = ast.literal_eval(call.args[0])
        assert set(tables) & used, (book.name, tables)  # at least one table it writes has a claim resting on it


def test_every_notebook_is_valid_with_cell_ids() -> None:
    # a cell without an id makes nbformat warn on every run (and it will be an error in a later nbformat)
    import warnings

    import nbformat

    for book in sorted(NOTEBOOKS.glob("*.ipynb")):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            nbformat.validate(nbformat.read(book, as_version=4))
