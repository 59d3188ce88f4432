"""A command that is refused has changed nothing (issue 29, rows 2 and 4, and a sweep's one budget): checked, then
written, under the run's lock. Real local sweeps of tiny CartPole trials, their queue running while the refused
command comes."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_kit import invoke, states, sweep_status, tiny_sweep, wait_for

pytestmark = pytest.mark.slow  # real trainings or trainer processes (README "Development")

LONG_SWEEP = tiny_sweep("busy", 200000, seeds=None)


def snapshot(lab: Path) -> dict[str, bytes]:
    """Every spec and stack file of the project, and every trial's folder listing."""
    files = [*lab.glob("experiments/*/*.yaml"), *lab.glob("stacks/*.yaml")]
    return {str(path.relative_to(lab)): path.read_bytes() for path in sorted(files)}


@pytest.fixture
def running_sweep(lab: Path) -> Path:
    (lab / "busy.yaml").write_text(LONG_SWEEP)
    code, stdout, stderr = invoke("experiment", "sweep", "-f", "busy.yaml", "--no-build")
    assert code == 0, stdout + stderr
    code, stdout, stderr = invoke("experiment", "start", "-s", "busy", "--parallel", "1", "--detach")
    assert code == 0, stdout + stderr
    wait_for(lambda: (lab / "experiments" / "busy-0" / "results" / "progress.jsonl").is_file(), what="training")
    yield lab
    invoke("experiment", "stop", "-s", "busy")


def test_extending_a_running_sweep_is_refused_before_anything_is_written(running_sweep: Path) -> None:
    """Row 4: refused ("already running"), but only after rewriting every trial's spec, sweep.yaml and the stack."""
    lab = running_sweep
    before = snapshot(lab)
    code, stdout, stderr = invoke("experiment", "resume", "-s", "busy", "--total-timesteps", "300000")
    assert code == 1 and "sweep 'busy' is already running" in stderr, stdout + stderr
    assert snapshot(lab) == before
    assert states("busy")[0] == "running"


def test_restarting_a_running_sweep_is_refused_before_anything_is_written(running_sweep: Path) -> None:
    """Row 2: `sweep NAME --restart` while it ran deleted training trials' folders and relabelled results."""
    lab = running_sweep
    changed = LONG_SWEEP.replace("[1e-3, 3e-3]", "[1e-2]")
    (lab / "busy.yaml").write_text(changed)
    before = snapshot(lab)
    progress = (lab / "experiments" / "busy-0" / "results" / "progress.jsonl").stat().st_size
    code, stdout, stderr = invoke("experiment", "sweep", "-f", "busy.yaml", "--no-build", "--restart")
    assert code == 1 and "sweep 'busy' is running (busy, busy-0" in stderr, stdout + stderr  # busy-1 too, if ahead
    assert snapshot(lab) == before
    assert (lab / "experiments" / "busy-1").is_dir()
    assert (lab / "experiments" / "busy-0" / "results" / "progress.jsonl").stat().st_size >= progress
    assert sweep_status("busy")["state"] == "running"


def test_one_trial_of_a_sweep_is_not_extended_alone(lab: Path) -> None:
    """A sweep has one budget: `resume -e TRIAL --total-timesteps N` would split it."""
    (lab / "busy.yaml").write_text(LONG_SWEEP)
    assert invoke("experiment", "sweep", "-f", "busy.yaml", "--no-build")[0] == 0
    before = snapshot(lab)
    code, stdout, stderr = invoke("experiment", "resume", "-e", "busy-1", "--total-timesteps", "300000")
    assert code == 2, stdout + stderr
    assert "experiment 'busy-1' is a trial of sweep 'busy', which has one budget" in stderr
    assert "tfcli experiment resume -s busy --total-timesteps 300000" in stderr
    assert snapshot(lab) == before


def test_restarting_a_running_experiment_from_a_changed_spec_is_refused_before_anything_is_written(lab: Path) -> None:
    """Row 2's rule for an experiment: `start -f SPEC --restart` rewrote experiment.yaml, then found it running."""
    spec = LONG_SWEEP.split("base:\n")[1].split("axes:")[0].replace("\n  ", "\n").strip() + "\n"
    (lab / "busy.yaml").write_text(spec)
    code, stdout, stderr = invoke("experiment", "start", "-f", "busy.yaml", "--local", "--detach")
    assert code == 0, stdout + stderr
    try:
        before = snapshot(lab)
        (lab / "busy.yaml").write_text(spec.replace("total_timesteps: 200000", "total_timesteps: 100000"))
        code, stdout, stderr = invoke("experiment", "start", "-f", "busy.yaml", "--local", "--restart", "--detach")
        assert code == 1 and snapshot(lab) == before, stdout + stderr
        assert "experiment 'busy' is running (busy)" in stderr
    finally:
        invoke("experiment", "stop", "-e", "busy")
