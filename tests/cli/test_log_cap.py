"""``trainer.log`` has a size cap (issue 29's risks): an environment printing a megabyte a step fills 8 MiB of
``trainer.log`` (its head), then a note saying so, then the newest output, the output before it moved to
``trainer.log.1``; the run's first and last lines are kept. A real run: the supervisor, the trainer and an
environment that prints, 40 steps."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_kit import invoke, status

pytestmark = pytest.mark.slow  # real trainings or trainer processes (README "Development")

CHATTY = """\
import sys

import gymnasium
import numpy as np
from gymnasium import spaces


class Chatty(gymnasium.Env):
    def __init__(self):
        self.observation_space = spaces.Box(0.0, 1.0, shape=(2,), dtype=np.float32)
        self.action_space = spaces.Discrete(2)
        self.steps = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.steps = 0
        return np.zeros(2, dtype=np.float32), {}

    def step(self, action):
        self.steps += 1
        print("x" * 1_000_000, flush=True)
        return np.zeros(2, dtype=np.float32), 1.0, self.steps >= 10, False, {}
"""
SPEC = """\
name: chatty
environment: {entry_point: 'envs.chatty:Chatty', max_episode_steps: 10}
agent: {agent: ppo, batch_size: 2, network: [{type: dense, size: 8}]}
total_timesteps: 40
"""
MIB = 2**20


def test_trainer_log_keeps_its_head_and_a_rotating_tail(lab: Path) -> None:
    (lab / "envs" / "chatty.py").write_text(CHATTY)
    (lab / "chatty.yaml").write_text(SPEC)
    code, stdout, stderr = invoke("experiment", "start", "-f", "chatty.yaml", "--local")
    assert code == 0, stdout + stderr
    assert status("chatty")["state"] == "completed"
    logs = lab / "experiments" / "chatty" / "logs"
    log, older = (logs / "trainer.log").read_bytes(), (logs / "trainer.log.1").read_bytes()
    assert len(log) <= 16 * MIB and len(older) <= 4 * MIB, (len(log), len(older))  # 40 MB printed
    assert log[: 8 * MIB].startswith(b"20") and b"INFO trainer.run: chatty: single" in log[:4096]  # its head
    assert b"[tfcli: trainer.log is capped: its first 8 MiB" in log[8 * MIB : 8 * MIB + 4096]
    assert b"completed: 40 timesteps" in log[-20_000:] + older[-20_000:]  # and its last lines
