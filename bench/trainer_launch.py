"""Starting this trainer as ``tfcli experiment start --local`` does, for ``bench.trainer`` and ``bench.solve``.

A bundled experiment's resolved spec written to a folder, the environment the processes run in (a fresh
``TRAINER_TOKEN``), the env-workers (distributed) and the learner, ``python -m trainer run``, started all at once,
and their shutdown.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENT = "cartpole-ppo"


def experiment_data(experiment: str = EXPERIMENT, **overrides: Any) -> dict[str, Any]:
    """A bundled experiment, fully resolved, with ``overrides`` (what ``tfcli experiment new`` would write)."""
    from trainer.kernel.spec import load_experiment, to_data

    return to_data(load_experiment(experiment, overrides=overrides).spec)


def write_spec(folder: Path, experiment: str = EXPERIMENT, **overrides: Any) -> Path:
    path = folder / "experiment.json"
    path.write_text(json.dumps(experiment_data(experiment, **overrides)))
    return path


def trainer_environment() -> dict[str, str]:
    return dict(os.environ, TRAINER_TOKEN=secrets.token_hex(32), TF_CPP_MIN_LOG_LEVEL="2")


def start_env_workers(spec: Path, count: int, env: dict[str, str]) -> tuple[list[subprocess.Popen[bytes]], list[int]]:
    """``count`` env-worker processes on 127.0.0.1; worker ``i`` steps environments ``i * E ...`` (seed + index).
    As tfcli's local supervisor does, nobody waits for them to listen: the learner connects when they do."""
    from tfcli.local.supervisor import free_port, worker_command

    workers: list[subprocess.Popen[bytes]] = []
    ports: list[int] = []
    for index in range(count):
        port = free_port()
        workers.append(
            subprocess.Popen(
                worker_command(spec, port),
                cwd=ROOT,
                env={**env, "JOB_COMPLETION_INDEX": str(index)},  # as in the indexed Job: the worker's index
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        ports.append(port)
    return workers, ports


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        if process.poll() is None:
            try:
                process.wait(timeout=5)  # a completed learner tells its env-workers to exit
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def trainer_command(spec: Path, output: Path, environments: str, ports: list[int]) -> list[str]:
    command = [sys.executable, "-m", "trainer", "run", "--spec", str(spec), "--output", str(output)]
    command += ["--environments", environments]
    if ports:
        command += ["--workers", ",".join(f"127.0.0.1:{port}" for port in ports)]
    return command


def launch(
    spec: Path, output: Path, env: dict[str, str], *, stderr: int = subprocess.DEVNULL, environments: str = "auto"
) -> tuple[subprocess.Popen[bytes], list[subprocess.Popen[bytes]]]:
    """The run as tfcli's local supervisor starts it, all at once: env-workers (distributed) and the learner."""
    data = json.loads(spec.read_text())
    workers: list[subprocess.Popen[bytes]] = []
    ports: list[int] = []
    if data["run_mode"] == "distributed":
        workers, ports = start_env_workers(spec, data["num_workers"], env)
    learner = subprocess.Popen(
        trainer_command(spec, output, environments, ports), cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=stderr
    )
    return learner, workers
