"""``python -m trainer env-worker`` exits 0 only when the learner says the run is over, 143 on SIGTERM or SIGINT.

The env-worker Job is Indexed: an index whose pod exits 0 counts as completed and is never run again, so a worker
evicted by a pause, a spot reclaim or a node drain/upgrade/repair must exit 143 (which the Job's podFailurePolicy
ignores, and the pod is started again), like the learner.
"""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from trainer_testkit import finish, free_port, trainer_process

from trainer.pools.factory import close_pool
from trainer.pools.remote import RemotePool

pytestmark = pytest.mark.slow  # real trainings or trainer processes (README "Development")

TOKEN = "signals-test-token"


@pytest.fixture
def env_worker(spec_file: Callable[..., Path]) -> Iterator[Callable[[], tuple[subprocess.Popen[str], int]]]:
    """Start a real ``python -m trainer env-worker`` on 127.0.0.1 and wait until it listens."""
    started: list[subprocess.Popen[str]] = []
    path = spec_file(run_mode="distributed", num_workers=1, total_timesteps=100)

    def start() -> tuple[subprocess.Popen[str], int]:
        port = free_port()
        process = trainer_process(
            *("env-worker", "--spec", str(path), "--host", "127.0.0.1", "--port", str(port)), token=TOKEN
        )
        started.append(process)
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.strip() == f"env-worker listening on 127.0.0.1:{port}", (line, process.poll())
        return process, port

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
            process.communicate()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signalled_idle_env_worker_exits_143_not_0(
    env_worker: Callable[[], tuple[subprocess.Popen[str], int]], signum: signal.Signals
) -> None:
    process, _ = env_worker()
    process.send_signal(signum)
    code, stderr = finish(process, timeout=20)
    assert code == 143, stderr
    assert f"{signum.name} received" in stderr and "Traceback" not in stderr


def test_an_env_worker_evicted_mid_episode_exits_143_and_the_learner_sees_it_gone(
    env_worker: Callable[[], tuple[subprocess.Popen[str], int]],
) -> None:
    process, port = env_worker()
    pool = RemotePool([("127.0.0.1", port)], token=TOKEN, startup_timeout=60, max_backoff=0.5)
    try:
        assert pool.reset([0])[0] is not None
        assert not pool.step([0], [np.int64(1)])[0].aborted  # in an episode, connected
        process.send_signal(signal.SIGTERM)
        code, stderr = finish(process, timeout=20)
        assert code == 143, stderr
        assert pool.step([0], [np.int64(1)])[0].aborted  # the learner notices: the step is lost, not completed
    finally:
        pool.close()


def test_an_env_worker_exits_0_when_the_learner_says_the_run_is_over(
    env_worker: Callable[[], tuple[subprocess.Popen[str], int]],
) -> None:
    process, port = env_worker()
    pool = RemotePool([("127.0.0.1", port)], token=TOKEN, startup_timeout=60)
    pool.reset([0])
    close_pool(pool, run_over=True)
    code, stderr = finish(process, timeout=20)
    assert code == 0, stderr


def test_a_paused_learner_leaves_its_env_worker_waiting_and_a_later_sigterm_still_exits_143(
    env_worker: Callable[[], tuple[subprocess.Popen[str], int]],
) -> None:
    process, port = env_worker()
    pool = RemotePool([("127.0.0.1", port)], token=TOKEN, startup_timeout=60)
    pool.reset([0])
    close_pool(pool, run_over=False)  # the learner paused (or failed): the worker waits for the resumed one
    with pytest.raises(subprocess.TimeoutExpired):
        process.wait(timeout=1.5)
    process.send_signal(signal.SIGTERM)
    code, stderr = finish(process, timeout=20)
    assert code == 143, stderr
