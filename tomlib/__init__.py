"""tomlib: reproduce three papers on Theory of Mind (ToM) in LLM-based multi-agent systems.

Layers (imports point downward only): ``llm`` → ``trace`` → envs / tom / agents → experiments →
``report`` / ``runner``. See ``../shared/DESIGN.md``.
"""

__version__ = "0.1.0"
