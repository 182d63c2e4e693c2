"""A claims registry's conditions are parsed, never run: every registered condition selects the rows pandas' ``query``
selected, and any other form is refused (at load, naming the registry's line) before any of it is evaluated."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError

from tomlib.claims import load_claims, read_units, write_units
from tomlib.claims._query import QueryError, mask, parse
from tomlib.claims._registry import PAPERS, Claim, claims_dir
from tomlib.claims._verdict import ClaimDataError, groups
from tomlib.errors import ConfigFileError

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

FIELDS = ("select", "a", "b", "c", "d")


def literals(claims: list[Claim]) -> tuple[dict[str, list[object]], set[frozenset[str]]]:
    """The values each column is compared with in ``claims``' conditions, and the pairs of columns compared."""
    values: dict[str, list[object]] = {}
    pairs: set[frozenset[str]] = set()
    for c in claims:
        for text in filter(None, (getattr(c, f) for f in FIELDS)):
            for node in ast.walk(ast.parse(text, mode="eval")):
                if not isinstance(node, ast.Compare):
                    continue
                sides = [node.left, *node.comparators]
                for left, right in itertools.pairwise(sides):
                    names = [s.id for s in (left, right) if isinstance(s, ast.Name)]
                    if len(names) == 2:
                        pairs.add(frozenset(names))
                    for name in names:
                        other = right if isinstance(left, ast.Name) and left.id == name else left
                        got = ast.literal_eval(other) if not isinstance(other, ast.Name) else []
                        values.setdefault(name, []).extend(got if isinstance(got, list | tuple) else [got])
    return values, pairs


def synthetic_units(paper: str, units: str, claims: list[Claim], rows: int = 600, seed: int = 0) -> pd.DataFrame:
    """A units table with every column ``claims``' conditions name, each drawn from the values they compare it with
    (and one they do not), so that every condition picks some rows and leaves others."""
    rng = np.random.default_rng(seed)
    values, pairs = literals(claims)
    for pair in pairs:  # columns compared with each other draw from one pool, so that they are sometimes equal
        pool = [v for name in pair for v in values.get(name, [])] or list(range(1, 7))
        for name in pair:
            values[name] = pool
    frame = pd.DataFrame({"paper_id": paper, "table_id": units.split(";")[0].split(".", 1)[1]}, index=range(rows))
    for name, pool in values.items():
        if name in ("paper_id", "table_id"):
            frame[name] = [str(v) for v in rng.choice(np.array(pool, dtype=object), rows)]
            continue
        if all(isinstance(v, bool) for v in pool):
            other: object = not pool[0]  # a flag's other value (a number would make the column mixed)
        else:
            other = 99 if all(isinstance(v, int | float) for v in pool) else "other"
        frame[name] = rng.choice(np.array([*pool, other], dtype=object), rows)
    frame["metric"] = rng.choice(sorted({c.metric for c in claims}), rows)
    frame["value"] = rng.normal(size=rows)
    frame["source"] = "formal"
    return frame


def registry_tables() -> list[tuple[str, str, list[Claim]]]:
    out = []
    for paper in PAPERS:
        claims = load_claims(paper)
        for units in sorted({c.units for c in claims}):
            out.append((paper, units, [c for c in claims if c.units == units]))
    return out


