"""How agents are built for the adaptive-ToM experiments.

The tasks, the :class:`Setup` (formal or LLM agents, and every reading of ours they run under),
a :class:`Reproduction`, and the notebooks' parameter checks.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from tomlib.agents import (
    AdaptiveToMAgent,
    Agent,
    AgentSpecError,
    FormalToMAgent,
    is_agent_spec,
    load_agent,
    split_specs,
)
from tomlib.agents.adaptive import EXPERT_PREDICTIONS
from tomlib.agents.llm import HISTORY_STEPS, LLMPredictor, LLMResponder, LLMToM, LLMToMAgent
from tomlib.agents.partners import GreedyAgent, PartnerUnavailable, pbt_partner
from tomlib.agents.ppo import SOURCE_SUFFIX, Population, PPOPartner, WeightsUnavailable
from tomlib.envs import PREFERENCES, TASKS, Game, NoExactModel, check_preference, load_game, shared_game
from tomlib.experiments._checks import check_models, check_names, check_whole
from tomlib.llm import ChatModel, source_of
from tomlib.trace import RunLog

PAPER_ID = "adaptive_tom"
THREE_ACTION_TASKS: dict[str, str] = {
    "memory_1": "matrix(memory=1,actions=3)",
    "memory_n": "matrix(memory=n,actions=3)",
}
FIXED = ("ToM-0", "ToM-1", "ToM-2")
TABLE1_PAIRS = [(a, b) for a in FIXED for b in FIXED]
ATOM = {"FTL": "A-ToM (FTL)", "Hedge": "A-ToM (Hedge)"}
TABLE3_AGENTS = ("ToM-0", "ToM-1", "ToM-2", "Greedy", "PBT", "A-ToM (FTL)", "A-ToM (Hedge)")
PBT_CHOICES = ("none", "ppo-selfplay")
UNKNOWN_AGENT = (
    "unknown agent {spec!r}; use ToM-0, ToM-1, ToM-2, " + ", ".join(ATOM.values()) + ", Greedy, PBT, or your own "
    "agent's import path, package.module:Class(key=value)"
)
STAND_IN_NOTE = (
    "stand-in, not the paper's PBT: a PPO self-play population trained on our kitchen and task "
    "(tomlib.agents.ppo; data/partners)"
)


@functools.cache
def stand_in_population() -> Population:
    """The PPO stand-in for PBT on the Overcooked task's kitchen, read and checked once per process."""
    return Population.load(load_task("overcooked"))


def _stand_in(member: int | None, deterministic: bool) -> Agent:
    """The PPO stand-in in PBT's seat: the shipped population's ``member`` (None: drawn per episode)."""
    return PPOPartner(stand_in_population(), member, deterministic)


class NotReproduced(RuntimeError):
    """A condition we cannot run here (e.g. a pretrained partner we do not have); the message says why."""


