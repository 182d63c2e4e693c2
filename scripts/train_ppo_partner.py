"""Train the PPO self-play population that stands in for the paper's PBT partner (see tomlib/agents/ppo.py).

Optional and offline: tomlib itself never needs torch. Run it from an environment that has tomlib's dependencies
plus stable-baselines3 (which brings torch; the CPU is enough):

    pip install -e . stable-baselines3
    python scripts/train_ppo_partner.py --members 3 --jobs 2 --steps 1500000

Each member is PPO (stable-baselines3) with one network driving both cooks of tomlib's own one-soup kitchen
(tomlib.agents._selfplay), shaped rewards annealed to 0 over the first ``--anneal`` share of its steps. The script
then copies each policy network into numpy, checks the numpy forward pass against torch's on states the policy
visited, evaluates the population with tomlib's own episode runner (self-play and with overcooked-ai's Greedy
cook) and writes data/partners/ppo_selfplay_<layout>.npz with a ``meta`` record of all of that.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

HYPER = {
    "n_games": 8,  # 16 cook slots
    "n_steps": 256,  # per slot and rollout: 4,096 samples per update
    "batch_size": 1024,
    "n_epochs": 8,
    "learning_rate": 1e-3,
    "gamma": 0.99,
    "gae_lambda": 0.98,
    "clip_range": 0.1,
    "ent_coef": 0.01,
    "vf_coef": 0.5,
    "max_grad_norm": 0.5,
    "net_arch": [64, 64],
}


def train_member(layout: str, seed: int, steps: int, anneal: float) -> dict[str, Any]:
    """Train one member; return its numpy layers, a learning curve and the training record."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import gymnasium as gym
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import VecEnv

    from tomlib.agents._selfplay import SelfPlayKitchens

    torch.set_num_threads(1)

    class Kitchens(VecEnv):
        """stable-baselines3's view of tomlib's self-play kitchens."""

        def __init__(self) -> None:
            self.k = SelfPlayKitchens(HYPER["n_games"], layout)
            box = gym.spaces.Box(-np.inf, np.inf, (self.k.obs_dim,), np.float32)
            super().__init__(2 * self.k.n, box, gym.spaces.Discrete(self.k.n_actions))

        def reset(self) -> np.ndarray:
            return self.k.reset()

        def step_async(self, actions: np.ndarray) -> None:
            self._actions = actions

        def step_wait(self) -> Any:
            return self.k.step(self._actions)

        def close(self) -> None:
            pass

        def get_attr(self, name: str, indices: Any = None) -> list[Any]:
            return [getattr(self, name)] * self.num_envs

        def set_attr(self, name: str, value: Any, indices: Any = None) -> None:
            setattr(self, name, value)

        def env_method(self, name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
            return [None] * self.num_envs

        def env_is_wrapped(self, wrapper_class: Any, indices: Any = None) -> list[bool]:
            return [False] * self.num_envs

    class Anneal(BaseCallback):
        def __init__(self, env: Kitchens) -> None:
            super().__init__()
            self.env, self.curve, self.t0 = env, [], time.time()

        def _on_step(self) -> bool:
            done = self.num_timesteps / 2  # two cook samples a kitchen step
            self.env.k.shaping = max(0.0, 1.0 - done / (anneal * steps))
            return True

        def _on_rollout_end(self) -> None:
            recent = self.env.k.finished[-4 * HYPER["n_games"] :]
            if recent:
                point = {
                    "kitchen_steps": self.num_timesteps // 2,
                    "wall_s": round(time.time() - self.t0, 1),
                    "time": round(statistics.mean(r["time"] for r in recent), 2),
                    "delivered": round(statistics.mean(r["delivered"] for r in recent), 3),
                    "shaping": round(self.env.k.shaping, 3),
                }
                self.curve.append(point)
                if len(self.curve) % 20 == 0:
                    print(f"member seed {seed}: {json.dumps(point)}", flush=True)

    env = Kitchens()
    hyper = {k: v for k, v in HYPER.items() if k not in ("n_games", "net_arch")}
    model = PPO(
        "MlpPolicy", env, **hyper, policy_kwargs={"net_arch": HYPER["net_arch"]}, seed=seed, device="cpu", verbose=0
    )
    cb = Anneal(env)
    t0 = time.time()
    model.learn(total_timesteps=2 * steps, callback=cb)
    wall = time.time() - t0
    policy = model.policy
    linears = [m for m in policy.mlp_extractor.policy_net if isinstance(m, torch.nn.Linear)] + [policy.action_net]
    layers = [(m.weight.detach().numpy().copy(), m.bias.detach().numpy().copy()) for m in linears]
    # the numpy forward pass must give torch's logits on states this policy visits
    obs = np.concatenate([env.k.reset()] + [env.k.step(model.predict(env.k._obs())[0])[0] for _ in range(200)])
    with torch.no_grad():
        ref = policy.action_net(policy.mlp_extractor.forward_actor(torch.as_tensor(obs))).numpy()
    from tomlib.agents.ppo import Policy

    err = float(np.abs(Policy(tuple(layers)).logits(obs) - ref).max())
    return {
        "seed": seed,
        "layers": layers,
        "curve": cb.curve,
        "kitchen_steps": int(model.num_timesteps // 2),
        "wall_s": round(wall, 1),
        "kitchen_steps_per_s": round(model.num_timesteps / 2 / wall, 1),
        "max_logit_error_numpy_vs_torch": err,
        "versions": {"torch": torch.__version__, "stable_baselines3": __import__("stable_baselines3").__version__},
    }


def evaluate(population: Any, layout: str, episodes: int) -> dict[str, Any]:
    """Play the population with tomlib's own runner: each member with itself, and with Greedy."""
    from tomlib.agents import play_episode
    from tomlib.agents.partners import GreedyAgent
    from tomlib.agents.ppo import PPOPartner
    from tomlib.envs.overcooked import OvercookedGame

    game = OvercookedGame(layout)

    async def times(make: Any, condition: str) -> list[float]:
        return [
            (await play_episode(game, make(), seed=42, episode=i, condition=condition)).score for i in range(episodes)
        ]

    out: dict[str, Any] = {"episodes": episodes, "seed": 42, "members": []}
    for m in range(len(population.members)):
        selfplay = asyncio.run(times(lambda m=m: [PPOPartner(population, m), PPOPartner(population, m)], "self"))
        greedy = asyncio.run(times(lambda m=m: [PPOPartner(population, m), GreedyAgent()], "greedy"))
        out["members"].append(
            {
                "member": m,
                "selfplay_time_mean": round(statistics.mean(selfplay), 2),
                "selfplay_delivered": sum(t < game.horizon for t in selfplay),
                "with_greedy_time_mean": round(statistics.mean(greedy), 2),
                "with_greedy_delivered": sum(t < game.horizon for t in greedy),
            }
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layout", default="overcooked_symmetric")
    ap.add_argument("--members", type=int, default=3)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=1_500_000, help="kitchen steps per member")
    ap.add_argument("--anneal", type=float, default=0.5, help="share of the steps over which shaping goes to 0")
    ap.add_argument("--jobs", type=int, default=2, help="members trained at once (one core each)")
    ap.add_argument("--episodes", type=int, default=30, help="evaluation episodes per member and partner")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tomlib.agents.ppo import Policy, Population, action_names, layout_digest, weights_path
    from tomlib.envs.overcooked import OvercookedGame

    game = OvercookedGame(args.layout)
    out = args.out or weights_path(args.layout)
    seeds = list(range(args.first_seed, args.first_seed + args.members))
    t0 = time.time()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        runs = list(
            pool.map(
                train_member, [args.layout] * len(seeds), seeds, [args.steps] * len(seeds), [args.anneal] * len(seeds)
            )
        )
    members = [run.pop("layers") for run in runs]
    arrays: dict[str, Any] = {}
    for i, layers in enumerate(members):
        for j, (w, b) in enumerate(layers):
            arrays[f"m{i}_w{j}"], arrays[f"m{i}_b{j}"] = w, b
    meta = {
        "what": "PPO self-play population: a labelled stand-in for the paper's PBT partner, not PBT",
        "layout": args.layout,
        "layout_digest": layout_digest(game),
        "task": f"first onion soup delivered, step limit {game.horizon}, cook time {game.cook_time}",
        "actions": list(action_names(game)),
        "features": "overcooked-ai featurize_state (each cook's own view)",
        "members": len(runs),
        "layers": len(HYPER["net_arch"]) + 1,
        "hyperparameters": {**HYPER, "steps": args.steps, "anneal": args.anneal},
        "training": runs,
        "wall_s_total": round(time.time() - t0, 1),
        "machine": {
            "python": platform.python_version(),
            "processor": platform.processor() or platform.machine(),
            "jobs": args.jobs,
        },
        "script": "scripts/train_ppo_partner.py",
        "made": time.strftime("%Y-%m-%d"),
    }
    population = Population(tuple(Policy(tuple(layers)) for layers in members), meta)
    meta["evaluation"] = evaluate(population, args.layout, args.episodes)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, meta=np.array(json.dumps(meta)), **arrays)
    Population.load(game, out)  # the file as written passes tomlib's own checks (kitchen, actions, features)
    print(json.dumps(meta["evaluation"], indent=1))
    print(f"wrote {out} ({out.stat().st_size / 1024:.0f} KB) in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
