"""Each card draws the panels of its own paper, on run logs replayed from the shipped ``local`` transcripts.

A-ToM logs an ``alignment`` event after every move (its experts' losses, Algorithm 1/2) and the coalition paper's
believers log one with their Appendix A scores: the explorer drew the coalition paper's belief-action alignment panel,
empty, on every A-ToM card of notebooks 02 and 05 (``FTM over all 0%``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tomlib.experiments import adaptive_tom as at
from tomlib.experiments import coalition_programming as cp
from tomlib.widgets import Trace, step_html

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

TRANSCRIPTS = Path(__file__).resolve().parents[2] / "data" / "transcripts"
PANEL = "belief-action alignment"


@pytest.fixture
def shipped_transcripts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOMLIB_TRANSCRIPTS", str(TRANSCRIPTS))


@pytest.mark.parametrize("model", ["local", "formal"])
def test_adaptive_tom_steps_show_the_expert_update_not_the_coalition_panel(
    model: str, shipped_transcripts: None
) -> None:
    run = asyncio.run(
        at.table2(model=model, llm_mode="replay", tasks=["memory_1"], algorithms=["Hedge"], episodes=1, progress=False)
    )
    trace = Trace.from_runs([run])
    assert trace.runs()["source"].tolist() == [f"llm:{model}" if model == "local" else "formal"]
    seen = 0
    for condition in trace.conditions(run.run_id):
        ref = trace.refs(run.run_id, condition)[0]
        for step in trace.steps(ref)[:4]:
            view = trace.step(ref, step)
            html = step_html(view)
            assert PANEL not in html and "FTM" not in html, (condition, step)
            for a in view.agents:
                assert a.alignment is None
                if a.weights:  # every A-ToM card: the update after the partner's move instead
                    assert a.expert_update is not None and "after the partner played" in html
                    seen += 1
    assert seen > 0


def test_a_coalition_step_still_has_its_alignment_panel(shipped_transcripts: None) -> None:
    config = next(c for c in cp.table2_configs() if c.matching)
    runs = asyncio.run(
        cp.run_programming(
            [config],
            benchmarks=["humaneval"],
            humaneval_tasks=1,
            progress=False,
            on_sandbox=None,
            experiment="coalition.table2",
        )
    )
    trace = Trace.from_runs([runs])
    assert trace.runs()["source"].tolist() == ["llm:local"]
    ref = trace.refs(runs.run_id, trace.conditions(runs.run_id)[0])[0]
    for step in trace.steps(ref):
        view = trace.step(ref, step)
        pm = next(a for a in view.agents if a.agent == "PM")
        assert pm.alignment and pm.alignment["scores"] and pm.expert_update is None
        html = step_html(view)
        assert PANEL in html and "FTM over all" in html and "after the partner played" not in html
