"""tomlib: reproduce three papers on Theory of Mind (ToM) in LLM-based multi-agent systems.

Layers (imports point downward only): ``llm`` → ``trace`` → envs / tom / agents → experiments →
``report`` / ``runner``; ``docs/development.md`` lays out every package, and ``DEVELOPERS.md`` holds the build facts,
the test tiers and the invariants with the tests that hold them.
"""

__version__ = "0.1.0"
