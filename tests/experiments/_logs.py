"""What the formal-play tests compare run logs by."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def run_events(results: Path, run_id: str) -> list[dict[str, Any]]:
    """A run log's events without what differs between two runs of the same work (time, run id, process id)."""
    out = []
    for line in (results / "runs" / run_id / "events.jsonl").read_text().splitlines():
        ev = json.loads(line)
        for k in ("time", "run_id"):
            ev.pop(k)
        if ev["kind"] in ("run_start", "run_end"):
            ev["payload"].pop("pid", None)
        out.append(ev)
    return out
