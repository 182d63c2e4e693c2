"""Test and benchmark helpers: a scriptable fake OpenAI-compatible server on 127.0.0.1."""

from tomlib.testing.fake_openai import FakeOpenAIServer, Reply

__all__ = ["FakeOpenAIServer", "Reply"]
