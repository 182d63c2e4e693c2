"""Notebook parameters from the command line (``-p NAME VALUE``, ``-y YAML``), checked against the parameters
cell before any notebook starts: an undeclared name, a value of the wrong type or a value outside the choices tomlib
defines for that parameter (:data:`CHOICES`) is an error naming the fix."""

from __future__ import annotations

import ast
import functools
import importlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any, get_args

import yaml

from tomlib.errors import UsageError, did_you_mean
from tomlib.trace import RUN_ID_FIX, run_id_problem

_TYPES: dict[str, tuple[type, ...]] = {"int": (int,), "float": (int, float), "str": (str,), "bool": (bool,)}


def parse_cli(pairs: Sequence[Sequence[str]] = (), yaml_text: str | None = None) -> dict[str, Any]:
    """``-p NAME VALUE`` pairs (values read as papermill reads them: ``5`` is an int, ``five`` a str) over a ``-y``
    YAML mapping."""
    params: dict[str, Any] = {}
    if yaml_text:
        try:
            raw = yaml.safe_load(yaml_text)
        except yaml.YAMLError as exc:
            raise UsageError(f"-y is not valid YAML ({exc}); give a mapping such as -y 'episodes: 5'.") from None
        if not isinstance(raw, dict):
            raise UsageError(f"-y must be a YAML mapping such as 'episodes: 5', got {yaml_text!r}.")
        params.update(raw)
    for name, value in pairs:
        params[name] = _scalar(value)
    return params


def _scalar(text: str) -> Any:
    """A ``-p`` value as papermill reads it: true/false, None, an int, a float, else the text itself ('' stays '')."""
    if text in ("True", "true"):
        return True
    if text in ("False", "false"):
        return False
    if text == "None":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _attribute(module: str, name: str) -> Callable[[], Iterable[Any]]:
    return lambda: getattr(importlib.import_module(module), name)


def _protocol(name: str) -> Callable[[], Iterable[Any]]:
    return lambda: importlib.import_module("tomlib.programming").PROTOCOL_CHOICES[name]


def _city_dynamics() -> Iterable[Any]:
    from tomlib.envs.city import CityParams

    return get_args(CityParams.model_fields["dynamics"].annotation)


# Parameters whose value is one of a set tomlib defines, read from where the library checks it (so the lists are
# never copied here): name -> (the allowed values, whether the value is a comma-separated list of them, whether ""
# is allowed: the notebook's default rule). Loaded only when a value differs from the notebook's default.
CHOICES: dict[str, tuple[Callable[[], Iterable[Any]], bool, bool]] = {
    "llm_mode": (_attribute("tomlib.llm", "MODES"), False, False),
    "tom_order": (_attribute("tomlib.quickstart", "_ORDER_HINT"), False, False),
    "tie_break": (_attribute("tomlib.tom", "TIE_BREAKS"), False, False),
    "prefer": (_attribute("tomlib.envs", "PREFERENCES"), False, True),
    "expert_prediction": (_attribute("tomlib.agents.adaptive", "EXPERT_PREDICTIONS"), False, False),
    "pbt": (_attribute("tomlib.experiments.adaptive_tom", "PBT_CHOICES"), False, False),
    "tasks": (_attribute("tomlib.experiments.adaptive_tom", "TASKS"), True, False),
    "llm_tasks": (_attribute("tomlib.experiments.adaptive_tom", "TASKS"), True, False),
    "llm_agents": (_attribute("tomlib.experiments.adaptive_tom", "AGENT_NAMES"), True, False),
    "agent": (tuple, False, False),  # notebook 15: an import path only
    "partners": (_attribute("tomlib.experiments.adaptive_tom", "YOUR_PARTNERS"), True, False),
    "configs": (_attribute("tomlib.agents.bdi", "CONFIGS"), True, False),
    "dynamics": (_city_dynamics, False, False),
    "verification": (_attribute("tomlib.agents.bdi", "VERIFICATIONS"), False, False),
    "observation": (_attribute("tomlib.agents.bdi", "OBSERVATIONS"), False, False),
    "pm_history": (_attribute("tomlib.programming", "PM_HISTORIES"), False, False),
    "selection": (_attribute("tomlib.coalition", "SELECTIONS"), False, True),
    "pm_feedback": (_protocol("pm_feedback"), False, False),
    "pm_cites": (_protocol("pm_cites"), False, False),
    "rematch": (_protocol("rematch"), False, False),
    "initial": (_protocol("initial"), False, False),
    "preferences": (_protocol("preferences"), False, False),
    "zero_credit": (_attribute("tomlib.experiments.coalition_reasoning", "ZERO_CREDIT"), False, False),
    "importance_scale": (_attribute("tomlib.reasoning", "IMPORTANCE_SCALES"), False, False),
}


YOUR_AGENT_HINT = (
    " (the papers' notebooks play their own agents; yours plays them in 15_your_agent: "
    "tomlib run 15 -p agent package.module:Class, see docs/your-agent.md)"
)
"""Where an agent goes when a paper's notebook is given one: 15_your_agent puts it beside the papers' cells."""

