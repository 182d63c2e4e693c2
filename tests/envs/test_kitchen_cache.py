"""The exact kitchen model's disk cache: read on the next call, rebuilt when unreadable, skipped when unwritable."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests._other_users import ATTACKER
from tomlib.envs import _kitchen

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

GRID = ("XXPXX", "O1 2D", "XXSXX")  # three floor cells: the onions left, the dishes right, pot above, window below
START = (0, 0, 0, 2, 0, 0, 0)  # both cooks at the ends, facing up, empty-handed; an empty pot
COOK_TIME = 2
SOLVE = _kitchen.solve  # the real one, for the expected answers


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A cache folder of this test's own, and no kitchen solved in this process before or after it."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("TOMLIB_CACHE", str(folder))
    _kitchen._solved.cache_clear()
    _kitchen.solo_steps.cache_clear()
    yield folder
    _kitchen._solved.cache_clear()
    _kitchen.solo_steps.cache_clear()


def _counting_solve(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []

    def solve(kitchen: _kitchen.Kitchen) -> tuple[dict, np.ndarray, np.ndarray]:  # type: ignore[type-arg]
        calls.append(1)
        return SOLVE(kitchen)

    monkeypatch.setattr(_kitchen, "solve", solve)
    return calls


def _fresh() -> tuple[dict, np.ndarray, np.ndarray]:  # type: ignore[type-arg]
    return SOLVE(_kitchen.Kitchen(GRID, START, COOK_TIME))


def _same(got: tuple, want: tuple) -> None:  # type: ignore[type-arg]
    index, nxt, value = want
    assert list(got[1].items()) == list(index.items())  # the same states in the same order
    assert np.array_equal(got[2], nxt) and np.array_equal(got[3], value)


def test_a_solved_kitchen_is_read_from_disk_on_the_next_call(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting_solve(monkeypatch)
    first = _kitchen._solved(GRID, START, COOK_TIME)
    assert calls == [1] and len(list(cache.glob("kitchen-*.npz"))) == 1
    assert not list(cache.glob("*.tmp"))  # written through a temporary file, renamed into place
    _kitchen._solved.cache_clear()
    second = _kitchen._solved(GRID, START, COOK_TIME)
    assert calls == [1]  # read, not solved
    want = _fresh()
    _same(first, want)
    _same(second, want)
    assert int(second[3][0]) < _kitchen.UNREACHABLE  # the start can deliver
    solo = _kitchen._solo(want[1])
    got = _kitchen.solo_steps(GRID, START, COOK_TIME)
    assert all(np.array_equal(a, b) for a, b in zip(got, solo, strict=True))


@pytest.mark.parametrize("damage", ["truncated", "not an npz", "another kitchen"])
def test_an_unreadable_cache_file_is_ignored_and_rebuilt(
    cache: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    _kitchen._solved(GRID, START, COOK_TIME)
    (path,) = cache.glob("kitchen-*.npz")
    whole = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(whole[: len(whole) // 2])  # as a writer killed halfway would leave it without the rename
    elif damage == "not an npz":
        path.write_text("garbage")
    else:
        other = _kitchen.Kitchen(GRID, (1, 0, 0, 2, 0, 0, 0), COOK_TIME)
        solved = SOLVE(other)
        _kitchen._store(path, *solved, _kitchen._solo(solved[1]))
    _kitchen._solved.cache_clear()
    calls = _counting_solve(monkeypatch)
    _same(_kitchen._solved(GRID, START, COOK_TIME), _fresh())
    assert calls == [1]
    assert path.read_bytes() == whole  # rebuilt whole
    _kitchen._solved.cache_clear()
    _kitchen._solved(GRID, START, COOK_TIME)
    assert calls == [1]


def test_an_unwritable_cache_folder_falls_back_to_solving(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.setenv("TOMLIB_CACHE", str(blocker / "cache"))  # a folder inside a file cannot be made
    _kitchen._solved.cache_clear()
    try:
        _same(_kitchen._solved(GRID, START, COOK_TIME), _fresh())
        assert _kitchen.solo_steps(GRID, START, COOK_TIME)[0].shape == (len(_fresh()[0]),)
    finally:
        _kitchen._solved.cache_clear()
        _kitchen.solo_steps.cache_clear()


def test_the_cache_key_covers_the_kitchen_and_the_model_source(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _kitchen._cache_path(GRID, START, COOK_TIME)
    assert path is not None and path.parent == cache
    assert _kitchen._cache_path(GRID, START, COOK_TIME + 1) != path
    assert _kitchen._cache_path(GRID, (1, 0, 0, 2, 0, 0, 0), COOK_TIME) != path
    edited = tmp_path / "_kitchen.py"
    edited.write_bytes(Path(_kitchen.__file__).read_bytes() + b"\n# a change to the model\n")
    monkeypatch.setattr(_kitchen, "__file__", str(edited))
    assert _kitchen._cache_path(GRID, START, COOK_TIME) != path


@pytest.mark.as_nobody
def test_a_kitchen_another_user_left_in_the_cache_is_not_read(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A solved kitchen decides Table 3's cells: one planted by another user (here another kitchen's values, under the
    name this one's would have) is solved again, never read."""
    _kitchen._solved(GRID, START, COOK_TIME)
    (path,) = cache.glob("kitchen-*.npz")
    other = SOLVE(_kitchen.Kitchen(GRID, (1, 0, 0, 2, 0, 0, 0), COOK_TIME))
    _kitchen._store(path, *other, _kitchen._solo(other[1]))
    os.chown(path, ATTACKER, ATTACKER)
    _kitchen._solved.cache_clear()
    calls = _counting_solve(monkeypatch)
    _same(_kitchen._solved(GRID, START, COOK_TIME), _fresh())
    assert calls == [1]


def test_a_cache_folder_others_can_write_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    open_folder = tmp_path / "open"
    open_folder.mkdir()
    open_folder.chmod(0o777)
    monkeypatch.setenv("TOMLIB_CACHE", str(open_folder / "cache"))
    _kitchen._solved.cache_clear()
    try:
        with pytest.warns(UserWarning, match="not cached: Refusing .* any user can write to it"):
            _same(_kitchen._solved(GRID, START, COOK_TIME), _fresh())
        assert not list(open_folder.rglob("*.npz"))
    finally:
        _kitchen._solved.cache_clear()
        _kitchen.solo_steps.cache_clear()
