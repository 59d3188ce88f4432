"""``python -m trainer`` as Kubernetes and ``tfcli --local`` run it: killed outright, a run resumes and still ends
with exactly the budget; sent SIGTERM, it checkpoints, says "paused" and exits 143, and the checkpoint resumes;
a distributed run trains over ``env-worker`` processes and stops them when it completes."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from trainer_testkit import (
    complete_checkpoints,
    finish,
    free_port,
    read_progress,
    read_result,
    trainer_process,
    wait_for,
)

from trainer.config import RunConfig
from trainer.kernel.spec import load_experiment
from trainer.run import run

pytestmark = pytest.mark.slow  # real trainings or trainer processes (README "Development")

BUDGET = 2500
SAVER_INTERVAL = 300


def start(spec: Path, output: Path) -> subprocess.Popen[str]:
    return trainer_process("run", "--spec", str(spec), "--output", str(output))


def newest_checkpoint_timesteps(output: Path) -> int:
    try:
        checkpoints = complete_checkpoints(output)
    except (FileNotFoundError, json.JSONDecodeError):
        return 0
    return int(checkpoints[-1]["timesteps"]) if checkpoints else 0


def spec(spec_file: Any) -> Path:
    path: Path = spec_file(total_timesteps=BUDGET, saver_frequency=f"{SAVER_INTERVAL}t", summary_frequency="1s")
    return path


def test_a_run_killed_with_sigkill_resumes_and_ends_with_exactly_the_budget(tmp_path: Path, spec_file: Any) -> None:
    output = tmp_path / "out"
    process = start(spec(spec_file), output)
    wait_for(lambda: newest_checkpoint_timesteps(output) >= 2 * SAVER_INTERVAL, process)
    # Still training when killed: a run that had already finished (its final checkpoint also passes the wait)
    # would make this a test of resuming a completed run.
    assert process.poll() is None, "the run ended before it could be killed"
    process.kill()
    process.wait()
    assert process.returncode == -signal.SIGKILL
    reached = max((line["timesteps"] for line in read_progress(output)), default=0)
    before = read_progress(output)
    assert reached < BUDGET
    # Only periodic checkpoints (no final one: it was killed), each at an exact multiple of the interval, the
    # newest three of 300, 600, ... in order.
    saved = [checkpoint["timesteps"] for checkpoint in complete_checkpoints(output)]
    newest = saved[-1] // SAVER_INTERVAL
    assert saved == [SAVER_INTERVAL * k for k in range(max(newest - 2, 1), newest + 1)] and newest >= 2
    resumed_from = complete_checkpoints(output)[-1]
    # at most one saver interval of training is lost
    assert resumed_from["timesteps"] >= reached - SAVER_INTERVAL

    code, stderr = finish(start(spec(spec_file), output))
    assert code == 0, stderr
    assert "resuming from checkpoint" in stderr and f"{resumed_from['timesteps']:,} timesteps" in stderr
    result, progress = read_result(output), read_progress(output)
    assert (result["status"], result["timesteps"]) == ("completed", BUDGET)
    assert result["episodes"] == len(progress)
    assert [line["episode"] for line in progress] == list(range(1, len(progress) + 1))  # no duplicates, no gaps
    kept = resumed_from["episodes"]
    assert progress[:kept] == before[:kept]  # what the checkpoint counted stays as it was
    assert all(line["timesteps"] > resumed_from["timesteps"] for line in progress[kept:])


def test_sigterm_checkpoints_pauses_with_exit_143_and_the_checkpoint_resumes(tmp_path: Path, spec_file: Any) -> None:
    output = tmp_path / "out"
    process = start(spec(spec_file), output)
    wait_for(lambda: newest_checkpoint_timesteps(output) >= SAVER_INTERVAL, process)
    process.send_signal(signal.SIGTERM)
    sent = time.monotonic()
    code, stderr = finish(process)
    assert time.monotonic() - sent < 10
    assert code == 143, stderr
    paused = read_result(output)
    assert paused["status"] == "paused" and SAVER_INTERVAL <= paused["timesteps"] < BUDGET
    newest = complete_checkpoints(output)[-1]
    assert (newest["timesteps"], newest["episodes"]) == (paused["timesteps"], paused["episodes"])

    code, stderr = finish(start(spec(spec_file), output))
    assert code == 0, stderr
    assert f"{paused['timesteps']:,} timesteps" in stderr  # resumed from the pause, not from scratch
    result = read_result(output)
    assert (result["status"], result["timesteps"]) == ("completed", BUDGET)
    assert result["episodes"] == len(read_progress(output)) > paused["episodes"]


@pytest.mark.parametrize("per_worker", [1, 3])
def test_a_distributed_run_trains_over_env_worker_processes_that_exit_when_it_completes(
    tmp_path: Path, spec_file: Any, per_worker: int
) -> None:
    path = spec_file(
        run_mode="distributed",
        num_workers=2,
        environments_per_worker=per_worker,
        total_timesteps=401,
        saver_frequency="200t",
    )
    ports = [free_port(), free_port()]
    workers = [
        trainer_process(
            *("env-worker", "--spec", str(path), "--host", "127.0.0.1", "--port", str(port)),
            token="test-token",
            stdout=subprocess.DEVNULL,
            stderr=None,
        )
        for port in ports
    ]
    try:
        config = RunConfig(
            experiment=load_experiment(path).spec,
            output=tmp_path / "out",
            workers=tuple(("127.0.0.1", port) for port in ports),
            token="test-token",
        )
        result = run(config)
        assert (result.status, result.timesteps) == ("completed", 401)
        # every environment of every worker finished episodes: index i is environment i % E of worker i // E
        assert {line["worker"] for line in read_progress(tmp_path / "out")} == set(range(2 * per_worker))
        assert [worker.wait(timeout=15) for worker in workers] == [0, 0]  # told to stop: their Job completes
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.communicate()


def test_an_agent_spec_tensorforce_cannot_build_exits_2_with_a_message_and_no_traceback(
    tmp_path: Path, spec_file: Any
) -> None:
    # PPO with a baseline but no baseline_optimizer: TensorForce fails a bare `assert`, not with TensorforceError.
    agent = {"agent": "ppo", "batch_size": 2, "baseline": [{"type": "dense", "size": 8}]}
    path = spec_file(total_timesteps=100, agent=agent)
    code, stderr = finish(start(path, tmp_path / "out"))
    assert code == 2, stderr
    assert f"{path}: agent: cannot build the ppo agent: a baseline needs a baseline_optimizer to train it" in stderr
    assert "Traceback" not in stderr and "AssertionError" not in stderr
    assert read_result(tmp_path / "out")["status"] == "failed"
