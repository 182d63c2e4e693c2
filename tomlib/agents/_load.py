"""Agents named by import path: ``package.module:Class`` or ``package.module:Class(key=literal, ...)``.

The path is how a user's own agent enters the experiments (notebook parameters, the command line, sweeps): a string
that survives papermill and pickling, so a worker process rebuilds the same agent by importing it. Keyword values are
read with :func:`ast.literal_eval` (numbers, strings, booleans, None, tuples, lists, dicts): nothing in a spec runs.
Every way a spec can fail is one line naming the cause and the fix (:class:`AgentSpecError`).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections.abc import Callable
from typing import Any

from tomlib.agents._base import Agent
from tomlib.errors import UsageError

FORM = "package.module:Class or package.module:Class(key=value, ...)"
"""The grammar, as the errors show it."""
_DOTTED = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
_SPEC = re.compile(rf"\s*(?P<module>{_DOTTED})\s*:\s*(?P<attr>{_DOTTED})\s*(?:\((?P<args>.*)\))?\s*", re.S)
_LISTED = 5  # Agent subclasses named when an attribute is missing


class AgentSpecError(UsageError):
    """An agent import path that cannot give an agent; the message says which part failed and how to fix it."""


def is_agent_spec(text: object) -> bool:
    """Whether ``text`` is written as an import path (a dotted module name, ``:``, then a name), not a built-in agent
    name such as ``ToM-1`` or ``A-ToM (FTL)``. Says nothing of whether it loads.

    Args:
        text: anything; only strings can be specs.
    """
    return isinstance(text, str) and re.match(rf"\s*{_DOTTED}\s*:\s*[A-Za-z_]", text) is not None


def parse_spec(spec: str) -> tuple[str, str, dict[str, Any]]:
    """Split an import path into its module, its attribute and the keyword arguments it is called with.

    Args:
        spec: ``package.module:Class`` or ``package.module:Class(key=literal, ...)``.
    """
    if not isinstance(spec, str):
        raise AgentSpecError(f"an agent spec is a string of the form {FORM}; got {spec!r}")
    m = _SPEC.fullmatch(spec)
    if m is None:
        raise AgentSpecError(f"cannot read agent spec {spec!r}; write it as {FORM}, e.g. 'my_agents:CopyPartner'")
    args = m.group("args")
    return m.group("module"), m.group("attr"), _keywords(spec, args) if args is not None else {}


def _keywords(spec: str, args: str) -> dict[str, Any]:
    """The literal keyword arguments of a spec's parentheses, read without running anything."""
    try:
        call = ast.parse(f"f({args})", mode="eval").body
    except SyntaxError:
        raise AgentSpecError(
            f"agent spec {spec!r}: its arguments ({args}) are not keyword=literal pairs; write them as {FORM}"
        ) from None
    assert isinstance(call, ast.Call)
    if call.args:
        raise AgentSpecError(
            f"agent spec {spec!r} passes positional arguments; name each one (key=value), as in {FORM}"
        )
    out: dict[str, Any] = {}
    for kw in call.keywords:
        if kw.arg is None:
            raise AgentSpecError(f"agent spec {spec!r}: **-unpacking is not allowed; name each keyword (key=value)")
        try:
            out[kw.arg] = ast.literal_eval(kw.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            raise AgentSpecError(
                f"agent spec {spec!r}: the value of {kw.arg} ({ast.unparse(kw.value)}) is not a literal; use numbers, "
                "quoted strings, True/False/None, or lists, tuples and dicts of them"
            ) from None
    return out


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _import(spec: str, module: str) -> Any:
    """The module, or one line saying whether it is missing or failed while importing."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (module == missing or module.startswith(missing + ".")):
            raise AgentSpecError(
                f"agent spec {spec!r}: no module named {module!r} (is it installed, or is its folder on PYTHONPATH? "
                "run from the folder that holds it, or set PYTHONPATH=that folder)"
            ) from None
        raise AgentSpecError(f"agent spec {spec!r}: importing {module!r} failed: {_one_line(exc)}") from exc
    except Exception as exc:  # anything the user's module raises while it runs: say so, with its first line
        raise AgentSpecError(f"agent spec {spec!r}: importing {module!r} failed: {_one_line(exc)}") from exc


def _agent_classes(mod: Any) -> list[str]:
    """The public names of ``mod`` that are Agent subclasses one could build."""
    return sorted(
        name
        for name, value in vars(mod).items()
        if not name.startswith("_")
        and inspect.isclass(value)
        and issubclass(value, Agent)
        and value is not Agent
        and not inspect.isabstract(value)
    )


def _what(value: Any) -> str:
    if inspect.isclass(value):
        return f"the class {value.__module__}.{value.__qualname__}"
    if isinstance(value, Agent):
        return f"an instance of {type(value).__qualname__} (name the class or a function that makes one)"
    return f"a {type(value).__name__}"


def resolve(spec: str) -> tuple[Callable[..., Any], dict[str, Any]]:
    """The maker a spec names (an Agent subclass, or a function returning an Agent) and its keyword arguments,
    imported and checked but not called.

    Args:
        spec: an import path (:data:`FORM`).
    """
    module, attr, kwargs = parse_spec(spec)
    mod = _import(spec, module)
    target: Any = mod
    for part in attr.split("."):
        if not hasattr(target, part):
            have = _agent_classes(mod)
            listed = ", ".join(have[:_LISTED]) + (", ..." if len(have) > _LISTED else "")
            hint = f"its Agent subclasses: {listed}" if have else "it defines no tomlib.agents.Agent subclass"
            raise AgentSpecError(f"agent spec {spec!r}: module {module!r} has no attribute {attr!r}; {hint}")
        target = getattr(target, part)
    if inspect.isclass(target):
        if not issubclass(target, Agent):
            raise AgentSpecError(
                f"agent spec {spec!r} names {_what(target)}, which is not a tomlib.agents.Agent subclass; "
                "subclass tomlib.agents.Agent and define async act(state)"
            )
        if inspect.isabstract(target):
            missing = ", ".join(sorted(target.__abstractmethods__))
            raise AgentSpecError(f"agent spec {spec!r}: {target.__qualname__} is abstract: define {missing}")
    elif not callable(target) or isinstance(target, Agent):
        raise AgentSpecError(
            f"agent spec {spec!r} names {_what(target)}; it needs a tomlib.agents.Agent subclass or a function that "
            "returns an Agent"
        )
    return target, kwargs


def build(spec: str, make: Callable[..., Any], kwargs: dict[str, Any]) -> Agent:
    """Call a resolved maker; every failure is one line (:class:`AgentSpecError`)."""
    try:
        agent = make(**kwargs)
    except TypeError as exc:
        maker = getattr(make, "__qualname__", make)
        raise AgentSpecError(f"agent spec {spec!r}: {maker} does not take these keywords: {exc}") from exc
    except AgentSpecError:
        raise
    except Exception as exc:
        raise AgentSpecError(f"agent spec {spec!r}: building the agent failed: {_one_line(exc)}") from exc
    if not isinstance(agent, Agent):
        raise AgentSpecError(
            f"agent spec {spec!r}: {getattr(make, '__qualname__', make)} returned {_what(agent)}, not a "
            "tomlib.agents.Agent"
        )
    if "name" not in vars(agent) and type(agent).name == Agent.name:
        agent.name = type(agent).__name__  # shown in run logs and tables instead of the base's "agent"
    return agent


def load_agent(spec: str) -> Agent:
    """A fresh agent from its import path: ``package.module:Class`` or ``package.module:Class(key=literal, ...)``;
    a function that returns an Agent does as well as a class.

    Args:
        spec: the import path, with keyword arguments read as Python literals (never run as code).

    Raises:
        AgentSpecError: one line naming what failed: the form, the module, the attribute, the kind of object, or the
            constructor's complaint about the keywords.
    """
    make, kwargs = resolve(spec)
    return build(spec, make, kwargs)


def agent_factory(spec: str) -> Callable[[], Agent]:
    """A zero-argument callable that makes a fresh agent of ``spec`` each call; the spec is imported and one agent
    built now, so a typo fails here, before any episode.

    Args:
        spec: the import path (:func:`load_agent`).
    """
    make, kwargs = resolve(spec)
    build(spec, make, kwargs)

    def fresh() -> Agent:
        return build(spec, make, kwargs)

    fresh.__qualname__ = fresh.__name__ = f"agent_factory({spec!r})"
    return fresh


def display_name(agent: Agent) -> str:
    """How an agent is named to people: its ``name`` if its class (or the instance) set one, else its class's name."""
    name = getattr(agent, "name", Agent.name)
    return type(agent).__name__ if name == Agent.name else str(name)


def class_path(agent: Agent) -> str:
    """The agent's class as an import path, ``module:Class``."""
    return f"{type(agent).__module__}:{type(agent).__qualname__}"


def split_specs(text: str) -> list[str]:
    """A comma-separated list of agents whose import paths may hold commas inside their parentheses:
    ``"ToM-0,my.mod:Agent(a=1, b=2)"`` → ``["ToM-0", "my.mod:Agent(a=1, b=2)"]``.

    Args:
        text: the list, as a notebook parameter gives it.
    """
    items, depth, start = [], 0, 0
    quote = ""
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [s.strip() for s in items if s.strip()]
