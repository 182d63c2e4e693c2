"""Agents: formal ToM-k players, the adaptive A-ToM agent, the episode runner, and agents named by import path
(``package.module:Class(key=value)``, :func:`load_agent`)."""

from tomlib.agents._base import SEATS, Agent, Decision, Emit, Predictor, Responder, Site, no_emit
from tomlib.agents._check import CHECKS, AgentCheck, CheckFailure, check_agent
from tomlib.agents._episode import EpisodeResult, decision_problem, play_episode
from tomlib.agents._load import (
    AgentSpecError,
    agent_factory,
    class_path,
    display_name,
    is_agent_spec,
    load_agent,
    split_specs,
)
from tomlib.agents.adaptive import AdaptiveToMAgent
from tomlib.agents.formal import FormalPredictor, FormalResponder, FormalToMAgent

__all__ = [
    "CHECKS",
    "SEATS",
    "AdaptiveToMAgent",
    "Agent",
    "AgentCheck",
    "AgentSpecError",
    "CheckFailure",
    "Decision",
    "Emit",
    "EpisodeResult",
    "FormalPredictor",
    "FormalResponder",
    "FormalToMAgent",
    "Predictor",
    "Responder",
    "Site",
    "agent_factory",
    "check_agent",
    "class_path",
    "decision_problem",
    "display_name",
    "is_agent_spec",
    "load_agent",
    "no_emit",
    "play_episode",
    "split_specs",
]
