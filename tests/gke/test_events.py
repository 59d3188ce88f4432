"""Folding Pulumi engine events into what the progress display shows, and Pulumi's output into a short message."""

from __future__ import annotations

from pulumi.automation import EngineEvent

from tfcli.gke.events import UpdateTracker
from tfcli.gke.pulumi_errors import meaningful_lines


def event(**data: object) -> EngineEvent:
    return EngineEvent.from_json({"sequence": 1, "timestamp": 0, **data})


def step(kind: str, op: str, type_: str, name: str) -> EngineEvent:
    metadata = {"op": op, "urn": f"urn:pulumi:si1::tfcli::{type_}::{name}", "type": type_, "provider": ""}
    return event(**{kind: {"metadata": metadata}})


def test_tracker_counts_done_resources_shows_the_running_one_and_grows_its_estimate() -> None:
    tracker = UpdateTracker("up", "si1", total=2)
    tracker.on_event(step("resourcePreEvent", "same", "pulumi:pulumi:Stack", "tfcli-si1"))
    tracker.on_event(step("resourcePreEvent", "create", "gcp:container/cluster:Cluster", "si1-cluster"))
    assert tracker.current == "creating gcp:container/cluster:Cluster si1-cluster"
    tracker.on_event(step("resourcePreEvent", "update", "kubernetes:batch/v1:Job", "si1-job-learner"))
    assert tracker.total == 3  # more than the plan said
    assert tracker.current == "updating kubernetes:batch/v1:Job si1-job-learner"
    tracker.on_event(step("resOutputsEvent", "update", "kubernetes:batch/v1:Job", "si1-job-learner"))
    tracker.on_event(step("resOutputsEvent", "create", "gcp:container/cluster:Cluster", "si1-cluster"))
    assert (tracker.completed, tracker.current) == (2, "")
    boom = {"message": "<{%fg 1%}>boom<{%reset%}>\n", "color": "raw", "severity": "error"}
    tracker.on_event(event(diagnosticEvent=boom))
    tracker.on_event(event(diagnosticEvent={"message": "just saying", "color": "raw", "severity": "info"}))
    tracker.on_event(event(summaryEvent={"resourceChanges": {"create": 1, "update": 1, "same": 1}}))
    assert tracker.errors == ["boom"]
    assert tracker.change_summary() == "1 created, 1 updated, 1 unchanged"
    tracker.finish(True)
    assert (tracker.finished, tracker.succeeded, tracker.total) == (True, True, 2)


def test_failed_operations_are_named() -> None:
    tracker = UpdateTracker("destroy", "si1")
    bucket = "gcp:storage/bucket:Bucket"
    metadata = {"op": "delete", "urn": f"urn:pulumi:si1::tfcli::{bucket}::si1-bucket", "type": bucket, "provider": ""}
    tracker.on_event(event(resourcePreEvent={"metadata": metadata}))
    tracker.on_event(event(resOpFailedEvent={"metadata": metadata, "status": 1, "steps": 1}))
    assert tracker.failed == ["gcp:storage/bucket:Bucket si1-bucket"] and tracker.current == ""


def test_meaningful_lines_drop_blanks_traces_and_boilerplate() -> None:
    text = "\n".join(
        [
            "Updating (si1):",
            "",
            "    at main.go:12",
            "goroutine 1 [running]:",
            "Resources:",
            "error: googleapi: Error 403: quota exceeded",
            "  <{%reset%}>details<{%reset%}>",
        ]
    )
    assert meaningful_lines(text) == ["Updating (si1):", "error: googleapi: Error 403: quota exceeded", "details"]
