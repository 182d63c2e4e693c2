"""The claims engine's files in a results folder are written through a temp file of its own and ``os.replace``: a
link planted at the file, or at the fixed temp name it used, is replaced, never written through."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.planning.pilots import pilot
from tomlib.claims import read_units, write_claims, write_units

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def test_units_and_claims_are_written_beside_a_planted_link_not_through_it(tmp_path: Path) -> None:
    results = tmp_path / "results"
    pilot(results, "llm:local", tasks=3, sd=1.0)
    units = results / "units" / "coalition.table1.csv"
    rows = pd.read_csv(units)
    victims = {name: tmp_path / f"victim-{name}" for name in ("tmp", "units", "claims")}
    for victim in victims.values():
        victim.write_text("keep me\n")
    victims["units"].write_bytes(units.read_bytes())  # a file of the runner's that reads as these units
    kept = {name: v.read_bytes() for name, v in victims.items()}
    units.with_suffix(".tmp").symlink_to(victims["tmp"])  # the fixed temp name write_units used
    units.unlink()
    units.symlink_to(victims["units"])
    (results / "claims.csv").symlink_to(victims["claims"])
    write_units(rows.assign(value=rows["value"] + 1), results)
    write_claims(results)
    assert {name: v.read_bytes() for name, v in victims.items()} == kept
    assert not units.is_symlink() and not (results / "claims.csv").is_symlink()
    assert len(read_units(results)["coalition.table1"]) == len(rows)
    assert "coalition.higher_tom_no_gain" in (results / "claims.csv").read_text()
