"""The class plan's code cells (notebooks/README.md) run as written, so a teacher never hits a broken snippet."""

from __future__ import annotations

import ast
import asyncio
import inspect
import re
import textwrap
from pathlib import Path

import matplotlib

from tomlib.experiments import adaptive_tom as at
from tomlib.experiments import tom_ib

ROOT = Path(__file__).resolve().parent.parent


def test_every_python_block_in_the_class_plan_runs(isolated: Path) -> None:
    matplotlib.use("Agg")
    text = (ROOT / "notebooks" / "README.md").read_text()
    blocks = [textwrap.dedent(b) for b in re.findall(r"```python\n(.*?)```", text, flags=re.S)]
    assert len(blocks) >= 3
    namespace = {"at": at, "tom_ib": tom_ib}
    for block in blocks:
        code = compile(block, "notebooks/README.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        result = eval(code, namespace)  # our own documentation, not model output
        if inspect.iscoroutine(result):
            asyncio.run(result)
    assert namespace["one"].table["value"].notna().all()
    assert {"got", "one"} <= set(namespace)
