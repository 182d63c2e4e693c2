"""Run logs: every model call and agent decision as one event in an append-only JSONL file."""

from tomlib.redact import REDACTED, Redactor
from tomlib.trace._load import load_runs, payload_frame, run_paths
from tomlib.trace._log import EVENT_KINDS, STEP_KINDS, Event, RunLog, drops_event, keeps_steps, new_run_id

__all__ = [
    "EVENT_KINDS",
    "REDACTED",
    "STEP_KINDS",
    "Event",
    "Redactor",
    "RunLog",
    "drops_event",
    "keeps_steps",
    "load_runs",
    "new_run_id",
    "payload_frame",
    "run_paths",
]
