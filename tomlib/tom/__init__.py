"""Formal (exact, LLM-free) k-level Theory of Mind: the papers' equations as code."""

from tomlib.tom._formal import MAX_ORDER, FirstOfTies, ToMLevel, best_responses, joint, tom_action, tom_reasoning

__all__ = ["MAX_ORDER", "FirstOfTies", "ToMLevel", "best_responses", "joint", "tom_action", "tom_reasoning"]
