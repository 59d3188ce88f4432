"""The peer of ``bench.trainer``: TensorForce 0.6.5's ``tensorforce.execution.Runner`` on the experiment's agent.

``runner_child`` is the code of the child process: ``python -m bench.trainer --runner-child MODE
--experiment-child NAME --environments-child N --budget T --seed-child S`` (``bench.trainer``'s hidden arguments)
trains with the Runner and prints the episode timeline as JSON on stdout. ``measure_runner`` starts that child and
times it, start to exit, with its memory and CPU. ``runner_environment_class`` wraps the trainer's gymnasium adapter
as a ``tensorforce.Environment`` (TensorForce's own gym wrapper is broken).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

from bench.processes import PeakMemory
from bench.trainer_launch import ROOT, trainer_environment
from bench.trainer_measure import Measurement, Timeline, children_cpu


def runner_environment_class() -> type:
    """The trainer's gymnasium adapter behind ``tensorforce.Environment`` (TensorForce's gym wrapper is broken)."""
    from tensorforce import Environment

    class AdapterEnvironment(Environment):  # type: ignore[misc]
        def __init__(self, recipe: Any, index: int) -> None:
            super().__init__()
            self._adapter = recipe.make(index)

        def states(self) -> dict[str, Any]:
            return dict(self._adapter.states())

        def actions(self) -> dict[str, Any]:
            return dict(self._adapter.actions())

        def max_episode_timesteps(self) -> int | None:
            limit: int | None = self._adapter.max_episode_timesteps()
            return limit

        def reset(self) -> Any:
            return self._adapter.reset()

        def execute(self, actions: Any) -> tuple[Any, int, float]:
            states, terminal, reward = self._adapter.execute(actions)
            return states, terminal, reward

        def close(self) -> None:
            self._adapter.close()
            super().close()

    return AdapterEnvironment


def runner_child(experiment_name: str, mode: str, environments: int, budget: int, seed: int) -> None:
    """In a fresh process: train with ``Runner`` and print the episode timeline as JSON on stdout.

    The agent is the experiment's (``trainer.agents.agent_arguments``: the agent file, network, seed, episode limit
    and parallel interactions a user would pass to ``Agent.create``), run with TensorForce's own defaults: the
    trainer's execution settings (``trainer.agents.EXECUTION_CONFIG``) are the trainer's, not the peer's."""
    from trainer import compat
    from trainer.agents import agent_arguments
    from trainer.kernel.spec import load_experiment
    from trainer.pools.recipe import EnvironmentRecipe

    compat.apply()
    from tensorforce import Runner

    count = 1 if mode == "single" else environments
    experiment = load_experiment(experiment_name, overrides={"seed": seed}).spec
    recipe = EnvironmentRecipe.of(experiment)
    cls = runner_environment_class()
    probe = recipe.make(0)
    try:
        # exactly the trainer's agent arguments (agent file, network, seed, episode limit, parallel interactions)
        agent = agent_arguments(
            experiment.agent,
            environment=probe,
            network=experiment.network,
            max_episode_timesteps=None,
            parallel_interactions=count,
            seed=seed,
        )
    finally:
        probe.close()
    specs = [{"environment": cls, "recipe": recipe, "index": index} for index in range(count)]
    if mode == "single":
        runner = Runner(agent=agent, environment=specs[0])
    elif mode == "parallel":
        runner = Runner(agent=agent, environments=specs)
    else:
        runner = Runner(agent=agent, environments=specs, remote="multiprocessing")
    episodes: list[tuple[int, float, float]] = []
    started = 0.0

    def record(run: Any, parallel: int) -> bool:
        episodes.append((run.timesteps, time.monotonic() - started, float(run.episode_returns[-1])))
        return True

    try:
        started = time.monotonic()
        runner.run(
            num_timesteps=budget,
            batch_agent_calls=mode == "parallel",
            callback=record,
            callback_episode_frequency=1,
            use_tqdm=False,
        )
    finally:
        runner.close()
    print(json.dumps({"episodes": episodes}))


def measure_runner(experiment: str, mode: str, environments: int, budget: int, seed: int) -> Measurement:
    """The Runner in a fresh process (its children too, with remote='multiprocessing'), start to exit."""
    command = [sys.executable, "-m", "bench.trainer", "--runner-child", mode, "--experiment-child", experiment]
    command += ["--environments-child", str(environments), "--budget", str(budget), "--seed-child", str(seed)]
    with PeakMemory() as memory:
        cpu = children_cpu()
        started = time.monotonic()
        done = subprocess.run(command, cwd=ROOT, env=trainer_environment(), capture_output=True)
        seconds = time.monotonic() - started
        cpu = children_cpu() - cpu
    if done.returncode != 0:
        raise RuntimeError(f"the Runner exited with {done.returncode}: {done.stderr.decode()[-2000:]}")
    data = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return Measurement(seconds, Timeline([tuple(episode) for episode in data["episodes"]]), memory.peak, cpu)
