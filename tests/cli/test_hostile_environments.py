"""The user's environment misbehaves (issue 29, rows 5 and 7, and the hanging ``step()``): whatever it does — exits
the process, hangs, never answers — tfcli says so in one line naming the environment's file, in ``validate``,
``play`` and every run mode, instead of exiting 0 in silence or reading ``running`` for ever.

The environment is real code in the project's ``envs/`` folder, run by real processes (the supervisor, the trainer,
env-workers) with a short ``step_timeout``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_kit import invoke, status, wait_for

HOSTILE = """\
import os
import sys
import time

import gymnasium
import numpy as np
from gymnasium import spaces

if os.environ.get("HOSTILE_AT_IMPORT") == "exit":
    sys.exit(0)


class Hostile(gymnasium.Env):
    \"\"\"Behaves until step ``after``, then does ``what``: exit (os._exit), hang (sleep for ever).\"\"\"

    def __init__(self, what="exit", after=0):
        self.observation_space = spaces.Box(0.0, 1.0, shape=(2,), dtype=np.float32)
        self.action_space = spaces.Discrete(2)
        self.what, self.after, self.steps = what, after, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, dtype=np.float32), {}

    def step(self, action):
        self.steps += 1
        if self.steps > self.after:
            if self.what == "exit":
                os._exit(0)
            if self.what == "hang":
                time.sleep(10**6)
        return np.zeros(2, dtype=np.float32), 1.0, self.steps % 10 == 0, False, {}
"""


@pytest.fixture
def inside(lab: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The lab project with ``envs/hostile.py``; this process forgets any ``envs`` package an earlier test imported."""
    (lab / "envs" / "hostile.py").write_text(HOSTILE)
    for name in [name for name in sys.modules if name == "envs" or name.startswith("envs.")]:
        del sys.modules[name]
    yield lab
    for name in [name for name in sys.modules if name == "envs" or name.startswith("envs.")]:
        del sys.modules[name]


def _spec(lab: Path, name: str, what: str, after: int, extra: str = "") -> str:
    path = lab / f"{name}.yaml"
    path.write_text(
        f"name: {name}\n"
        f"environment: {{entry_point: 'envs.hostile:Hostile', kwargs: {{what: {what}, after: {after}}}}}\n"
        "agent: {agent: ppo, batch_size: 2, network: [{type: dense, size: 8}]}\n"
        f"total_timesteps: 400\nmax_timesteps_per_episode: 10\nstep_timeout: 4\nsaver_frequency: 20t\n{extra}"
    )
    return str(path)


def _result(lab: Path, name: str) -> dict[str, object]:
    path = lab / "experiments" / name / "results" / "result.json"
    return dict(json.loads(path.read_text())) if path.is_file() else {}


@pytest.mark.parametrize(
    ("what", "run_mode"),
    [
        ("exit", "distributed"),  # row 5: the env-workers die; the learner waited for ever
        ("hang", "single"),
        ("hang", "multi-threaded"),
        ("hang", "distributed"),
    ],
)
def test_an_environment_that_stops_answering_fails_the_run_naming_its_file(
    inside: Path, what: str, run_mode: str
) -> None:
    name = f"{what}-{run_mode}"
    extra = f"run_mode: {run_mode}\nnum_workers: 2\n" if run_mode != "single" else ""
    assert invoke("experiment", "new", "-f", _spec(inside, name, what, 60, extra))[0] == 0
    code, stdout, stderr = invoke("experiment", "start", "-e", name, "--detach")
    assert code == 0, stdout + stderr
    try:
        wait_for(lambda: status(name)["state"] == "failed", timeout=120, what=f"{name} to fail")
    except AssertionError:
        invoke("experiment", "stop", "-e", name)  # the learner waits for ever: end it, then report
        raise
    result = _result(inside, name)
    error = str(result["error"])
    assert "envs.hostile:Hostile (envs/hostile.py)" in error and "within 4 s (step_timeout)" in error, result
    assert "\n" not in error
    assert 0 < int(str(result["timesteps"])) < 400  # the counts it had, not zeros
    checkpoints = inside / "experiments" / name / "results" / "checkpoints"
    assert any((folder / "COMPLETE").is_file() for folder in checkpoints.iterdir())  # kept for a resume
