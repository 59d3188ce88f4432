"""The remote pool against real env-worker processes on 127.0.0.1: parallel CartPole workers, a worker killed and
brought back, wrong tokens, clean stops, and no TensorFlow in a worker."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from trainer_testkit import ROOT, free_port

from trainer.kernel.errors import InvalidInput, TfcliError
from trainer.kernel.spec import Experiment
from trainer.pools.base import RUNNING, TERMINATED, TRUNCATED
from trainer.pools.recipe import EnvironmentRecipe
from trainer.pools.remote import RemotePool

pytestmark = pytest.mark.slow  # real trainings or trainer processes (README "Development")

TOKEN = "pool-test-token"
# What `python -m trainer env-worker` does, plus a report of the modules the worker had loaded when it stopped.
LAUNCHER = """
import json, sys
from trainer.kernel.spec import Experiment
from trainer.env_worker import serve
from trainer.transport import token_from_environment
experiment = Experiment.model_validate_json(sys.argv[1])
port, index = int(sys.argv[2]), int(sys.argv[3])
serve(experiment, host="127.0.0.1", port=port, token=token_from_environment(), worker_index=index)
print(json.dumps({"tensorflow": "tensorflow" in sys.modules, "tensorforce": "tensorforce" in sys.modules}), flush=True)
"""


def cartpole(level: str = "CartPole-v1", **fields: Any) -> Experiment:
    return Experiment(
        name="pool-test",
        environment={"level": level},
        agent={"agent": "ppo"},
        total_timesteps=1000,
        run_mode="distributed",
        num_workers=2,
        seed=11,
        **fields,
    )


class Worker:
    """An env-worker process."""

    def __init__(self, experiment: Experiment, index: int, port: int, token: str | None, log: Path) -> None:
        self.port = port
        env = {**os.environ, "TRAINER_TOKEN": token or ""}
        self.process = subprocess.Popen(
            [sys.executable, "-c", LAUNCHER, experiment.model_dump_json(), str(port), str(index)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=log.open("ab"),
            text=True,
        )

    def wait_ready(self) -> None:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line.strip() == f"env-worker listening on 127.0.0.1:{self.port}", line

    def finish(self, timeout: float = 10) -> tuple[int, dict[str, bool]]:
        """The exit code and the module report of a worker that was asked to stop."""
        out, _ = self.process.communicate(timeout=timeout)
        return self.process.returncode, json.loads(out.strip().splitlines()[-1])


@pytest.fixture
def start_worker(tmp_path: Path) -> Iterator[Callable[..., Worker]]:
    started: list[Worker] = []

    def start(experiment: Experiment, index: int, *, port: int | None = None, token: str | None = TOKEN) -> Worker:
        worker = Worker(experiment, index, port or free_port(), token, tmp_path / f"worker-{index}.log")
        started.append(worker)
        return worker

    yield start
    for worker in started:
        if worker.process.poll() is None:
            worker.process.kill()
        worker.process.wait(10)


def local_episode(experiment: Experiment, index: int, actions: list[int]) -> list[tuple[Any, int, float]]:
    """What environment ``index`` of a local run gives for the same actions, one repeat at a time."""
    env = EnvironmentRecipe.of(experiment).make(index)
    out = [(env.reset(), RUNNING, 0.0)]
    for action in actions:
        out.append(env.execute(action))
        if out[-1][1] != RUNNING:
            break
    env.close()
    return out


def test_two_workers_step_in_parallel_with_repeated_actions(start_worker: Callable[..., Worker]) -> None:
    experiment = cartpole(repeat_actions=3)
    # The pool is made while the workers are still importing: it retries until they listen.
    workers = [start_worker(experiment, index) for index in range(2)]
    pool = RemotePool([("127.0.0.1", w.port) for w in workers], token=TOKEN, startup_timeout=60)
    assert pool.size == 2
    assert pool.states()["type"] == "float" and pool.states()["shape"] == (4,)
    assert pool.actions() == {"type": "int", "shape": (), "num_values": 2}
    assert pool.max_episode_timesteps() == 167  # CartPole's 500 environment steps, in agent steps of 3

    first = pool.reset([0, 1])
    rewards: list[list[float]] = [[], []]
    terminals: list[list[int]] = [[], []]
    live = [0, 1]
    while live:  # always pushing right (worker 0) or left (worker 1): the pole falls within a few dozen steps
        steps = pool.step(live, [np.int64(1 - index) for index in live])
        for index, step in zip(live, steps, strict=True):
            assert not step.aborted and step.states.shape == (4,)
            rewards[index].append(step.reward)
            terminals[index].append(step.terminal)
        live = [index for index, step in zip(live, steps, strict=True) if step.terminal == RUNNING]

    for index in (0, 1):
        local = local_episode(experiment, index, [1 - index] * 200)
        np.testing.assert_array_equal(first[index], local[0][0])  # seeded like worker `index`
        assert terminals[index][-1] == TERMINATED and set(terminals[index][:-1]) == {RUNNING}
        # Each agent step is 3 environment steps with their rewards summed; the last one stops at the terminal.
        env_steps = len(local) - 1
        assert len(rewards[index]) == -(-env_steps // 3)
        assert rewards[index][:-1] == [3.0] * (len(rewards[index]) - 1)
        assert sum(rewards[index]) == sum(reward for _, _, reward in local)

    pool.close(stop_workers=True)
    for worker in workers:
        returncode, modules = worker.finish()
        assert returncode == 0
        assert modules == {"tensorflow": False, "tensorforce": False}


def test_workers_with_several_environments_serve_the_runs_environments_in_order(
    start_worker: Callable[..., Worker],
) -> None:
    """environments_per_worker 3: pool index i is environment i % 3 of worker i // 3, seeded as environment i of a
    multi-threaded run; one message per worker carries all of its steps; a lost worker aborts all of its indices."""
    experiment = cartpole(environments_per_worker=3, max_timesteps_per_episode=1000)
    assert experiment.num_environments == 6
    workers = [start_worker(experiment, index) for index in range(2)]
    pool = RemotePool(
        [("127.0.0.1", w.port) for w in workers], token=TOKEN, max_backoff=0.2, io_timeout=10, startup_timeout=60
    )
    assert pool.size == 6
    first = pool.reset([5, 0, 3, 1, 4, 2])
    for position, index in enumerate([5, 0, 3, 1, 4, 2]):
        np.testing.assert_array_equal(first[position], local_episode(experiment, index, [])[0][0])

    actions = [index % 2 for index in range(6)]
    steps = pool.step(list(range(6)), actions)
    for index, step in enumerate(steps):
        _, (states, terminal, reward) = local_episode(experiment, index, [actions[index]])[:2]
        np.testing.assert_array_equal(step.states, states)
        assert (step.terminal, step.reward, step.aborted) == (terminal, reward, False)
    only_some = pool.step([4, 1], [0, 0])  # a subset, across both workers
    assert [step.aborted for step in only_some] == [False, False]

    workers[0].process.send_signal(signal.SIGKILL)
    workers[0].process.wait(10)
    steps = pool.step([0, 2, 3, 5], [0, 0, 0, 0])
    assert [step.aborted for step in steps] == [True, True, False, False]
    lost, kept = pool.reset([1, 4])
    assert lost is None and kept.shape == (4,)
    pool.close(stop_workers=True)
    assert workers[1].finish()[0] == 0


def test_workers_serving_another_number_of_environments_than_the_spec_are_refused(
    start_worker: Callable[..., Worker],
) -> None:
    from trainer.pools.factory import make_pool

    workers = [start_worker(cartpole(), index) for index in range(2)]
    for worker in workers:
        worker.wait_ready()
    learner = cartpole(environments_per_worker=2)
    with pytest.raises(
        InvalidInput,
        match="environments_per_worker: this run has 2 environment\\(s\\) per worker, its env-workers serve 1",
    ):
        make_pool(learner, workers=[("127.0.0.1", w.port) for w in workers], token=TOKEN)


def test_a_killed_worker_aborts_only_its_index_and_is_taken_back_when_restarted(
    start_worker: Callable[..., Worker],
) -> None:
    experiment = cartpole(max_timesteps_per_episode=1000)
    workers = [start_worker(experiment, index) for index in range(2)]
    for worker in workers:
        worker.wait_ready()
    pool = RemotePool(
        [("127.0.0.1", w.port) for w in workers], token=TOKEN, max_backoff=0.2, io_timeout=10, startup_timeout=30
    )
    assert all(states is not None for states in pool.reset([0, 1]))
    pool.step([0, 1], [0, 1])

    workers[1].process.send_signal(signal.SIGKILL)
    workers[1].process.wait(10)
    steps = pool.step([0, 1], [1, 0])
    assert not steps[0].aborted and steps[0].states is not None
    assert steps[1].aborted and steps[1].states is None and steps[1].terminal == TRUNCATED and steps[1].reward == 0
    assert pool.reset([1]) == [None]  # not back yet
    assert not pool.step([0], [0])[0].aborted  # worker 0 goes on

    restarted = start_worker(experiment, 1, port=workers[1].port)
    restarted.wait_ready()
    deadline = time.monotonic() + 20
    while (states := pool.reset([1])[0]) is None:
        assert time.monotonic() < deadline, "the pool did not reconnect to the restarted worker"
        time.sleep(0.05)
    assert states.shape == (4,)
    steps = pool.step([0, 1], [0, 0])
    assert not any(step.aborted for step in steps)

    pool.close()  # without stop_workers: the workers stay, waiting for the next learner
    again = RemotePool([("127.0.0.1", w.port) for w in (workers[0], restarted)], token=TOKEN, startup_timeout=10)
    assert all(states is not None for states in again.reset([0, 1]))
    again.close()

    for worker in (workers[0], restarted):  # SIGTERM stops a worker cleanly
        worker.process.send_signal(signal.SIGTERM)
        returncode, modules = worker.finish()
        assert returncode == 0 and not modules["tensorflow"]


def test_a_learner_with_the_wrong_token_is_told_at_once(start_worker: Callable[..., Worker]) -> None:
    worker = start_worker(cartpole(), 0)
    worker.wait_ready()
    started = time.monotonic()
    with pytest.raises(TfcliError, match=r"refused the handshake.*TRAINER_TOKEN"):
        RemotePool([("127.0.0.1", worker.port)], token="wrong", startup_timeout=60)
    assert time.monotonic() - started < 10  # no waiting out the start-up timeout for a mistake retries cannot fix


def test_workers_serving_different_environments_are_refused(start_worker: Callable[..., Worker]) -> None:
    workers = [start_worker(cartpole(), 0), start_worker(cartpole("Acrobot-v1"), 1)]
    with pytest.raises(TfcliError, match=r"env-worker 1 .* serves a different environment"):
        RemotePool([("127.0.0.1", w.port) for w in workers], token=TOKEN, startup_timeout=60)


def test_no_worker_at_all_is_an_error_after_the_startup_timeout() -> None:
    with pytest.raises(TfcliError, match=r"no env-worker answered within 0\.5s"):
        RemotePool([("127.0.0.1", free_port())], token=TOKEN, startup_timeout=0.5)


def test_an_environment_error_names_its_worker_and_the_worker_stays_usable(
    start_worker: Callable[..., Worker],
) -> None:
    worker = start_worker(cartpole(), 0)
    pool = RemotePool([("127.0.0.1", worker.port)], token=TOKEN, startup_timeout=60)
    pool.reset([0])
    with pytest.raises(TfcliError, match=r"env-worker 0 \(127\.0\.0\.1:\d+\): step failed: AssertionError"):
        pool.step([0], [7])  # CartPole has actions 0 and 1
    assert pool.reset([0])[0].shape == (4,)
    assert not pool.step([0], [1])[0].aborted
    pool.close(stop_workers=True)
    assert worker.finish()[0] == 0
