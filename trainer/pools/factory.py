"""Choose and build the pool a run mode needs (docs/design.md §5).

- ``single``: an in-process pool of one environment.
- ``multi-threaded``: ``num_workers`` environments, in-process or one subprocess each (``--environments``).
  ``auto`` times a few steps of one environment in the trainer's process and picks subprocesses when a step costs
  at least :data:`COSTLY_STEP_SECONDS`. Measured on a 2-core machine: a pipe round trip to a worker process costs
  ~0.09 ms (0.12 ms with an 84x84x4 Atari observation), CartPole steps in ~0.012 ms and Space Invaders with
  frame skip 4 in ~0.47 ms. Below ~3 round trips a step, the pipes cost more than parallel stepping saves; above,
  subprocesses win (and keep the trainer's core free for TensorFlow). Measuring rather than guessing from the
  level's name or observation size also covers costly custom levels and cheap image levels. Subprocesses also
  need more than one environment and cores to spare beyond the learner's (at least 3 in all) to pay off: on 2 cores
  the learner keeps one busy and the environment processes share the other, so they step no faster than the trainer
  would, and the pipes come on top (space-invaders-dqn, 4 environments, 6,000 timesteps on a quiet 2-core machine:
  595 timesteps/s in-process against 517 in subprocesses, 21.8 s against 23.1 s whole process, bench/trainer.py
  cases e and e'). TensorForce's own environments stay in-process (a worker would have to import TensorFlow).
- ``distributed``: ``trainer.pools.remote.RemotePool`` over the trainer's TCP transport, one env-worker process
  per ``--workers`` address; it learns the state and action specs from the workers.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from trainer.config import Address, EnvironmentsOption
from trainer.kernel.errors import InvalidInput, TfcliError
from trainer.kernel.spec import Experiment
from trainer.pools.base import RUNNING, EnvironmentPool
from trainer.pools.local import LocalPool
from trainer.pools.recipe import EnvironmentRecipe
from trainer.pools.subprocess import SubprocessPool

log = logging.getLogger(__name__)

COSTLY_STEP_SECONDS = 0.0003  # ~3 pipe round trips, see above
SUBPROCESS_CORES = 3  # the learner's core and at least two for environment processes, see above
PROBE_STEPS = 20


def sample_action(spec: dict[str, Any], rng: np.random.Generator) -> Any:
    """A random valid action for a TensorForce action spec (to time a few steps)."""
    shape = tuple(spec.get("shape", ()))
    if spec["type"] == "int":
        value: Any = rng.integers(spec["num_values"], size=shape)
    elif spec["type"] == "bool":
        value = rng.random(size=shape) < 0.5
    else:
        low, high = spec.get("min_value", -1.0), spec.get("max_value", 1.0)
        value = rng.uniform(low, high, size=shape).astype(np.float32)
    return value.item() if shape == () else value


def seconds_per_step(recipe: EnvironmentRecipe, environment: Any, steps: int = PROBE_STEPS, rounds: int = 3) -> float:
    """The wall time of an agent step (``repeat_actions`` included), measured on ``environment``: the fastest of
    ``rounds`` means of ``steps`` steps, so that a moment when the machine is busy elsewhere (another run, a test
    process beside this one) does not make a cheap level look costly."""
    rng = np.random.default_rng(0)
    environment.reset()
    fastest = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(steps):
            if recipe.step(environment, sample_action(environment.actions(), rng)).terminal != RUNNING:
                environment.reset()
        fastest = min(fastest, (time.perf_counter() - started) / steps)
    return fastest


def _multi_threaded(recipe: EnvironmentRecipe, size: int, environments: EnvironmentsOption) -> EnvironmentPool:
    if environments == "subprocess":
        return SubprocessPool(recipe, size)
    if (
        environments == "in-process"
        or recipe.imports_tensorflow
        or size < 2
        or (os.cpu_count() or 1) < SUBPROCESS_CORES
    ):
        return LocalPool(recipe, size)
    probe = recipe.make(0)
    try:
        cost = seconds_per_step(recipe, probe)
    finally:
        probe.close()  # not reused: environment 0 starts from its seed whichever pool steps it
    if cost < COSTLY_STEP_SECONDS:
        log.info("environments: in-process (a step takes %.3f ms)", cost * 1000)
        return LocalPool(recipe, size)
    log.info("environments: one subprocess each (a step takes %.3f ms)", cost * 1000)
    return SubprocessPool(recipe, size)


def _remote(workers: Sequence[Address], token: str | None) -> EnvironmentPool:
    try:
        from trainer.pools.remote import RemotePool
    except ImportError as error:
        raise TfcliError(
            "run_mode distributed needs the trainer's TCP transport (trainer/pools/remote.py), "
            f"which this build lacks: {error}"
        ) from error
    pool: EnvironmentPool = RemotePool(list(workers), token=token)
    return pool


def make_pool(
    experiment: Experiment,
    *,
    environments: EnvironmentsOption = "auto",
    workers: Sequence[Address] = (),
    token: str | None = None,
) -> EnvironmentPool:
    """The pool for the experiment's run mode; ``workers`` are the env-worker addresses of a distributed run."""
    mode = experiment.run_mode
    if workers and mode != "distributed":
        raise InvalidInput(f"--workers: only a distributed run has environment workers; this run_mode is {mode}")
    if mode == "distributed":
        if len(workers) != experiment.num_workers:
            raise InvalidInput(
                f"--workers: run_mode distributed with num_workers={experiment.num_workers} needs that many "
                f"HOST:PORT addresses, got {len(workers)}"
            )
        pool = _remote(workers, token)
        if pool.size != experiment.num_environments:
            pool.close()
            raise InvalidInput(
                f"environments_per_worker: this run has {experiment.environments_per_worker} environment(s) per "
                f"worker, its env-workers serve {pool.size // len(workers)}: start them with the same spec"
            )
        return pool
    recipe = EnvironmentRecipe.of(experiment)
    if mode == "single":
        return LocalPool(recipe, 1)
    return _multi_threaded(recipe, experiment.num_environments, environments)


def close_pool(pool: EnvironmentPool, *, run_over: bool) -> None:
    """Close the pool; when the run is over for good, a distributed run's env-workers are told to exit too (so
    their Job completes). After a pause or a failure they keep waiting for the resumed learner."""
    remote = sys.modules.get("trainer.pools.remote")
    if run_over and remote is not None and isinstance(pool, remote.RemotePool):
        pool.close(stop_workers=True)
    else:
        pool.close()