@dataclass
class Setup:
    """How agents are built: formal, or LLM agents on a model."""

    model: str = "formal"
    """``formal`` (the exact ToM-k agents) or a configured model name (§3.4's LLM agents)."""
    llm_mode: str = "replay"
    """Replay the committed transcripts, record, or call the model live (LLM agents only)."""
    temperature: float = 0.1
    """The LLM agents' sampling temperature (§4.2: 0.1)."""
    chat: ChatModel | None = None
    """A model to play with instead of building ``model``'s (tests)."""
    tie_break: str = "independent"
    """The formal agents' tie model (:func:`tomlib.tom.tie_stream`); the paper says nothing of ties."""
    tie_epsilon: float = 0.0
    """ε of the shared tie model: the probability that an agent draws independently at a tie."""
    prefer: str = ""
    """What formal agents prefer among equally good joint moves in the grid worlds and the kitchen
    (:data:`tomlib.envs.PREFERENCES`); "" leaves each game's default (the grid: own progress; the kitchen: none)."""
    llm_history: int = HISTORY_STEPS
    """How many of the last joint actions LLM agents see in each prompt (0: none; the matrix game shows none)."""
    carry_losses: bool = False
    """A-ToM's expert losses: afresh every episode (the default; the paper does not say) or carried across the
    episodes of a condition, which then run one after another with the same A-ToM agent."""
    expert_prediction: str = "draw"
    """How formal A-ToM's experts predict among equally good actions and are charged
    (:data:`tomlib.agents.adaptive.EXPERT_PREDICTIONS`); the paper's Algorithms give one action and a 0/1 loss."""
    pbt: str = "none"
    """Who plays PBT's seat: ``none`` (not reproduced: no pretrained population offline) or ``ppo-selfplay``, the
    labelled stand-in of :mod:`tomlib.agents.ppo`; its rows' source then ends in ``+ppo:selfplay``."""
    ppo_member: int | None = None
    """The stand-in's member: drawn per episode (None, the default) or pinned."""
    ppo_deterministic: bool = False
    """The stand-in samples its policy (the default) or plays the most likely action."""

    def __post_init__(self) -> None:
        if self.pbt not in PBT_CHOICES:
            raise ValueError(f"pbt must be one of {', '.join(PBT_CHOICES)}; got {self.pbt!r}")
        if self.prefer:
            check_preference(self.prefer)
        if self.expert_prediction not in EXPERT_PREDICTIONS:
            raise ValueError(
                f"expert_prediction must be one of {', '.join(EXPERT_PREDICTIONS)}; got {self.expert_prediction!r}"
            )

    def game(self, task: str, tasks: dict[str, str] = TASKS) -> Game:
        """The task's game, with this setup's ``prefer`` where the game has that reading."""
        game = load_task(task, tasks)
        return _game(tasks[task], self.prefer) if self.prefer and hasattr(game, "prefer") else game

    def readings(self, game: Game | None = None) -> dict[str, str]:
        """The readings (``data/readings/adaptive_tom.csv``) as the units tables' columns, so a run under another
        reading sits beside the default's instead of replacing it: ``tie_break`` for formal agents (``independent``
        or ``shared(ε=…)``) and, given the game, its ``prefer``; ``llm_history`` for LLM agents; ``carry_losses``
        for both (empty where one does not apply)."""
        formal = self.model == "formal"
        ties = "independent" if self.tie_break == "independent" else f"shared(ε={self.tie_epsilon:g})"
        out = {
            "tie_break": ties if formal else "",
            "expert_prediction": self.expert_prediction if formal else "",
            "llm_history": "" if formal else str(self.llm_history),
            "carry_losses": str(self.carry_losses),
        }
        if game is not None:
            out["prefer"] = str(getattr(game, "prefer", "")) if formal else ""
        return out

    def reading(self) -> str:
        """The readings this setup departs from, as a run's log says it (``tie_break=shared(ε=0)``, ``prefer=none``),
        or ``default``: what ``tomlib runs list`` shows and ``tomlib view EXPERIMENT`` opens the default's run by."""
        formal = self.model == "formal"
        parts = []
        if formal and self.tie_break != "independent":
            parts.append(f"tie_break={self.tie_break}(ε={self.tie_epsilon:g})")
        if formal and self.prefer:
            parts.append(f"prefer={self.prefer}")
        if formal and self.expert_prediction != "draw":
            parts.append(f"expert_prediction={self.expert_prediction}")
        if not formal and self.llm_history != HISTORY_STEPS:
            parts.append(f"llm_history={self.llm_history}")
        if self.carry_losses:
            parts.append("carry_losses=True")
        if self.ppo_member is not None:
            parts.append(f"ppo_member={self.ppo_member}")
        if self.ppo_deterministic:
            parts.append("ppo_deterministic=True")
        return ", ".join(parts) or "default"

    @property
    def source(self) -> str:
        base = "formal" if self.model == "formal" else source_of(self.model)
        return base + (SOURCE_SUFFIX if self.pbt == "ppo-selfplay" else "")

    def connect(self, log: RunLog) -> None:
        if self.model != "formal" and self.chat is None:
            self.chat = ChatModel.from_name(self.model, mode=self.llm_mode)  # type: ignore[arg-type]
        if self.chat is not None:
            log.observe(self.chat)

    def agent(self, spec: str) -> Agent:
        """``ToM-0``/``ToM-1``/``ToM-2``, ``A-ToM (FTL)``, ``A-ToM (Hedge)``, ``Greedy``, ``PBT``, or an import path
        ``package.module:Class(key=value)`` (:func:`tomlib.agents.load_agent`), built the same way under every setup:
        the agent is its author's, with or without a model of its own."""
        if self.chat is None or spec in ("Greedy", "PBT") or is_agent_spec(spec):  # no model of ours in them
            make, arguments = self._formal(spec)
            try:
                return make(**arguments)
            except (PartnerUnavailable, WeightsUnavailable) as exc:
                raise NotReproduced(f"not reproduced: {exc}") from None
        if re.fullmatch(r"ToM-\d", spec):
            llm = LLMToM(self.chat, temperature=self.temperature, history_steps=self.llm_history)
            return LLMToMAgent(int(spec.removeprefix("ToM-")), llm)
        if spec in ATOM.values():
            llm = LLMToM(self.chat, temperature=self.temperature, history_steps=self.llm_history)
            return AdaptiveToMAgent(
                "ftl" if "FTL" in spec else "hedge",
                predictor=LLMPredictor(llm),
                responder=LLMResponder(llm),
                carry_losses=self.carry_losses,
            )
        raise ValueError(UNKNOWN_AGENT.format(spec=spec))

    def settings(self, spec: str) -> tuple[Any, ...]:
        """What a formal agent of ``spec`` is made from: its maker and every argument it gets, nothing else. Two
        formal agents with equal settings play alike from the same random streams, so a condition whose two agents'
        settings and game are unchanged plays as before under another reading (:mod:`._played`)."""
        make, arguments = self._formal(spec)
        return (getattr(make, "__qualname__", repr(make)), *sorted(arguments.items()))

    def _formal(self, spec: str) -> tuple[Callable[..., Agent], dict[str, Any]]:
        """How :meth:`agent` makes a formal ``spec``: the maker and its arguments (the single place they are set)."""
        if is_agent_spec(spec):  # a worker process rebuilds it from the path: the spec is its every argument
            return load_agent, {"spec": spec}
        ties = {"tie_break": self.tie_break, "tie_epsilon": self.tie_epsilon}
        if re.fullmatch(r"ToM-\d", spec):
            return FormalToMAgent, {"order": int(spec.removeprefix("ToM-")), **ties}
        if spec in ATOM.values():
            algorithm = "ftl" if "FTL" in spec else "hedge"
            knobs = {"carry_losses": self.carry_losses, "expert_prediction": self.expert_prediction}
            return AdaptiveToMAgent, {"algorithm": algorithm, **ties, **knobs}
        if spec == "Greedy":
            return GreedyAgent, {}
        if spec == "PBT":
            if self.pbt == "none":
                return pbt_partner, {}
            return _stand_in, {"member": self.ppo_member, "deterministic": self.ppo_deterministic}
        raise ValueError(UNKNOWN_AGENT.format(spec=spec))

    def check_playable(self, game: Game, players: Sequence[str]) -> None:
        """Formal ToM agents need the game's exact joint values; say so before playing if it has none."""
        if self.chat is None and not game.has_exact_values and any(p != "Greedy" for p in players):
            try:
                game.joint_value(game.reset(0), ("stay", "stay"))
            except NoExactModel as exc:
                raise NotReproduced(f"not reproduced: {exc}") from None


