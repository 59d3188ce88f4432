"""Shared pieces of the trainer tests: tiny CartPole experiments and reading a run's output folder.

Imported by the test modules (pytest puts this folder on ``sys.path``); ``conftest.py`` re-exports the fixture.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import pytest
import yaml

from trainer.kernel.spec import Experiment

ROOT = Path(__file__).resolve().parents[2]

# Small and quick to trace; updates after every 2 episodes, so tiny budgets still train.
TINY_PPO: dict[str, Any] = {
    "agent": "ppo",
    "batch_size": 2,
    "network": [{"type": "dense", "size": 16, "activation": "tanh"}],
    "baseline": [{"type": "dense", "size": 16, "activation": "tanh"}],
    "baseline_optimizer": {"optimizer": "adam", "learning_rate": 1e-3},
    "learning_rate": 1e-3,
}


def cartpole_spec(**fields: Any) -> dict[str, Any]:
    """An experiment spec as a user would write it (CartPole, tiny PPO, seed 3)."""
    return {"name": "trainer-test", "environment": {"level": "CartPole-v1"}, "agent": TINY_PPO, "seed": 3, **fields}


def cartpole(**fields: Any) -> Experiment:
    return Experiment.model_validate(cartpole_spec(**fields))


@pytest.fixture
def spec_file(tmp_path: Path) -> Any:
    """``spec_file(**fields)``: a CartPole spec written to ``tmp_path/experiment.yaml``."""

    def write(**fields: Any) -> Path:
        path = tmp_path / "experiment.yaml"
        path.write_text(yaml.safe_dump(cartpole_spec(**fields), sort_keys=False))
        return path

    return write


@pytest.fixture(scope="module")
def finished_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A completed CartPole run of the test module's ``TINY`` settings (a budget, the saver's frequency), trained
    once per module; tests change copies of it (:func:`copy_of_finished_run`), never it."""
    from trainer.config import RunConfig
    from trainer.run import run

    output = tmp_path_factory.mktemp("finished") / "out"
    assert run(RunConfig(experiment=cartpole(**request.module.TINY), output=output)).status == "completed"
    return output


@pytest.fixture
def copy_of_finished_run(finished_run: Path, tmp_path: Path) -> Path:
    """A copy of the module's :func:`finished_run` for one test to change."""
    return Path(shutil.copytree(finished_run, tmp_path / "out"))


def read_progress(output: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (output / "progress.jsonl").read_text().splitlines()]


def read_result(output: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((output / "result.json").read_text())
    return data


def complete_checkpoints(output: Path) -> list[dict[str, Any]]:
    """The ``state.json`` of every complete checkpoint, oldest first."""
    folders = sorted((output / "checkpoints").iterdir(), key=lambda p: int(p.name))
    return [json.loads((f / "state.json").read_text()) for f in folders if (f / "COMPLETE").is_file()]


def trainer_process(
    *arguments: str,
    token: str | None = None,
    stdout: int | IO[Any] | None = subprocess.PIPE,
    stderr: int | IO[Any] | None = subprocess.PIPE,
) -> subprocess.Popen[str]:
    """``python -m trainer ARGUMENTS...`` as the containers run it (from the repository root, unbuffered), with
    ``TRAINER_TOKEN`` set when ``token`` is given."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if token is not None:
        env["TRAINER_TOKEN"] = token
    return subprocess.Popen(
        [sys.executable, "-m", "trainer", *arguments], cwd=ROOT, stdout=stdout, stderr=stderr, text=True, env=env
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(condition: Callable[[], bool], process: subprocess.Popen[str], timeout: float = 120.0) -> None:
    """Poll ``condition`` until it holds; fails if ``process`` exits first or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def finish(process: subprocess.Popen[str], timeout: float = 120.0) -> tuple[int, str]:
    """The exit code and stderr of ``process`` once it ends."""
    _, stderr = process.communicate(timeout=timeout)
    return process.returncode, stderr
