"""``experiment stop``'s last resort reaches a trainer forked warm (:mod:`tfcli.local.zygote`): that trainer has a
session of its own, so killing its supervisor's process group leaves it running, and the SIGTERM its keeper then
sends only sets a flag that a trainer stuck in an environment's ``step()`` never reads. Stop kills it too: its lock
on the results is released and no process of the run is left (issue 30)."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_kit import forget_project_modules, invoke, wait_for

import tfcli.local.experiments
from tfcli.local.warm import warm_trainer
from trainer.output_lock import holder

pytestmark = pytest.mark.slow  # a warm trainer process and a trainer it forks

STUCK = """\
import time
from pathlib import Path

from envs.gridworld import GridWorld


class Stuck(GridWorld):
    \"\"\"The example grid world, until its 31st step hangs (a simulator that lost its connection).\"\"\"

    steps = 0

    def step(self, action):
        Stuck.steps += 1
        if Stuck.steps > 30:
            Path("hung-in-step").write_text("yes")
            time.sleep(3600)
        return super().step(action)
"""


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie its keeper has not reaped yet has ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture
def stuck(lab: Path) -> Iterator[Path]:
    (lab / "envs" / "stuck.py").write_text(STUCK)
    (lab / "stuck.yaml").write_text(
        "name: stuck\nenvironment: {entry_point: 'envs.stuck:Stuck', max_episode_steps: 20}\n"
        "agent: {agent: ppo, batch_size: 2, network: [{type: dense, size: 8}]}\ntotal_timesteps: 1000\n"
    )
    forget_project_modules()
    yield lab
    forget_project_modules()


def test_stop_kills_a_stuck_trainer_forked_warm(stuck: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tfcli.local.experiments, "PAUSE_TIMEOUT", 3.0)
    results = stuck / "experiments" / "stuck" / "results"
    with warm_trainer(stuck / "warm.log"):
        code, _, stderr = invoke("experiment", "new", "-f", "stuck.yaml")
        assert code == 0, stderr
        code, _, stderr = invoke("experiment", "start", "-e", "stuck", "--local", "--detach")
        assert code == 0, stderr
        wait_for(lambda: (stuck / "hung-in-step").exists(), what="the trainer to hang in step()", timeout=240)
        trainer = holder(results)
        assert trainer and os.getpgid(trainer) == trainer  # forked warm: a session of its own
        assert "stuck: trainer forked" in (stuck / "warm.log").read_text()
        try:
            code, stdout, stderr = invoke("experiment", "stop", "-e", "stuck")
            assert code == 0, stdout + stderr
            assert holder(results) is None  # nothing writes the results any more
            wait_for(lambda: not alive(trainer), what="the trainer to be gone", timeout=5)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(trainer, signal.SIGKILL)  # never leave a stuck trainer behind a failing test
