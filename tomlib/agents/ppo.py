"""A PPO self-play cook: our labelled stand-in for the paper's PBT partner (``adaptive-tom-aaai2026.txt`` §6.1).

The paper's PBT partner is a population-based-training policy pretrained on its layout (Carroll et al. 2019); no
such policy is available offline. What we ship instead is a small population of PPO policies, each trained by
self-play (one set of weights drives both cooks) on *our* kitchen and *our* one-soup task with
``scripts/train_ppo_partner.py`` (stable-baselines3 + overcooked-ai, torch on the CPU). Its differences from the
paper's partner are stated, not hidden: self-play instead of population-based training, our layout and task
instead of the authors', overcooked-ai's hand-made ``featurize_state`` observation instead of the lossless grid
encoding with a convolutional network. Rows that use it carry the source suffix ``+ppo:selfplay``.

At run time the trained networks are plain numpy (two tanh layers and a linear action head): torch is needed only
to train. The weights, each member's training record and the evaluation the script made are in
``data/partners/ppo_selfplay_<layout>.npz``; its ``meta`` says how they were made.

Training plays tomlib's own ``OvercookedGame.transition``, so a change to the kitchen's rules, its grid or its cook
time changes the layout digest in the weights' ``meta``, and :meth:`Population.load` refuses the old weights with the
command to retrain. Train in a venv of its own (``DEVELOPERS.md``, build facts: torch here is a CUDA wheel); new
weights change notebook 03's ``formal+ppo:selfplay`` rows.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tomlib.agents._base import Agent, Decision, Emit, Site, no_emit
from tomlib.envs import Game
from tomlib.envs.overcooked import lib_key
from tomlib.paths import data_dir

SOURCE_SUFFIX = "+ppo:selfplay"
"""Appended to the source of every row an episode with the stand-in went into (``formal+ppo:selfplay``)."""


class WeightsUnavailable(RuntimeError):
    """No usable PPO weights for this kitchen; the message says why and how to make them."""


def weights_path(layout: str) -> Path:
    """Where the population for ``layout`` lives."""
    return data_dir() / "partners" / f"ppo_selfplay_{layout}.npz"


def layout_digest(game: Game) -> str:
    """A short hash of the kitchen's grid and cook time: weights trained on another kitchen are refused."""
    text = "\n".join(game.grid) + f"\ncook_time={game.cook_time}"  # type: ignore[attr-defined]
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def features(game: Game, state: Any) -> np.ndarray:
    """Both cooks' observations, shape (2, d): overcooked-ai's ``featurize_state`` (each cook's own view: what it
    holds, where the nearest onion/dish/pot/window is, the pot's contents, the partner's relative position), the
    same function training used."""
    return np.asarray(game.mdp.featurize_state(state.lib, game.planner), dtype=np.float32)  # type: ignore[attr-defined]


def policy_probabilities(game: Game, state: Any, policy: Policy, player: int) -> np.ndarray:
    """``policy``'s action distribution for ``player`` in ``state`` (:func:`features`; read-only), kept per game and
    :func:`tomlib.envs.overcooked.lib_key`: a partner meets the same kitchen state in many steps and episodes."""
    seen = game.__dict__.setdefault("_ppo_features", {})
    memo = game.__dict__.setdefault("_ppo_probabilities", {})
    state_key = lib_key(state.lib)
    key = (id(policy), player, state_key)
    got = memo.get(key)
    if got is None or got[0] is not policy:  # the policy is kept with its answer, so its id is never reused
        obs = seen.get(state_key)
        if obs is None:
            obs = seen[state_key] = features(game, state)
        probs = policy.probabilities(obs[player])
        probs.setflags(write=False)
        got = memo[key] = (policy, probs)
    return got[1]


def action_names(game: Game) -> tuple[str, ...]:
    """Our action names in the order of the policy's outputs (overcooked-ai's ``Action.INDEX_TO_ACTION``)."""
    from tomlib.envs.overcooked import overcooked_lib

    actions, _ = overcooked_lib()
    return tuple(game.action_name(a) for a in actions.Action.INDEX_TO_ACTION)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Policy:
    """One member: ``layers`` are (W, b) pairs, tanh after each but the last, whose outputs are action logits."""

    layers: tuple[tuple[np.ndarray, np.ndarray], ...]

    def logits(self, obs: np.ndarray) -> np.ndarray:
        x = np.asarray(obs, dtype=np.float64)
        for w, b in self.layers[:-1]:
            x = np.tanh(x @ w.T + b)
        w, b = self.layers[-1]
        return x @ w.T + b

    def probabilities(self, obs: np.ndarray) -> np.ndarray:
        """Softmax of the logits: the action distribution PPO trained (last axis)."""
        z = self.logits(obs)
        z = z - z.max(axis=-1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=-1, keepdims=True)


