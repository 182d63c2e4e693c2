"""Trace explorer widgets: inspect every agent's reasoning, step by step, live or from an exported notebook."""

from tomlib.widgets._explorer import (
    STATIC_PAGE_CSS,
    EpisodePane,
    SummaryView,
    TraceExplorer,
    explore,
    summary_figure,
    summary_frame,
)
from tomlib.widgets._html import step_html
from tomlib.widgets._page import copy_renderer, find_run, with_fallbacks, write_page
from tomlib.widgets._trace import AgentStep, EpisodeRef, Level, StepView, Trace

__all__ = [
    "STATIC_PAGE_CSS",
    "AgentStep",
    "EpisodePane",
    "EpisodeRef",
    "Level",
    "StepView",
    "SummaryView",
    "Trace",
    "TraceExplorer",
    "copy_renderer",
    "explore",
    "find_run",
    "step_html",
    "summary_figure",
    "summary_frame",
    "with_fallbacks",
    "write_page",
]
