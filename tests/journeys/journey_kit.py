"""The bundled config library as a user meets it, and the trainer run the way ``experiment start --local`` runs it.

Expectations here are written out by hand from what the levels are (which act in discrete or continuous actions,
which observe images) and what the agents can do, not derived from the code under test, so a wrong rule in
``trainer.preflight`` fails a test instead of agreeing with itself.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import yaml
from process_kit import stop_process

from trainer.kernel.spec import ConfigLibrary, Experiment, load_experiment, to_yaml
from trainer.kernel.spec.library import BUNDLED_CONFIGS

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ConfigLibrary((BUNDLED_CONFIGS,))
RUN_MODES = ("single", "multi-threaded", "distributed")
TRAINER = [sys.executable, "-m", "trainer"]  # the image's entrypoint


def bundled(kind: str) -> list[str]:
    return sorted(path.stem for path in (BUNDLED_CONFIGS / kind).iterdir() if path.suffix in (".yaml", ".json"))


# What each bundled environment is: its action type and whether it observes images.
ENVIRONMENTS: dict[str, dict[str, Any]] = {
    "acrobot": {"actions": "int", "images": False},
    "cartpole": {"actions": "int", "images": False},
    "mountain-car": {"actions": "int", "images": False},
    "mountain-car-continuous": {"actions": "float", "images": False},
    "pendulum": {"actions": "float", "images": False},
    "space-invaders": {"actions": "int", "images": True},
}
# Why a bundled agent cannot act in an environment (None: it can), by what the agent is.
DISCRETE_ONLY_AGENTS = {"dqn", "dqn-visual"}  # Q-learning: one value per discrete action
IMAGE_ONLY_AGENTS = {"dqn-visual"}  # its own network starts with conv2d layers


def rejection(agent: str, environment: str) -> str | None:
    """The words a rejection of this pair must contain, or None when the pair must train."""
    traits = ENVIRONMENTS[environment]
    if agent in DISCRETE_ONLY_AGENTS and traits["actions"] != "int":
        return "acts only on discrete actions"
    if agent in IMAGE_ONLY_AGENTS and not traits["images"]:
        return "conv2d layer needs an image"
    return None


def pairs() -> list[tuple[str, str]]:
    return [(agent, environment) for agent in bundled("agents") for environment in bundled("environments")]


# On images the bundled agents' `auto` networks are two stride-1 conv2d layers of 64 filters over 84x84 frames (for
# the policy and again for a baseline or critic): an update costs seconds per sample batch on a laptop CPU. So image
# cases get a budget of 32 timesteps (4 episodes of 8 steps), in which a2c (every 32 timesteps) and dqn-visual (from
# 32 timesteps) update, and ppo 16 (2 episodes: it updates every 2, and each update is most of its case's time);
# vpg and trpo (10-episode batches) and dqn (64-sample batches) do not, but their update graphs are still built
# (TensorForce traces them at the first observe), and their updates run on the vector levels.
NO_UPDATE_ON_IMAGES = {"vpg", "trpo", "dqn"}
IMAGE_TIMESTEPS = {"ppo": 16}
EPISODE_STEPS = 8  # episodes cut at 8 agent steps, so episode-batch agents update within a tiny budget


def expects_update(agent: str, environment: str) -> bool:
    return not (ENVIRONMENTS[environment]["images"] and agent in NO_UPDATE_ON_IMAGES)


def matrix_spec(agent: str, environment: str, run_mode: str) -> dict[str, Any]:
    """A bundled agent on a bundled environment with a tiny budget that still reaches a first update.

    Episodes are cut at :data:`EPISODE_STEPS` agent steps so that agents updating per batch of episodes update
    within the budget, and DQN's replay starts after one batch instead of 1,000 / 10,000 timesteps; the agents' own
    networks, optimizers and all other arguments are the bundled ones.
    """
    agent_spec: Any = agent
    if agent in DISCRETE_ONLY_AGENTS:
        # replay from the first batch on, in a memory sized to the budget (10,000 Atari frames are 1.1 GB)
        data = json.loads((BUNDLED_CONFIGS / "agents" / f"{agent}.json").read_text())
        agent_spec = {**data, "start_updating": data["batch_size"], "memory": min(data["memory"], 1000)}
    spec: dict[str, Any] = {
        "name": f"m-{agent}-{environment}"[:40].rstrip("-"),
        "environment": environment,
        "agent": agent_spec,
        "run_mode": run_mode,
        "total_timesteps": IMAGE_TIMESTEPS.get(agent, 32) if ENVIRONMENTS[environment]["images"] else 240,
        "max_timesteps_per_episode": EPISODE_STEPS,
        "seed": 7,
        "saver_frequency": "100000t",
        "summary_frequency": "600s",
    }
    if run_mode != "single":
        spec["num_workers"] = 2
    return spec


def experiment_of(spec: dict[str, Any], folder: Path) -> Experiment:
    """The spec written to a file and loaded as ``tfcli`` loads a user's (names resolved from the library)."""
    path = folder / f"{spec['name']}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return load_experiment(path, library=LIBRARY).spec


@contextmanager
def env_workers(experiment: Experiment, folder: Path) -> Iterator[tuple[tuple[str, int], ...]]:
    """``num_workers`` real ``python -m trainer env-worker`` processes on loopback, as the supervisor starts them."""
    spec = folder / "env-worker-spec.yaml"
    spec.write_text(to_yaml(experiment))
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with ExitStack() as stack:
        processes = []
        for index in range(experiment.num_workers):
            process = subprocess.Popen(
                [*TRAINER, "env-worker", "--spec", str(spec), "--port", "0", "--host", "127.0.0.1"],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env={**env, "JOB_COMPLETION_INDEX": str(index)},  # seeded as environment `index`, as on GKE
            )
            stack.callback(stop_process, process, 15)
            processes.append(process)
        addresses = []
        for process in processes:
            assert process.stdout is not None
            line = process.stdout.readline()
            found = re.search(r"listening on ([\d.]+):(\d+)", line)
            assert found, f"env-worker did not start: {line!r}"
            addresses.append((found.group(1), int(found.group(2))))
        yield tuple(addresses)


def read_result(output: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((output / "result.json").read_text())
    return data
