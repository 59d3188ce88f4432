"""What ``trainer run`` decides before it builds anything (trainer/ended.py), through its command line as a pod runs
it: a completed run whose budget is reached ends at once with 0 (a resumed GKE sweep's finished trials are not
retrained by a Job that runs it again), and a completed run whose budget was raised trains exactly the rest from its
final checkpoint."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from trainer_testkit import TINY_PPO

pytestmark = pytest.mark.slow  # real trainings or trainer processes (README "Development")

SPEC = {"name": "ended", "environment": "cartpole", "agent": TINY_PPO, "saver_frequency": "100t"}


def trainer(tmp_path: Path, budget: int, *extra: str) -> tuple[int, str, float]:
    spec = tmp_path / f"spec-{budget}.yaml"
    spec.write_text(yaml.safe_dump({**SPEC, "total_timesteps": budget}))
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "trainer", "run", "--spec", str(spec), "--output", str(tmp_path / "out"), *extra],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done.returncode, done.stderr, time.monotonic() - began


def result(tmp_path: Path) -> dict[str, object]:
    return dict(json.loads((tmp_path / "out" / "result.json").read_text()))


def test_done_and_extended(tmp_path: Path) -> None:
    code, stderr, _ = trainer(tmp_path, 200)
    assert code == 0, stderr
    written = (tmp_path / "out" / "result.json").stat().st_mtime_ns

    code, stderr, seconds = trainer(tmp_path, 200)  # a resumed sweep's completed trial: nothing to train
    assert code == 0 and "already completed: 200 timesteps" in stderr and seconds < 5
    assert "resuming from checkpoint" not in stderr and (tmp_path / "out" / "result.json").stat().st_mtime_ns == written

    code, stderr, _ = trainer(tmp_path, 400)  # the raised budget
    assert code == 0, stderr
    assert "resuming from checkpoint" in stderr and result(tmp_path)["timesteps"] == 400


def test_a_pruned_trial_stays_pruned_until_released(tmp_path: Path) -> None:
    """Whatever runs it again (a GKE Job replaced by a new image or code, an older stack file: none of them holds
    it), a pruned trial ends at once; ``resume --include-pruned`` releases it (``release``) and it trains on."""
    from trainer.ended import RELEASED, release

    code, stderr, _ = trainer(tmp_path, 200)
    assert code == 0, stderr
    pruned = {**result(tmp_path), "status": "pruned", "reason": "IQM 5.0 at 200 timesteps"}
    (tmp_path / "out" / "result.json").write_text(json.dumps(pruned))

    code, stderr, seconds = trainer(tmp_path, 400)  # a raised budget: still pruned
    assert code == 0 and "it stays pruned" in stderr and seconds < 5, stderr
    assert result(tmp_path) == pruned and not (tmp_path / "out" / RELEASED).exists()

    release(tmp_path / "out")
    assert json.loads((tmp_path / "out" / RELEASED).read_text()) == {"pruned": pruned["reason"], "timesteps": 200}
    code, stderr, _ = trainer(tmp_path, 400)
    assert code == 0, stderr
    assert "resuming from checkpoint" in stderr and result(tmp_path)["timesteps"] == 400
