"""Print the isolation the sandbox gave each user, so a CI log shows what the adversarial suite ran under."""

from __future__ import annotations

from typing import Any

from tests.sandbox._users import SEEN


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for who, isolation in SEEN.items():
        terminalreporter.write_line(f"sandbox isolation as {who}: {isolation}")
