"""The runner's progress: a live bar on a terminal; in a log (CI, ``nohup``, a pipe) one plain line per finished
notebook, instead of thousands of carriage-return refreshes on one line."""

from __future__ import annotations

import sys
from typing import Any


class Progress:
    """``done(name, status, seconds)`` after each item; ``cell(text)`` shows what runs now (on a terminal only)."""

    def __init__(self, total: int, desc: str, *, enabled: bool = True, unit: str = "nb") -> None:
        from tqdm.auto import tqdm

        self.live = enabled and (sys.stderr.isatty() or _in_kernel())
        self.plain = enabled and not self.live
        self.total, self.finished, self.desc = total, 0, desc
        self._bar: Any = tqdm(total=total, desc=desc, unit=unit, disable=not self.live)
        if self.plain and total:
            print(f"{desc}: {total} to run", flush=True)

    def say(self, line: str) -> None:
        """A line of its own, above the bar on a terminal."""
        if self.live:
            self._bar.write(line)
        elif self.plain:
            print(line, flush=True)

    def done(self, name: str, status: str, seconds: float, error: str = "") -> None:
        self.finished += 1
        if self.live:
            self._bar.update()
        elif self.plain:
            why = f": {error}" if error and status != "ok" else ""
            self.say(f"[{self.finished}/{self.total}] {name} {status} in {seconds:.1f} s{why}")

    def cell(self, text: str) -> None:
        if self.live:
            self._bar.set_postfix_str(text)

    def close(self) -> None:
        self._bar.close()


def _in_kernel() -> bool:
    """Inside a Jupyter kernel (a user calling the runner from a notebook), where tqdm draws a widget."""
    shell = sys.modules.get("IPython") and sys.modules["IPython"].get_ipython()
    return bool(shell) and type(shell).__name__ == "ZMQInteractiveShell"
