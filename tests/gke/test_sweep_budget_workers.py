"""The sweep's ``max_cost`` on an early-stopped GKE sweep, whose pods are workers (trainer/sweep_worker.py) that claim
trials from the bucket: each trial's trainer stops itself at the sweep's limit (the first ones trained) or ends before
building anything (the ones claimed after it ran out), ``paused`` with the sweep's reason and exit 0, so its claim
ends and both workers exit 0 once every trial has: the Job completes with no process on the user's machine. Each
pod is a real ``python -m trainer sweep-worker`` with its own GCS FUSE mount of the bucket on the GCS emulator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_kit import early_stop_sweep, invoke
from fake_kube import Cluster
from gke_testkit import FakePulumi, make_gke_project
from played_sweep import PlayedSweep
from test_sweep_workers_gke import BUCKET, FAST, SWEEP, api

pytestmark = pytest.mark.slow
__all__ = ["api"]  # the fixture: the Kubernetes API stand-in


def test_workers_end_every_trial_at_the_sweeps_limit_and_exit_0(
    lab: Path, fake_pulumi: FakePulumi, gcs: Any, api: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tfcli.gke.waiting

    monkeypatch.setattr(tfcli.gke.waiting, "POLL_SECONDS", 0.05)
    make_gke_project(lab)
    gcs.create_bucket(BUCKET)
    (lab / "sweep.yaml").write_text(early_stop_sweep(SWEEP) + "max_cost: 1.0e-09\n")
    assert invoke("experiment", "sweep", "-f", "sweep.yaml", "--no-build")[0] == 0
    code, stdout, stderr = invoke("experiment", "start", "-s", SWEEP, "--parallel", "2")
    assert code == 0, stdout + stderr
    mount = tmp_path / "mount"
    mount.mkdir()
    controller = PlayedSweep(fake_pulumi.state, SWEEP, gcs.bucket(BUCKET), api, {}, mount=mount, env=FAST).play(400)
    logs = "".join(log.read_text()[-3000:] for log in mount.glob("*.log"))
    assert controller.completed == {0, 1} and not controller.failed_indexes, logs  # both workers exited 0

    code, stdout, stderr = invoke("experiment", "status", "-s", SWEEP, "--json")
    assert code == 0, stderr
    trials = json.loads(stdout)["trials"]
    assert len(trials) == 4
    for trial in trials:
        assert trial["state"] == "paused" and f"sweep {SWEEP}, all its trials" in trial["detail"], trial
    assert "raise the sweep's max_cost" in logs  # a trial claimed after the budget ran out ended before building
