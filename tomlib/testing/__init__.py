"""Test and benchmark helpers: a scriptable fake OpenAI-compatible server on 127.0.0.1, synthetic run logs."""

from tomlib.testing.fake_openai import FakeOpenAIServer, Reply
from tomlib.testing.synthetic import synthetic_run_log

__all__ = ["FakeOpenAIServer", "Reply", "synthetic_run_log"]
