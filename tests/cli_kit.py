"""The CLI as a user runs it, for the tests that walk whole journeys (``tests/cli``, ``tests/journeys``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tfcli.cli.app import app

runner = CliRunner()

# The smallest PPO that still trains on CartPole (an update every 2 episodes), as a spec's flow-style YAML.
TINY_PPO = "{agent: ppo, batch_size: 2, network: [{type: dense, size: 8, activation: tanh}]}"


def tiny_spec(name: str, timesteps: int, *, saver: str | None = "100t") -> str:
    """A CartPole experiment spec (YAML text) with :data:`TINY_PPO`: ``timesteps`` long, checkpointed every
    ``saver`` (None: the default frequency), for the journeys that start, pause, kill and resume real runs."""
    lines = [f"name: {name}", "environment: cartpole", f"agent: {TINY_PPO}", f"total_timesteps: {timesteps}"]
    lines += [f"saver_frequency: {saver}"] if saver else []
    return "\n".join(lines) + "\n"


def invoke(*args: str) -> tuple[int, str, str]:
    """``tfcli ARGS...``: the exit code, stdout and stderr."""
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def status(name: str) -> dict[str, object]:
    """``tfcli experiment status -e NAME --json``, which must succeed."""
    code, stdout, stderr = invoke("experiment", "status", "-e", name, "--json")
    assert code == 0, stderr
    return dict(json.loads(stdout))


def sweep_status(name: str) -> dict[str, Any]:
    """``tfcli experiment status -s NAME --json``, which must succeed."""
    code, stdout, stderr = invoke("experiment", "status", "-s", name, "--json")
    assert code == 0, stderr
    return dict(json.loads(stdout))


def states(name: str) -> list[str]:
    """Each trial's state, in trial order."""
    return [trial["state"] for trial in sweep_status(name)["trials"]]


def wait_for(predicate: Callable[[], object], timeout: float = 180.0, what: str = "condition") -> None:
    """Poll ``predicate`` until it holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def tiny_sweep(
    name: str = "tiny", timesteps: int = 300, *, seeds: int | None = 2, target_return: float | None = None
) -> str:
    """A sweep file of :func:`tiny_spec` over 2 learning rates x ``seeds`` seeds (None: the file names none, so one);
    the defaults, four 300-timestep trials, run in seconds."""
    target = f"target_return: {target_return:g}\n" if target_return is not None else ""
    base = "".join(f"  {line}\n" for line in (tiny_spec(name, timesteps) + target).splitlines())
    text = f"name: {name}\nbase:\n{base}axes:\n  agent.learning_rate: [1e-3, 3e-3]\n"
    return text + (f"seeds: {seeds}\n" if seeds is not None else "")


def early_stop_sweep(name: str = "asha", *, hopeless_first: bool = False) -> str:
    """A sweep file of 2 combinations x 2 seeds of a 600-timestep CartPole PPO with early stopping: the second
    combination (the first with ``hopeless_first``) cuts episodes at 6 timesteps, so its return can never pass 6 (a
    random CartPole start averages ~20) and it is pruned at the first rung (150 timesteps), whatever the seeds do."""
    values = "[6, 500]" if hopeless_first else "[500, 6]"
    return f"""\
name: {name}
base:
  name: {name}
  environment: cartpole
  cluster: single-node
  agent: {{agent: ppo, batch_size: 2, learning_rate: 0.001, network: [{{type: dense, size: 8, activation: tanh}}]}}
  total_timesteps: 600
  saver_frequency: 10000t
axes:
  max_timesteps_per_episode: {values}
seeds: 2
early_stop: {{reduction: 2, min_timesteps: 150, recheck_seconds: 1}}
"""


def forget_project_modules() -> None:
    """Make this process forget the ``envs`` package an earlier test's project imported (each project has its own,
    and the CLI runs in this process)."""
    import sys

    for name in [name for name in sys.modules if name == "envs" or name.startswith("envs.")]:
        del sys.modules[name]


def stand_in_supervisors(monkeypatch: pytest.MonkeyPatch, program: str) -> None:
    """For a sweep's queue run in this process (``run_queue``): each trial's supervisor a stand-in running
    ``program`` (``python -c``, named as a supervisor with the trial's folder as ``alive()`` checks; the variables
    its launch adds, ``TFCLI_HOLD_FILE`` among them, in its environment), no warm trainer, pytest's own signal
    handlers kept, and a core left idle by the slots whatever this machine has (``tfcli/local/ahead.py``)."""
    import tfcli.local.processes
    import tfcli.local.queue
    from tfcli.local.standing import OFF, WARM_VARIABLE

    def stand_in(
        module: str, arguments: list[str], log_file: Path, env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-c", program, module, *arguments]
        return subprocess.Popen(command, env=dict(os.environ, **(env or {})))

    monkeypatch.setattr(tfcli.local.processes, "spawn", stand_in)
    monkeypatch.setattr(tfcli.local.queue, "handle_stop_signals", lambda handler: None)
    monkeypatch.setenv(WARM_VARIABLE, OFF)
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
