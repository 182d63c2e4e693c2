"""Trace explorer widgets: inspect every agent's reasoning, step by step, live or from an exported notebook."""

from tomlib.widgets._explorer import EpisodePane, SummaryView, TraceExplorer, explore, summary_figure, summary_frame
from tomlib.widgets._html import step_html
from tomlib.widgets._trace import AgentStep, EpisodeRef, Level, StepView, Trace

__all__ = [
    "AgentStep",
    "EpisodePane",
    "EpisodeRef",
    "Level",
    "StepView",
    "SummaryView",
    "Trace",
    "TraceExplorer",
    "explore",
    "step_html",
    "summary_figure",
    "summary_frame",
]