AGENT_PATHS = frozenset({"llm_agents", "agent"})
"""Enumerated parameters whose items may also be an agent's import path, ``package.module:Class(key=value)``
(docs/your-agent.md): each is checked by loading it, so a typo fails before any notebook starts."""


# A notebook whose enumerated parameter takes fewer values than the library's list (Table 4 plays the three-action
# games only): (notebook stem, name) -> its own values, in place of CHOICES' list.
NOTEBOOK_CHOICES: dict[tuple[str, str], Callable[[], Iterable[Any]]] = {
    ("04_adaptive_tom_table4", "tasks"): _attribute("tomlib.experiments.adaptive_tom", "THREE_ACTION_TASKS"),
    ("04_adaptive_tom_table4", "llm_tasks"): _attribute("tomlib.experiments.adaptive_tom", "THREE_ACTION_TASKS"),
}


@functools.cache
def allowed_values(name: str, notebook: str = "") -> tuple[Any, ...]:
    """The values tomlib accepts for the enumerated parameter ``name`` of ``notebook`` (a stem; empty for any other
    parameter)."""
    own = NOTEBOOK_CHOICES.get((notebook, name))
    if own is not None:
        return tuple(own())
    entry = CHOICES.get(name)
    return tuple(entry[0]()) if entry else ()


def _default(info: dict[str, Any]) -> Any:
    try:
        return ast.literal_eval(str(info.get("default")))
    except (ValueError, SyntaxError):
        return None


def _outside_choices(name: str, value: Any, info: dict[str, Any], notebook: str = "") -> str | None:
    """Why ``value`` is not a value tomlib accepts for ``name``, with the closest one; None when it is."""
    if name not in CHOICES or value is None or value == _default(info):
        return None
    _, is_list, empty_ok = CHOICES[name]
    known = allowed_values(name, notebook)
    if is_list and not isinstance(value, str):
        return None  # the type check names it
    if empty_ok and value == "":
        return None
    items = [v.strip() for v in value.split(",") if v.strip()] if is_list else [value]
    names = ", ".join(str(k) for k in known)
    if name in AGENT_PATHS:
        from tomlib.agents import AgentSpecError, is_agent_spec, load_agent, split_specs

        items = split_specs(value) if is_list else items
        for spec in [v for v in items if is_agent_spec(v)]:
            try:
                load_agent(spec)
            except AgentSpecError as exc:
                return f"'{name}': {exc}"
        known = (*known, *(v for v in items if is_agent_spec(v)))
        names = (f"{names}, or " if names else "") + "an agent's import path package.module:Class(key=value)"
    if not items:
        return f"'{name}' names none of {names}"
    wrong = [v for v in items if v not in known]
    if not wrong:
        return None
    first = wrong[0]
    hint = did_you_mean(str(first), [str(k) for k in known])
    if is_list:
        return f"'{name}' has {', '.join(repr(w) for w in wrong)}{hint}, which is not one of {names}"
    also = " or empty (the notebook's default rule)" if empty_ok else ""
    one_of = "one of " if "," in names or not names.startswith("an agent") else ""
    return f"'{name}' must be {one_of}{names}{also}, got {first!r}{hint}"


def check_values(notebook: str, declared: dict[str, dict[str, Any]], params: dict[str, Any], where: str) -> None:
    """Raise :class:`UsageError` for names ``notebook`` does not declare (with the closest declared name), for
    values whose type differs from the parameters cell's type hint (``episodes: int = 30``), and for values outside
    the choices tomlib defines for an enumerated parameter (:data:`CHOICES`; with the closest choice)."""
    problems, undeclared = [], False
    for name, value in params.items():
        info = declared.get(name)
        if info is None:
            elsewhere = YOUR_AGENT_HINT if name in ("agent", "agents") and "agent" not in declared else ""
            problems.append(f"'{name}' is not a parameter of {notebook}{did_you_mean(name, declared)}{elsewhere}")
            undeclared = True
            continue
        kind = info.get("inferred_type_name", "None")
        ok = _TYPES.get(kind)
        wrong_type = not isinstance(value, ok or object) or (kind in ("int", "float") and isinstance(value, bool))
        if ok is not None and value is not None and wrong_type:
            problems.append(f"'{name}' must be {kind} (default {info.get('default')}), got {value!r}")
            continue
        outside = _outside_choices(name, value, info, notebook)
        if outside:
            problems.append(outside)
        elif name == "run_id" and isinstance(value, str) and value and (why := run_id_problem(value)):
            problems.append(f"'run_id' {value!r} cannot name a run folder: {why}; {RUN_ID_FIX}")
    if problems:
        listed = f" {notebook} declares: {', '.join(sorted(declared))}." if undeclared else ""
        raise UsageError(f"{where}: " + "; ".join(problems) + "." + listed)
