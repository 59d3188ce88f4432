"""One trainer per results folder, ever, and no process outlives its run (issue 29, rows 3 and 11).

Real processes and real signals: a detached local run whose supervisor is killed with SIGKILL (its trainer held
with SIGSTOP meanwhile, so the moment between the two deaths can be looked at), a second trainer started by hand on
the same folder, and an environment that forks a child which would sleep for ever.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_kit import invoke, status, wait_for

from tfcli.experiments.store import ExperimentDir
from tfcli.local.handle import local_of
from trainer.output_lock import holder

pytestmark = pytest.mark.slow  # real trainings or trainer processes (README "Development")

SPEC = """\
name: {name}
environment: {environment}
agent: {{agent: ppo, batch_size: 2, network: [{{type: dense, size: 8}}]}}
total_timesteps: {budget}
saver_frequency: 100t
"""

FORKER = """\
import os
import time

import gymnasium
import numpy as np
from gymnasium import spaces


class Forker(gymnasium.Env):
    \"\"\"CartPole-sized, but it forks a helper that would run for ever (and says where it is).\"\"\"

    def __init__(self):
        self.observation_space = spaces.Box(0.0, 1.0, shape=(2,), dtype=np.float32)
        self.action_space = spaces.Discrete(2)
        self.steps = 0
        child = os.fork()
        if child == 0:
            while True:
                time.sleep(1)
        with open(os.environ["FORKED_PIDS"], "a") as pids:
            pids.write(f"{child}\\n")

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.steps = 0
        return np.zeros(2, dtype=np.float32), {}

    def step(self, action):
        self.steps += 1
        return np.zeros(2, dtype=np.float32), 1.0, self.steps >= 10, False, {}
"""


def new(lab: Path, name: str, *, environment: str = "cartpole", budget: int = 1_000_000) -> ExperimentDir:
    (lab / f"{name}.yaml").write_text(SPEC.format(name=name, environment=environment, budget=budget))
    code, _, stderr = invoke("experiment", "new", "-f", f"{name}.yaml")
    assert code == 0, stderr
    return ExperimentDir(lab / "experiments" / name)


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_a_killed_supervisor_ends_its_trainer_and_meanwhile_nothing_starts_a_second_one(lab: Path) -> None:
    experiment = new(lab, "solo")
    code, _, stderr = invoke("experiment", "start", "-e", "solo", "--local", "--detach")
    assert code == 0, stderr
    wait_for(lambda: list((experiment.results / "checkpoints").glob("*/COMPLETE")), what="a first checkpoint")
    trainer = holder(experiment.results)
    supervisor = local_of(experiment.run_record()).pid
    assert trainer and supervisor and trainer != supervisor

    os.kill(trainer, signal.SIGSTOP)  # held while its supervisor dies: the SIGTERM it is sent waits
    try:
        os.kill(supervisor, signal.SIGKILL)
        wait_for(lambda: not alive(supervisor), timeout=30, what="the supervisor's end")
        seen = status("solo")
        assert seen["state"] == "running" and seen["pid"] == trainer, seen  # a live trainer, not `interrupted`
        assert "supervisor is gone" in str(seen["detail"])
        code, _, stderr = invoke("experiment", "resume", "-e", "solo")
        assert code == 1 and "is running" in stderr, stderr

        second = subprocess.run(
            [sys.executable, "-m", "trainer", "run", "--spec", str(experiment.spec_file), "--output",
             str(experiment.results)],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert second.returncode == 1, second.stderr
        assert f"another trainer (pid {trainer}) is writing" in second.stderr
        assert not (experiment.results / "result.json").exists()  # the refused one wrote nothing
    finally:
        os.kill(trainer, signal.SIGCONT)

    wait_for(lambda: not alive(trainer), timeout=120, what="the orphaned trainer's end")
    result = json.loads((experiment.results / "result.json").read_text())
    assert result["status"] == "paused" and result["reason"] == "SIGTERM"  # it checkpointed on its way out
    assert status("solo")["state"] == "paused"


@pytest.mark.parametrize("start", ["fresh", "warm"])
def test_children_the_environment_forks_end_with_the_run(lab: Path, start: str, request: pytest.FixtureRequest) -> None:
    if start == "warm":  # a trainer forked warm leads a group of its own, which the supervisor ends too
        request.getfixturevalue("warm_trainers")
    (lab / "envs" / "forker.py").write_text(FORKER)
    pids = lab / "forked.txt"
    os.environ["FORKED_PIDS"] = str(pids)
    try:
        new(lab, "forks", environment="{entry_point: 'envs.forker:Forker', max_episode_steps: 10}", budget=200)
        code, stdout, stderr = invoke("experiment", "start", "-e", "forks", "--local")
    finally:
        del os.environ["FORKED_PIDS"]
    assert code == 0, stdout + stderr
    assert status("forks")["state"] == "completed"
    forked = [int(line) for line in pids.read_text().split()]
    assert forked
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(map(alive, forked)):
        time.sleep(0.2)
    left = [pid for pid in forked if alive(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)  # the test cleans up what the code under test left
    assert not left, f"the environment's children outlived the run: {left}"
    log = (lab / "experiments" / "forks" / "logs" / "trainer.log").read_text()
    assert "process(es) the run left behind" in log
    assert "SIGTERM received" not in log  # the helper ended at the SIGTERM; it did not answer as the trainer would