@dataclass
class Reproduction:
    """A reproduced table: contract rows, per-episode scores, and the run log that holds every step."""

    table: pd.DataFrame
    episodes: pd.DataFrame
    run_id: str
    readings: dict[str, str] = field(default_factory=dict)  # the readings it ran under, as units columns
    weights: pd.DataFrame = field(default_factory=lambda: weight_frame([]))
    """A-ToM's weights at every step of every episode (:func:`weight_frame`): what §6.1 and Fig. 3 are computed
    from. The run log keeps them for its detail episodes only."""


WEIGHT_COLUMNS = ("condition", "agent", "episode", "step", "payload")


def weight_frame(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """A-ToM's per-step weights as a frame with the columns of ``expert_weights`` events read back from a log."""
    return pd.DataFrame(list(rows), columns=list(WEIGHT_COLUMNS))


AGENT_NAMES = ["ToM-0", "ToM-1", "ToM-2", *ATOM.values(), "Greedy", "PBT"]
"""The agent types tomlib builds; an import path ``package.module:Class(key=value)`` names any other
(:func:`check_agents`)."""


def check_agents(name: str, value: Any) -> list[str]:
    """A comma-separated list of agents, each one of :data:`AGENT_NAMES` or an import path that loads (so a typo in
    either fails here, in one line, before any work); commas inside an import path's parentheses stay in it.

    Args:
        name: the parameter's name, for the error.
        value: the list, e.g. ``"ToM-0,Greedy,my_agents:CopyPartner(lag=2)"``.
    """
    if not isinstance(value, str):
        raise TypeError(f"parameter {name} must be a comma-separated string such as 'ToM-0,Greedy'")
    items = split_specs(value)
    unknown = [v for v in items if v not in AGENT_NAMES and not is_agent_spec(v)]
    if unknown or not items:
        raise ValueError(
            f"parameter {name}: unknown {unknown or 'empty list'}; choose from {', '.join(AGENT_NAMES)}, or give an "
            "import path package.module:Class(key=value)"
        )
    for spec in items:
        if is_agent_spec(spec):
            try:
                load_agent(spec)
            except AgentSpecError as exc:  # the one line that says what is wrong with it, under the parameter's name
                raise AgentSpecError(f"parameter {name}: {exc}") from exc.__cause__
    return items


def check_parameters(
    *,
    model: str,
    llm_mode: str,
    episodes: Any,
    llm_episodes: Any,
    seed: Any,
    tasks: Any = None,
    llm_tasks: Any = None,
    llm_agents: Any = None,
    tie_break: str = "independent",
    tie_epsilon: Any = 0.0,
    fig3_episode: Any = 0,
    llm_history: Any = HISTORY_STEPS,
    pbt: Any = "none",
    prefer: Any = "",
    expert_prediction: Any = "draw",
) -> None:
    """Notebooks 01-05's parameters, before any work: whole repetition counts, a configured model (or "" for
    none), a known mode, known task and agent names, a tie model, a preference among equal moves and who plays PBT's
    seat.

    Args:
        model: a configured model name, or "" for the formal agents only.
        llm_mode: replay, record or live.
        episodes: the formal agents' episodes per condition (§4.2: 30).
        llm_episodes: the LLM agents' episodes per condition.
        seed: the seed of the episodes (§4.2: 42).
        tasks: the formal agents' task names (§4.1).
        llm_tasks: the LLM agents' task names.
        llm_agents: the LLM agent types of Table 3 (§6.1), or import paths of your own agents.
        tie_break: the formal agents' tie model (``independent`` or ``shared``).
        tie_epsilon: ε of the shared tie model, in [0, 1].
        fig3_episode: the episode Fig. 3 draws (§5.3).
        llm_history: how many of the last joint actions LLM prompts show.
        pbt: who plays PBT's seat (:data:`PBT_CHOICES`; §6.1).
        prefer: the formal agents' preference among equally good moves ("": each game's default).
        expert_prediction: how formal A-ToM's experts predict among equally good actions (§3.3).
    """
    from tomlib.tom import TIE_BREAKS

    if pbt not in PBT_CHOICES:
        raise ValueError(
            f"parameter pbt must be one of {', '.join(PBT_CHOICES)} (ppo-selfplay: the labelled PPO stand-in); "
            f"got {pbt!r}"
        )
    if prefer != "" and prefer not in PREFERENCES:
        raise ValueError(
            f'parameter prefer must be one of {", ".join(PREFERENCES)}, or "" for each game\'s own; got {prefer!r}'
        )
    if expert_prediction not in EXPERT_PREDICTIONS:
        raise ValueError(
            f"parameter expert_prediction must be one of {', '.join(EXPERT_PREDICTIONS)}; got {expert_prediction!r}"
        )
    if tie_break not in TIE_BREAKS:
        raise ValueError(f"parameter tie_break must be one of {', '.join(TIE_BREAKS)}; got {tie_break!r}")
    if isinstance(tie_epsilon, bool) or not isinstance(tie_epsilon, int | float) or not 0 <= tie_epsilon <= 1:
        raise ValueError(f"parameter tie_epsilon is a probability in [0, 1]; got {tie_epsilon!r}")
    check_whole("episodes", episodes, 1)
    check_whole("llm_episodes", llm_episodes, 1)
    check_whole("seed", seed, None)
    check_whole("fig3_episode", fig3_episode, 0)
    check_whole("llm_history", llm_history, 0)
    if not isinstance(model, str):
        raise TypeError(f'parameter model must be a model name from configs/models.yaml or ""; got {model!r}')
    if model:
        check_models(model, llm_mode)
    for name, value in (("tasks", tasks), ("llm_tasks", llm_tasks)):
        if value is not None:
            check_names(name, value, list(TASKS))
    if llm_agents is not None:
        check_agents("llm_agents", llm_agents)


def load_task(task: str, tasks: dict[str, str] = TASKS) -> Game:
    """The game behind a task name (``memory_1``, ``game2``, ``overcooked``, ...).

    Args:
        task: a task name of ``tasks``.
        tasks: task name -> game (:data:`TASKS`, §4.1's five settings).
    """
    if task not in tasks:
        raise ValueError(f"unknown task {task!r}; known: {', '.join(tasks)}")
    return _game(tasks[task], "")


@functools.cache
def _game(spec: str, prefer: str) -> Game:
    """One game per spec and ``prefer`` ("" for the game's own) in a process, so every table that plays it shares
    what the game keeps (the exact model, the best responses per state, the PPO partner's answers). Nothing changes a
    game after it is made."""
    game = load_game(spec, prefer=prefer) if prefer else shared_game(spec)
    _MADE[id(game)] = (spec, prefer)  # kept alive by the cache, so the id is never another game's
    return game


_MADE: dict[int, tuple[str, str]] = {}


def made_from(game: Game) -> tuple[str, str] | None:
    """The (spec, prefer) a game of :func:`_game` was made from, so another process can make the same game; None for
    a game made elsewhere."""
    return _MADE.get(id(game))
