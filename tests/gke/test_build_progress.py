"""A trainer build's progress reaches the terminal through Pulumi's engine events: the build provider's stderr lines
arrive as ``info#err`` diagnostics without a URN (as the engine forwards a dynamic provider's output), the tracker
keeps each build's latest state, and the update display shows the running builds (status, elapsed time, step) and
prints each change once."""

from __future__ import annotations

import pytest
from pulumi.automation import EngineEvent

from infra.image_progress import BuildProgress
from tfcli.cli.stack_progress import RichUpdateObserver, running_now
from tfcli.gke.events import UpdateTracker

CPU = "us-central1-docker.pkg.dev/p/tfcli/trainer:abc-cpu"
GPU = "us-central1-docker.pkg.dev/p/tfcli/trainer:abc-gpu"
DYNAMIC = "pulumi-python:dynamic:Resource"


def provider_line(progress: BuildProgress) -> EngineEvent:
    diagnostic = {"urn": "", "prefix": "", "message": progress.line() + "\n", "color": "never", "severity": "info#err"}
    return EngineEvent.from_json({"sequence": 1, "timestamp": 0, "diagnosticEvent": diagnostic})


def pre(name: str) -> EngineEvent:
    metadata = {"op": "create", "urn": f"urn:pulumi:image.p::tfcli::{DYNAMIC}::{name}", "type": DYNAMIC, "provider": ""}
    return EngineEvent.from_json({"sequence": 1, "timestamp": 0, "resourcePreEvent": {"metadata": metadata}})


def test_the_tracker_keeps_each_builds_latest_progress_and_nothing_else() -> None:
    tracker = UpdateTracker("up", "image.p", total=5)
    tracker.on_event(provider_line(BuildProgress("b1", CPU, "QUEUED", 0)))
    tracker.on_event(provider_line(BuildProgress("b1", CPU, "WORKING", 12, "step 1/1 docker build")))
    tracker.on_event(provider_line(BuildProgress("b2", GPU, "QUEUED", 1)))
    other = {"message": "just saying\n", "color": "never", "severity": "info#err"}
    tracker.on_event(EngineEvent.from_json({"sequence": 2, "timestamp": 0, "diagnosticEvent": other}))
    assert tracker.builds == {
        CPU: BuildProgress("b1", CPU, "WORKING", 12, "step 1/1 docker build"),
        GPU: BuildProgress("b2", GPU, "QUEUED", 1),
    }
    assert tracker.errors == []


def test_the_display_shows_running_builds_and_prints_each_change_once(capsys: pytest.CaptureFixture[str]) -> None:
    tracker = UpdateTracker("up", "image.p", total=5)
    observer = RichUpdateObserver()
    observer.begin(tracker)
    tracker.on_event(pre("trainer-cpu"))
    observer.changed(tracker)
    assert running_now(tracker) == f"creating {DYNAMIC} trainer-cpu"  # type: ignore[union-attr]
    for progress in (
        BuildProgress("b1", CPU, "QUEUED", 0),
        BuildProgress("b1", CPU, "WORKING", 5, "step 1/1 docker build"),
        BuildProgress("b1", CPU, "WORKING", 35, "step 1/1 docker build"),  # a heartbeat: no new line
        BuildProgress("b2", GPU, "QUEUED", 2),
    ):
        tracker.on_event(provider_line(progress))
        observer.changed(tracker)
    running = running_now(tracker)
    assert running == "trainer:abc-cpu WORKING 35s, step 1/1 docker build; trainer:abc-gpu QUEUED 2s"
    tracker.on_event(provider_line(BuildProgress("b1", CPU, "SUCCESS", 61)))
    observer.changed(tracker)
    assert running_now(tracker) == "trainer:abc-gpu QUEUED 2s"  # type: ignore[union-attr]
    tracker.finish(True)
    observer.end(tracker)
    printed = [line.strip() for line in capsys.readouterr().out.splitlines() if "Cloud Build" in line]
    assert printed == [
        "Cloud Build trainer:abc-cpu QUEUED 0s",
        "Cloud Build trainer:abc-cpu WORKING 5s, step 1/1 docker build",
        "Cloud Build trainer:abc-gpu QUEUED 2s",
        "Cloud Build trainer:abc-cpu SUCCESS 1m01s",
    ]
