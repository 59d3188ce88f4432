"""``tfcli experiment reap`` (what the scheduled CI job runs): experiments that completed or paused at ``max_cost``
are stopped — results downloaded, stack destroyed — and so is one past its ``ttl``; one still training within it, or
paused by hand, is left alone. The stack is played by the fake ``pulumi``, the bucket by the GCS emulator."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from gke_testkit import FakePulumi
from test_experiment_results import episodes, invoke, started, upload

pytestmark = pytest.mark.slow
__all__ = ["started"]  # the fixture: si1 deployed on its own cluster


def reap() -> tuple[int, str, str]:
    return invoke("experiment", "reap")


@pytest.mark.parametrize(
    ("result", "reason"),
    [
        ({"status": "completed", "timesteps": 100_000}, "si1: completed;"),  # its whole budget
        (
            {"status": "paused", "timesteps": 100, "reason": "max_cost reached ($1.00 of $1.00)"},
            "si1: paused at max_cost (max_cost reached ($1.00 of $1.00));",
        ),
    ],
    ids=["completed", "paused-at-max-cost"],
)
def test_a_run_that_ended_is_downloaded_then_destroyed(
    started: FakePulumi, gcs: Any, gke_project: Path, result: dict[str, Any], reason: str
) -> None:
    upload(gcs, {"progress.jsonl": episodes(3), "result.json": result})
    code, stdout, stderr = reap()
    assert code == 0, stderr
    assert reason in stdout and "destroy" in started.verbs()
    assert started.stacks()["si1"]["resources"] == []
    downloaded = gke_project / "experiments" / "si1" / "results" / "result.json"
    assert json.loads(downloaded.read_text())["status"] == result["status"]
    started.clear()
    code, stdout, _ = reap()  # nothing deployed any more: nothing to do
    assert code == 0 and "Nothing to reap" in stdout and "destroy" not in started.verbs()


def test_a_training_run_stays_until_its_ttl_then_is_stopped(started: FakePulumi, gcs: Any, gke_project: Path) -> None:
    upload(gcs, {"progress.jsonl": episodes(3)})
    code, stdout, _ = reap()
    assert code == 0 and "Nothing to reap" in stdout and "destroy" not in started.verbs()  # no ttl: it trains on

    spec_file = gke_project / "experiments" / "si1" / "experiment.yaml"
    spec = yaml.safe_load(spec_file.read_text())
    spec_file.write_text(yaml.safe_dump({**spec, "ttl": "2h"}))
    code, stdout, _ = reap()
    assert code == 0 and "Nothing to reap" in stdout  # started a moment ago: within its 2 hours

    record_file = gke_project / "experiments" / "si1" / "run.json"
    record = json.loads(record_file.read_text())
    record["started_at"] = (datetime.now(UTC) - timedelta(hours=3)).isoformat()
    record_file.write_text(json.dumps(record))
    code, stdout, stderr = reap()
    assert code == 0, stderr
    assert "si1: up 3.0 h, past its ttl;" in stdout and "destroy" in started.verbs()
    assert started.stacks()["si1"]["resources"] == []


def test_in_a_checkout_without_run_records_the_deployed_stack_is_still_reaped(
    started: FakePulumi, gcs: Any, gke_project: Path
) -> None:
    """CI's checkout has the experiment's spec and stack file but no ``run.json`` (git-ignored): reap finds the
    stack through the stack file and asks Pulumi whether it is up."""
    (gke_project / "experiments" / "si1" / "run.json").unlink()
    upload(gcs, {"progress.jsonl": episodes(3), "result.json": {"status": "completed", "timesteps": 100_000}})
    code, stdout, stderr = reap()
    assert code == 0, stderr
    assert "si1: completed;" in stdout and started.stacks()["si1"]["resources"] == []
    assert (gke_project / "experiments" / "si1" / "results" / "result.json").is_file()