@pytest.mark.parametrize(("paper", "units", "claims"), registry_tables(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_registered_condition_selects_what_pandas_query_selected(
    paper: str, units: str, claims: list[Claim], isolated: Path
) -> None:
    """Both on the frame as built (columns of mixed types: ``tom_order in [2, '2']``) and as read back from its CSV
    (the dtypes ``read_units`` gives a real units table)."""
    raw = synthetic_units(paper, units, claims)
    write_units(raw, isolated / "results")
    read = pd.concat(read_units(isolated / "results").values(), ignore_index=True)  # as units_for stacks them
    for frame in (raw, read):
        for c in claims:
            rows = frame[frame["metric"] == c.metric].reset_index(drop=True)
            picked = rows.query(c.select) if c.select else rows
            for field in FIELDS:
                text = getattr(c, field)
                if not text:
                    continue
                on = rows if field == "select" else picked
                want = on.query(text).index
                got = on[mask(text, on)].index
                assert got.equals(want), (c.claim_id, field, text)
                whole = frame[mask(text, frame)]
                assert 0 < len(whole) < len(frame), (c.claim_id, field, text, "picks all rows or none: no test")


def test_the_registered_forms_and_their_neighbours_select_what_pandas_query_selects() -> None:
    frame = pd.DataFrame(
        {
            "s": ["x", "y", "2", "", "x"],
            "t": ["x", "x", "y", "z", "y"],
            "o": [2, "2", 1, "1", None],
            "f": [1.0, 2.0, np.nan, -1.5, 3.0],
            "n": [1, 5, 3, 4, 2],
            "m": [2, 2, 3, 9, 1],
            "flag": [True, False, True, False, True],
        }
    )
    forms = [
        "s == 'x'",
        "'x' == s",
        "s != 'x'",
        "s in ['x', 'y']",
        "s not in ('x',)",
        "s == ['x', 'y']",
        "s != ['x', 'y']",
        "o in [2, '2']",
        "o == 2",
        "f > -1",
        "f != 2",
        "1 <= n < 5",
        "n >= m",
        "s == t",
        "flag == True",
        "s == None",
        "not s == 'x'",
        "not (s == 'x' or n > 3) and t != 'z'",
        "((s == 'x') or (t == 'y' and not n >= m))",
        "n in []",
    ]
    for text in forms:
        assert frame[mask(text, frame)].index.equals(frame.query(text).index), text


SENTINEL = "ran"

MALICIOUS = [
    "@pd.io.common.os.system('touch {dir}/ran') == 0",
    "tom_order == 2 and @pd.io.common.os.system('touch {dir}/ran') == 0",
    "__import__('os').system('touch {dir}/ran') == 0",
    "tom_order.__class__.__mro__ == 1",
    "tom_order == open('{dir}/ran', 'w').close()",
    "`tom_order` == 2",
    "tom_order == (lambda: __import__('os').system('touch {dir}/ran'))()",
    "tom_order[0] == 2",
    "tom_order == f'{{1}}'",
    "tom_order + 0 == 2",
    "(x := 2) == tom_order",
    "tom_order",
]


@pytest.mark.parametrize("text", MALICIOUS)
def test_a_condition_that_is_code_is_refused_without_running_anything(text: str, tmp_path: Path) -> None:
    text = text.format(dir=tmp_path)
    units = pd.DataFrame({"tom_order": [1, 2], "metric": "m", "value": [0.0, 1.0], "source": "formal"})
    with pytest.raises(QueryError) as refused:
        mask(text, units)
    assert "\n" not in str(refused.value) and "write a condition on the units table's columns" in str(refused.value)
    with pytest.raises(ValidationError):
        Claim(**{**CLAIM, "a": text})
    # a claim made without validation (model_copy) is refused when judged: one line naming the claim and the part
    claim = Claim(**CLAIM).model_copy(update={"a": text})
    with pytest.raises(ClaimDataError, match=r"^coalition.q: its a is refused: .+ write a condition") as judged:
        groups(claim, units)
    assert "\n" not in str(judged.value)
    assert not (tmp_path / SENTINEL).exists()


CLAIM = {
    "claim_id": "coalition.q",
    "statement": "s",
    "quote": "two words",
    "paper_file": "coalition-matching-iclr-draft.txt",
    "line": 1,
    "rests_on": "Table 1",
    "comparison": "c",
    "test": "mean_diff",
    "direction": "greater",
    "units": "coalition.table1",
    "metric": "m",
    "a": "tom_order == 2",
    "b": "tom_order == 1",
}


def test_a_registry_row_that_is_code_is_refused_at_load_naming_its_line(tmp_path: Path) -> None:
    rows = pd.read_csv(claims_dir() / "coalition.csv", dtype=str, keep_default_na=False)
    rows.loc[3, "b"] = f"round == 1 or @pd.io.common.os.system('touch {tmp_path}/ran') == 0"
    rows.to_csv(tmp_path / "coalition.csv", index=False)
    with pytest.raises(ConfigFileError) as refused:
        load_claims("coalition", tmp_path)
    msg = str(refused.value)
    assert msg.startswith(f"{tmp_path / 'coalition.csv'}:5 ({rows.loc[3, 'claim_id']}): b: "), msg
    assert "'@' reaches Python names outside the units table" in msg and "\n" not in msg
    assert not (tmp_path / SENTINEL).exists()


def test_a_condition_naming_a_column_the_units_lack_names_the_registry_line_and_the_closest_column(
    tmp_path: Path,
) -> None:
    rows = pd.read_csv(claims_dir() / "coalition.csv", dtype=str, keep_default_na=False)
    rows.loc[0, "a"] = "tom_ordr == 2"
    rows.to_csv(tmp_path / "coalition.csv", index=False)
    claim = load_claims("coalition", tmp_path)[0]
    units = pd.DataFrame({"tom_order": [1, 2], "round": 1, "metric": "ftm", "value": [0.0, 1.0], "source": "formal"})
    with pytest.raises(ClaimDataError) as refused:
        groups(claim, units)
    msg = str(refused.value)
    assert msg.startswith(f"{tmp_path / 'coalition.csv'}:2 (coalition.higher_tom_no_gain): its a `tom_ordr == 2` ")
    assert "names tom_ordr, which the units coalition.table1 lack (did you mean 'tom_order'?)" in msg
    assert "Fix the query in the registry" in msg and "\n" not in msg


def test_a_comparison_the_values_cannot_make_is_one_line() -> None:
    claim = Claim(**{**CLAIM, "a": "tom_order < 2"})
    units = pd.DataFrame({"tom_order": ["x", "y"], "metric": "m", "value": [0.0, 1.0], "source": "formal"})
    with pytest.raises(ClaimDataError, match=r"^coalition.q: its a `tom_order < 2` cannot be evaluated on the units"):
        groups(claim, units)


def test_parsing_is_kept_per_text() -> None:
    assert parse("n >= min_size") is parse("n >= min_size")
    assert parse("n >= min_size").columns == {"n", "min_size"}


@pytest.mark.parametrize("levels", [100, 990, 100_000])
def test_a_condition_nested_deeper_than_any_needs_is_refused_in_one_line(levels: int) -> None:
    with pytest.raises(QueryError, match=r"nests deeper than a condition needs|is not a condition"):
        mask("not " * levels + "n == 1", pd.DataFrame({"n": [1, 2]}))
    assert mask("not " * 99 + "n == 1", pd.DataFrame({"n": [1, 2]})).tolist() == [False, True]
