"""A GKE run whose trainer fails in its first minutes says why: ``start --wait`` and ``status`` show the trainer's
own error line from ``result.json`` in the bucket, and ``--wait`` exits non-zero (the stack stays, and it says so)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gke_testkit import FakePulumi
from typer.testing import CliRunner

from tfcli.cli.app import app

runner = CliRunner()
BUCKET = "tfcli-si1-96f4ee46"  # by heart: a renamed bucket fails tests
ERROR = "/spec/experiment.yaml: agent: cannot build the dqn agent: Invalid value for memory argument capacity"


def test_wait_and_status_show_the_trainers_error_line(
    gke_project: Path, fake_pulumi: FakePulumi, gcs: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tfcli.gke.waiting

    monkeypatch.setattr(tfcli.gke.waiting, "POLL_SECONDS", 0.05)
    gcs.create_bucket(BUCKET)
    failed = {"status": "failed", "timesteps": 0, "episodes": 0, "wall_seconds": 0.0, "timesteps_per_second": 0.0,
              "mean_return_last_100": None, "updates": 0, "error": ERROR}  # fmt: skip
    gcs.bucket(BUCKET).blob("si1/result.json").upload_from_string(json.dumps(failed).encode())
    assert runner.invoke(app, ["experiment", "new", "-f", "cartpole-ppo", "-n", "si1"]).exit_code == 0

    result = runner.invoke(app, ["experiment", "start", "-e", "si1", "--wait"])
    assert result.exit_code == 1, result.output
    assert "si1 failed" in result.stderr
    assert ERROR in " ".join(result.stderr.split())
    assert "experiment stop -e si1" in result.stderr  # still deployed, and billed

    shown = runner.invoke(app, ["experiment", "status", "-e", "si1", "--json"])
    assert shown.exit_code == 0, shown.output
    status = json.loads(shown.stdout)
    assert status["state"] == "failed" and status["detail"] == ERROR
    text = runner.invoke(app, ["experiment", "status", "-e", "si1"])
    assert ERROR in " ".join(text.stdout.split())
