"""``resume -s --include-pruned`` on this machine with real (tiny) TensorForce trials: an early-stopped sweep's pruned
trials stay pruned through ``start -s`` and a plain ``resume -s`` (nothing of theirs is touched), and with
``--include-pruned --total-timesteps N`` they train on from the checkpoint they were pruned at to exactly N, their
curve going on from their last episode — the early stop that pruned them does not prune them again — while the
completed trials are extended to N beside them."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_kit import early_stop_sweep, invoke
from test_resume_extend import assert_continued, episodes, result, results, said, states

pytestmark = pytest.mark.slow  # real trainings or trainer processes (README "Development")

EXTENDED = 900  # the sweep's budget was 600; the pruned trials stopped at the first rung (150)


def test_pruned_trials_stay_pruned_until_include_pruned_trains_them_on_exactly(lab: Path) -> None:
    (lab / "asha.yaml").write_text(early_stop_sweep())
    assert invoke("experiment", "sweep", "-f", "asha.yaml", "--no-build")[0] == 0
    code, stdout, stderr = invoke("experiment", "start", "-s", "asha", "--parallel", "2")
    assert code == 0, stdout + stderr
    assert states("asha") == ["completed", "completed", "pruned", "pruned"]
    trials = [f"asha-{k}" for k in range(4)]
    before = {name: episodes(lab, name) for name in trials}
    files = {name: (results(lab, name) / "result.json").read_bytes() for name in trials}
    pruned_at = {name: result(lab, name)["timesteps"] for name in trials[2:]}
    assert all(150 <= steps < 600 for steps in pruned_at.values())

    # Without --include-pruned, the pruned trials are left as they ended: by start -s and by a plain resume -s.
    code, stdout, stderr = invoke("experiment", "start", "-s", "asha", "--parallel", "2")
    assert states("asha") == ["completed", "completed", "pruned", "pruned"], stdout + stderr
    code, stdout, stderr = invoke("experiment", "resume", "-s", "asha")
    assert "2 pruned trial(s) left as they are (asha-2, asha-3)" in said(stdout, stderr), stdout + stderr
    assert states("asha") == ["completed", "completed", "pruned", "pruned"]
    assert {name: (results(lab, name) / "result.json").read_bytes() for name in trials} == files
    assert {name: episodes(lab, name) for name in trials} == before

    code, stdout, stderr = invoke(
        "experiment", "resume", "-s", "asha", "--include-pruned", "--total-timesteps", str(EXTENDED)
    )
    assert code == 0, stdout + stderr
    assert f"budget raised to timesteps {EXTENDED}: 4 finished run(s) continue" in said(stdout, stderr)
    assert states("asha") == ["completed"] * 4
    for name in trials:
        assert result(lab, name)["timesteps"] == EXTENDED, name  # exactly the rest of the raised budget
        assert_continued(before[name], episodes(lab, name), EXTENDED)
    for name, steps in pruned_at.items():
        log = (lab / "experiments" / name / "logs" / "trainer.log").read_text()
        assert "resuming from checkpoint" in log and f"{steps:,} timesteps" in log, log[-2000:]
