"""The suite's tiers (``tests/_tiers.py``) hold: a test in no tier, in an unknown one, or in ``fast`` and another
fails; the closest marker counts, so ``-m fast`` leaves out a slower test of a fast module; a ``fast`` test that
starts what a slower tier names fails, naming that tier; and the readers of the executed series go first, with the
time to make it. Run on small test files in a pytest of their own."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.tier("fast")
pytest_plugins = ["pytester"]

CONFTEST = """
from tests._tiers import _fast_stays_fast, pytest_collection_modifyitems, pytest_runtest_setup
"""
TESTS = """
import subprocess
import pytest
from tests._tiers import SERIES_TIMEOUT

pytestmark = pytest.mark.tier("fast")

def test_quick():
    pass

@pytest.mark.series
def test_slow():
    pass

@pytest.mark.tier("slowish")
def test_unknown():
    pass

@pytest.mark.fast
@pytest.mark.browser
def test_both():
    pass

@pytest.fixture
def offline_series():
    return {}

def test_reads_the_series(offline_series, request):
    assert request.node.get_closest_marker("timeout").args == (SERIES_TIMEOUT,)

def test_starts_papermill():
    try:
        subprocess.run(["papermill", "--version"], capture_output=True)
    except Exception:
        pass  # library code that swallows the error is caught at teardown too
"""


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_mod=TESTS, test_untiered="def test_nothing_said():\n    pass\n")
    return pytester


def test_every_rule_of_the_tiers(suite: pytest.Pytester) -> None:
    got = suite.runpytest("-p", "no:xdist", "-p", "no:randomly", "-rA")
    got.assert_outcomes(passed=3, errors=4, failed=1)
    out = got.stdout.str()
    assert "test_nothing_said is in no tier: mark it" in out
    assert "names the tier ['slowish']" in out
    assert "is marked fast and ['browser']" in out
    assert "is marked fast but started papermill: mark it series" in out
    assert "PASSED test_mod.py::test_quick" in out and "PASSED test_mod.py::test_slow" in out
    assert "PASSED test_mod.py::test_reads_the_series" in out


def test_the_readers_of_the_series_go_first(suite: pytest.Pytester) -> None:
    order = suite.runpytest("-p", "no:xdist", "-p", "no:randomly", "--co", "-q").stdout.lines
    assert order[0] == "test_mod.py::test_reads_the_series"


def test_the_closest_marker_counts_for_m(suite: pytest.Pytester) -> None:
    fast = suite.runpytest("-p", "no:xdist", "-m", "fast", "--co", "-q").stdout.str()
    assert "test_quick" in fast and "test_slow" not in fast and "test_nothing_said" not in fast
    series = suite.runpytest("-p", "no:xdist", "-m", "series", "--co", "-q").stdout.str()
    assert "test_slow" in series and "test_quick" not in series
