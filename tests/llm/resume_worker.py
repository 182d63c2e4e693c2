"""A run that a test kills with SIGKILL half-way (see test_resume.py)."""

import sys

from tomlib.llm import ChatModel, ModelConfig
from tomlib.trace import RunLog

base_url, run_id, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
chat = ChatModel(ModelConfig(name="fake", kind="openai", model="fake", base_url=base_url, endpoint_id="fake"))
log = RunLog("resume", run_id=run_id)
log.observe(chat)
for i in range(n):
    key = {"experiment": "resume", "condition": "c", "episode": 0, "step": i, "agent": "p1"}
    reply = chat.complete_sync([{"role": "user", "content": f"step {i}"}], sample_key=key)
    log.event("action", {"i": i, "reply": reply.content}, condition="c", episode=0, step=i, agent="p1")
    print(f"done {i}", flush=True)
log.close()
