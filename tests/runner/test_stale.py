"""A rerun clears what it no longer produces: the rows of sources it did not write in its units tables, the tables
and units tables it wrote before and not now, and its stale waves.json record (``tomlib.runner._stale``)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.runner.test_runner import write_nb
from tomlib.claims import write_units
from tomlib.paths import ENV_UNITS_MANIFEST
from tomlib.runner import Profile, run_notebooks
from tomlib.runner._stale import clear_stale, units_written

pytestmark = pytest.mark.tier("fast")

NB = "09_coalition_table2_fig2"


def units(path: Path, sources: dict[str, int]) -> None:
    rows = [
        {"paper_id": "coalition", "table_id": path.stem.split(".", 1)[1], "task_id": f"t{i}"}
        | {"metric": "ftm", "value": 0.5, "source": s}
        for s, n in sources.items()
        for i in range(n)
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(path, index=False)


def stamp(results: Path, name: str, **fields: object) -> dict[str, object]:
    doc = {"name": name, "status": "ok", **fields}
    (results / "notebooks").mkdir(parents=True, exist_ok=True)
    (results / "notebooks" / f"{name}.stamp.json").write_text(json.dumps(doc))
    return doc


def test_a_rerun_clears_the_sources_tables_and_waves_record_it_no_longer_writes(tmp_path: Path) -> None:
    """The issue's case: a sim run of 09 into the series' folder, then the series' 09 again. Fails on main, which
    kept the sim:sim units (5 verdicts in claims.csv) and 09's waves.json record ('decided after 120 of 160')."""
    res = tmp_path / "results"
    units(res / "units" / "coalition.table2.csv", {"llm:local": 2, "sim:sim": 3})
    units(res / "units" / "coalition.table6.csv", {"sim:sim": 3, "llm:local": 2})
    units(res / "units" / "coalition.table99.csv", {"sim:sim": 1})  # written by the sim run only
    for name in ("coalition.table99.csv", "coalition.table99.run.json"):
        (res / "tables").mkdir(parents=True, exist_ok=True)
        (res / "tables" / name).write_text("x")
    previous = stamp(
        res,
        NB,
        tables=["coalition.table2", "coalition.table6", "coalition.table99"],
        units={"coalition.table2": ["sim:sim"], "coalition.table6": ["sim:sim"], "coalition.table99": ["sim:sim"]},
    )
    waves = {"_method": "m", NB: {"line": "09: decided after 120 of 160"}, "08_coalition_table1": {"line": "08"}}
    (res / "waves.json").write_text(json.dumps(waves))

    wrote = units_written(["coalition.table2\tllm:local", "coalition.table6\tllm:local", "coalition.table2\tllm:local"])
    assert wrote == {"coalition.table2": ["llm:local"], "coalition.table6": ["llm:local"]}
    gone = clear_stale(res, NB, ["coalition.table2", "coalition.table6"], wrote, previous)

    for name in ("coalition.table2", "coalition.table6"):
        kept = pd.read_csv(res / "units" / f"{name}.csv")
        assert list(kept["source"]) == ["llm:local"] * 2
    assert not (res / "units" / "coalition.table99.csv").exists()
    assert not list((res / "tables").glob("coalition.table99*"))
    assert set(json.loads((res / "waves.json").read_text())) == {"_method", "08_coalition_table1"}
    assert "units/coalition.table2.csv: the rows of sim:sim" in gone and f"waves.json: {NB}'s record" in gone
    # run again: nothing more to clear, and a waves.json left with no record goes
    stamp(res, "08_coalition_table1", tables=["coalition.table1"], units={"coalition.table1": ["llm:local"]})
    (res / "waves.json").write_text(json.dumps({"_method": "m", NB: {}}))
    assert clear_stale(res, NB, ["coalition.table2"], {"coalition.table2": ["llm:local"]}, {}) == [
        f"waves.json: {NB}'s record"
    ]
    assert not (res / "waves.json").exists()


def test_sources_and_tables_another_notebook_writes_are_kept(tmp_path: Path) -> None:
    """01's tie curve writes Table 4's formal units beside 04's formal and llm:local ones: 01's run keeps 04's rows,
    whether 04's stamp names its sources or (written before stamps did) only its tables."""
    res = tmp_path / "results"
    path = res / "units" / "adaptive_tom.table4.csv"
    for theirs in ({"tables": ["adaptive_tom.table4"]}, {"units": {"adaptive_tom.table4": ["formal", "llm:local"]}}):
        units(path, {"formal": 2, "llm:local": 1})
        stamp(res, "04_adaptive_tom_table4", **theirs)
        previous = {"tables": ["adaptive_tom.table1", "adaptive_tom.table4"]}
        assert clear_stale(res, "01_adaptive_tom_table1", [], {"adaptive_tom.table4": ["formal"]}, previous) == []
        assert list(pd.read_csv(path)["source"]) == ["formal", "formal", "llm:local"]
    units(path, {"formal": 2, "llm:local": 1, "sim:sim": 1})  # a source no notebook says it writes goes
    clear_stale(res, "01_adaptive_tom_table1", [], {"adaptive_tom.table4": ["formal"]}, {})
    assert list(pd.read_csv(path)["source"]) == ["formal", "formal", "llm:local"]


def test_write_units_tells_the_runner_which_sources_it_wrote(
    tmp_path: Path, isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = tmp_path / "units.txt"
    monkeypatch.setenv(ENV_UNITS_MANIFEST, str(manifest))
    frame = pd.DataFrame(
        {"paper_id": "coalition", "table_id": ["table2"] * 3, "task_id": ["a", "b", "c"], "metric": "ftm"}
        | {"value": [1, 0, 1], "source": ["llm:local", "sim:sim", "llm:local"]}
    )
    write_units(frame)
    assert units_written(manifest.read_text().splitlines()) == {"coalition.table2": ["llm:local", "sim:sim"]}


@pytest.mark.series
def test_the_runner_stamps_the_units_a_notebook_wrote_and_clears_a_source_it_no_longer_writes(
    tmp_path: Path, isolated: Path
) -> None:
    """A notebook whose units' source is a parameter: run as sim:sim, then as llm:local, its units hold only the
    second run's rows (on main both stayed) and its stamp names what it wrote."""
    nbs = tmp_path / "nbs"
    nbs.mkdir()
    body = (
        "import pandas as pd\nfrom tomlib.claims import write_units\n"
        "write_units(pd.DataFrame({'paper_id': ['coalition'], 'table_id': ['table2'], 'task_id': ['t'],"
        " 'metric': ['ftm'], 'value': [1.0], 'source': [source]}), results_dir)"
    )
    write_nb(nbs / "09_units.ipynb", "results_dir = ''\nsource = 'sim:sim'", body)
    for source in ("sim:sim", "llm:local"):
        prof = Profile(name="t", parameters={"source": source})
        (outcome,) = run_notebooks(prof, directory=nbs, progress=False, html=False)
        assert outcome.status == "ok", outcome.error
    res = isolated / "results"
    assert list(pd.read_csv(res / "units" / "coalition.table2.csv")["source"]) == ["llm:local"]
    assert json.loads((res / "notebooks" / "09_units.stamp.json").read_text())["units"] == {
        "coalition.table2": ["llm:local"]
    }