@dataclass(frozen=True)
class Population:
    """The trained members and how they were made (``meta``: layout digest, actions, training, evaluation)."""

    members: tuple[Policy, ...]
    meta: dict[str, Any]

    @classmethod
    def load(cls, game: Game, path: Path | None = None) -> Population:
        """Read and check the weights for ``game``'s kitchen; errors name the cause and the fix."""
        layout = getattr(game, "layout_name", None)
        if layout is None:
            raise WeightsUnavailable(f"the PPO self-play partner plays Overcooked only, not {game.info.name}")
        path = path or weights_path(layout)
        train = f"train them with `python scripts/train_ppo_partner.py --layout {layout}` (needs stable-baselines3)"
        if not path.exists():
            raise WeightsUnavailable(
                f"no PPO self-play weights for the kitchen {layout!r} ({path} is missing); {train}"
            )
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            members = tuple(
                Policy(tuple((z[f"m{i}_w{j}"], z[f"m{i}_b{j}"]) for j in range(int(meta["layers"]))))
                for i in range(int(meta["members"]))
            )
        if meta.get("layout_digest") != layout_digest(game):
            raise WeightsUnavailable(
                f"{path.name} was trained on another kitchen than {layout!r} as loaded now (grid or cook time "
                f"differ: digest {meta.get('layout_digest')} vs {layout_digest(game)}); {train}"
            )
        if tuple(meta.get("actions", ())) != action_names(game):
            raise WeightsUnavailable(f"{path.name} orders its actions {meta.get('actions')}, not as this overcooked-ai")
        width = int(features(game, game.reset(0)).shape[1])
        if members[0].layers[0][0].shape[1] != width:
            raise WeightsUnavailable(
                f"{path.name} expects {members[0].layers[0][0].shape[1]} features a cook, this overcooked-ai gives "
                f"{width}; {train}"
            )
        return cls(members, meta)

    def summary(self) -> pd.DataFrame:
        """One row per member: its training (seed, kitchen steps, minutes, numpy-vs-torch logit error) and the
        training script's evaluation with tomlib's own runner (mean time with itself and with Greedy)."""
        scored = {e["member"]: e for e in self.meta.get("evaluation", {}).get("members", [])}
        rows = []
        for i, t in enumerate(self.meta.get("training", [])):
            e = scored.get(i, {})
            rows.append(
                {
                    "member": i,
                    "seed": t["seed"],
                    "kitchen steps": t["kitchen_steps"],
                    "training minutes": round(t["wall_s"] / 60, 1),
                    "max |logit| error numpy vs torch": t["max_logit_error_numpy_vs_torch"],
                    "time with itself": e.get("selfplay_time_mean"),
                    "time with Greedy": e.get("with_greedy_time_mean"),
                }
            )
        return pd.DataFrame(rows)

    def curves(self) -> pd.DataFrame:
        """Each member's learning curve: mean time of its recent training episodes against kitchen steps."""
        return pd.DataFrame(
            [{"member": i, **point} for i, t in enumerate(self.meta.get("training", [])) for point in t["curve"]]
        )


class PPOPartner(Agent):
    """A member of the PPO self-play population, playing one seat.

    ``member=None`` (the default) draws a member per episode from the agent's own random stream, as a population
    partner would vary; an index pins one. ``deterministic=False`` (the default) samples from the policy's
    distribution, which is the policy PPO trained and how self-play agents are usually evaluated; argmax play of an
    RL policy can freeze in a loop once a partner leaves the states it was trained on.
    """

    name = "PPO self-play"
    immediate = True

    def __init__(self, population: Population | None = None, member: int | None = None, deterministic: bool = False):
        self.population = population
        self.member = member
        self.deterministic = deterministic

    def start_episode(
        self, game: Game, player: int, rng: random.Random, emit: Emit = no_emit, site: Site | None = None
    ) -> None:
        super().start_episode(game, player, rng, emit, site)
        if self.population is None:
            self.population = Population.load(game)
        n = len(self.population.members)
        if self.member is not None and not 0 <= self.member < n:
            raise ValueError(f"member {self.member} is not in the population (0..{n - 1})")
        self.index = self.rng.randrange(n) if self.member is None else self.member
        self.policy = self.population.members[self.index]
        self.names = tuple(self.population.meta["actions"])  # checked against the game when loaded

    async def act(self, state: Any) -> Decision:
        probs = policy_probabilities(self.game, state, self.policy, self.player)
        if self.deterministic:
            k = int(np.argmax(probs))
        else:
            k = self.rng.choices(range(len(probs)), weights=probs.tolist())[0]
        return Decision(self.names[k], {"policy": f"ppo-selfplay member {self.index}", "p": round(float(probs[k]), 3)})
