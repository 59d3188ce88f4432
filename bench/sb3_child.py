"""One stable-baselines3 PPO run on CartPole-v1 for ``bench/solve.py``, in its own virtual environment (``.bench/sb3``).

Run by ``bench.solve`` from the repository root as
``.bench/sb3/bin/python -m bench.sb3_child --seed S --started T [--full] [--threads N]``, not by hand. ``T`` is
the parent's ``time.monotonic()`` just before it started this process (CLOCK_MONOTONIC is one clock for every
process on the machine), so "from process start" covers the interpreter's start-up and the imports of torch and
stable-baselines3, as the trainer's does for TensorFlow and TensorForce.

The settings are rl-zoo3's tuned ones for CartPole-v1 (its ``hyperparams/ppo.yml``): 8 environments in a
DummyVecEnv (each behind a Monitor, as rl-zoo3's ``make_vec_env`` builds them), MlpPolicy, 1e5 timesteps,
n_steps 32, batch_size 256, gae_lambda 0.8, gamma 0.98, n_epochs 20, ent_coef 0.0, learning rate and clip range
linear to 0 from 0.001 and 0.2. Torch keeps its default thread count unless ``--threads`` is given. Every
finished episode of the 8 environments is counted in finishing order (environment index order within one
vectorised step), and "solved" is ``bench.trainer_solve.solved_at`` over them: the same rule as for the trainer.
Without ``--full`` learning stops at the solve (the callback returns False); with it the run goes to the
1e5-timestep budget.

Prints one JSON line on stdout: the solve (seconds from process start and from the first timestep, timesteps), every
finished episode, torch's thread count and the versions used.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

from bench.trainer_solve import SOLVED_EPISODES, solved_at

ENV_ID = "CartPole-v1"
N_ENVS = 8
N_TIMESTEPS = 100_000
HYPERPARAMETERS: dict[str, Any] = {
    "n_steps": 32,
    "batch_size": 256,
    "gae_lambda": 0.8,
    "gamma": 0.98,
    "n_epochs": 20,
    "ent_coef": 0.0,
}
LEARNING_RATE = 0.001
CLIP_RANGE = 0.2


def linear(initial: float) -> Callable[[float], float]:
    """rl-zoo3's ``lin_X``: ``initial`` times the fraction of training left (1 at the start, 0 at the end)."""

    def schedule(progress_remaining: float) -> float:
        return progress_remaining * initial

    return schedule


def solve_callback(started: float, stop_when_solved: bool) -> Any:
    """A callback that records every finished episode and the first solve, and stops learning there if asked."""
    from stable_baselines3.common.callbacks import BaseCallback

    class SolveCallback(BaseCallback):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.episodes: list[dict[str, Any]] = []
            self.solve: dict[str, Any] | None = None
            self.first_timestep = 0.0

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                if "episode" in info:
                    self._finished(float(info["episode"]["r"]))
            return self.solve is None or not stop_when_solved

        def _finished(self, episode_return: float) -> None:
            self.episodes.append({"return": episode_return, "timesteps": self.num_timesteps})
            if self.solve is None and solved_at(self.episodes[-SOLVED_EPISODES:]) is not None:
                now = time.monotonic()
                self.solve = {
                    "from_start": now - started,
                    "from_first_timestep": now - self.first_timestep,
                    "timesteps": self.num_timesteps,
                    "episode": len(self.episodes),
                }

    return SolveCallback()


def run(seed: int, started: float, full: bool, threads: int | None) -> dict[str, Any]:
    import gymnasium
    import stable_baselines3
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv

    if threads is not None:
        torch.set_num_threads(threads)
    env = make_vec_env(ENV_ID, n_envs=N_ENVS, seed=seed, vec_env_cls=DummyVecEnv)
    model = PPO(
        "MlpPolicy",
        env,
        learning_rate=linear(LEARNING_RATE),
        clip_range=linear(CLIP_RANGE),
        seed=seed,
        device="cpu",
        verbose=0,
        **HYPERPARAMETERS,
    )
    callback = solve_callback(started, stop_when_solved=not full)
    callback.first_timestep = time.monotonic()
    model.learn(total_timesteps=N_TIMESTEPS, callback=callback)
    env.close()
    return {
        "solve": callback.solve,
        "episodes": callback.episodes,
        "timesteps": model.num_timesteps,
        "budget": N_TIMESTEPS,
        "threads": torch.get_num_threads(),
        "versions": {
            "stable-baselines3": stable_baselines3.__version__,
            "torch": torch.__version__,
            "gymnasium": gymnasium.__version__,
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--started", type=float, required=True, help="the parent's time.monotonic() at the start")
    parser.add_argument("--full", action="store_true", help="train to the budget instead of stopping once solved")
    parser.add_argument("--threads", type=int, help="torch's thread count (default: torch's own)")
    args = parser.parse_args()
    print(json.dumps(run(args.seed, args.started, args.full, args.threads)))


if __name__ == "__main__":
    main()
