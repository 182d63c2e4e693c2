"""The simulated model served over real HTTP on 127.0.0.1 (the fake OpenAI-compatible server answering by
:func:`tomlib.sim.reply`), with lognormal latency and 429 / 503 at the declared rates."""

from __future__ import annotations

import hashlib
import json
import math
import random
import threading
from typing import Any

from tomlib.sim._answers import NoRule, content_key, reply
from tomlib.sim._spec import CALL_HEADER, SimSpec
from tomlib.testing import FakeOpenAIServer, Reply


class SimServer(FakeOpenAIServer):
    """``with SimServer(SimSpec(p_code=0.7)) as srv:`` then a model entry of kind ``sim`` at ``srv.base_url``."""

    def __init__(self, spec: SimSpec | None = None, *, keep_requests: bool = False) -> None:
        self.spec = spec or SimSpec()
        self.refused: list[str] = []  # prompts no rule knew (answered 400)
        self._errors = random.Random(self.spec.seed)  # latency and failures: not part of the reply's identity
        self._errors_lock = threading.Lock()
        self._seen: dict[str, int] = {}  # content key -> times asked, for requests that name no call
        super().__init__(responder=self._answer, keep_requests=keep_requests)

    def _draws(self) -> tuple[float, float]:
        with self._errors_lock:
            return self._errors.random(), self._errors.gauss(0.0, 1.0)

    def _answer(self, request: dict[str, Any]) -> Reply:
        spec = self.spec
        u, z = self._draws()
        delay = spec.latency_median_s * math.exp(spec.latency_sigma * z) if spec.latency_median_s else 0.0
        if u < spec.rate_429:
            return Reply(status=429, delay_s=min(delay, 0.05), headers={"Retry-After": f"{spec.retry_after_s:g}"})
        if u < spec.rate_429 + spec.rate_5xx:
            return Reply(status=503, delay_s=delay)
        occurrence: int | str | None = request.get("_headers", {}).get(CALL_HEADER.lower())
        if occurrence is None:  # another client: a repeated prompt takes the next draw, in the order it arrives
            key = content_key(request)
            with self._errors_lock:
                occurrence = self._seen.get(key, 0)
                self._seen[key] = occurrence + 1
        try:
            return Reply(content=reply(spec, request, occurrence), delay_s=delay)
        except NoRule as exc:
            self.refused.append(str(exc))
            body = {"error": {"message": f"sim:{spec.name}: {exc}", "type": "invalid_request_error", "code": None}}
            return Reply(status=400, body=json.dumps(body).encode(), delay_s=0.0)

    def model_entry(self, name: str | None = None, *, concurrency: int = 64) -> str:
        """A ``configs/models.yaml`` entry (indented under ``models:``) pointing at this server."""
        name = name or self.spec.name
        digest = hashlib.sha256(self.spec.model_dump_json().encode()).hexdigest()[:10]  # another spec, other replies
        declared = json.dumps(self.spec.model_dump(exclude={"name"}))  # JSON is YAML: the truth its rows declare
        return (
            f"  {name}:\n    kind: sim\n    base_url: {self.base_url}\n    endpoint_id: sim-{self.spec.name}-{digest}\n"
            f"    concurrency: {concurrency}\n    max_retries: 8\n    backoff_base_s: 0.05\n"
            f"    sim: {declared}\n    description: simulated competent model (tomlib.sim)\n"
        )
