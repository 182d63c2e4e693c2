"""Agents: formal ToM-k players, the adaptive A-ToM agent, and the episode runner."""

from tomlib.agents._base import SEATS, Agent, Decision, Emit, Predictor, Responder, Site, no_emit
from tomlib.agents._episode import EpisodeResult, play_episode
from tomlib.agents.adaptive import AdaptiveToMAgent
from tomlib.agents.formal import FormalPredictor, FormalResponder, FormalToMAgent

__all__ = [
    "SEATS",
    "AdaptiveToMAgent",
    "Agent",
    "Decision",
    "Emit",
    "EpisodeResult",
    "FormalPredictor",
    "FormalResponder",
    "FormalToMAgent",
    "Predictor",
    "Responder",
    "Site",
    "no_emit",
    "play_episode",
]
