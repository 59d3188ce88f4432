"""What a Pulumi change does to a deployed sweep's running Job, under the fake ``pulumi``'s pulumi-kubernetes
(tests/gke/fake_k8s_provider.py): a new ``--parallel`` is a new Job (pulumi-kubernetes replaces a Job whose
parallelism changes), made only once the old Job's pods are gone; so is a new image — never two pods on one trial's
folder, racing for its next checkpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from fake_kube import Cluster
from gke_testkit import FakePulumi
from job_controller import Outcome
from played_sweep import deployed_job
from test_sweep_failures import api, by_trial, played, sweep_json
from test_sweep_gke import SWEEP, gke_lab, invoke

__all__ = ["api", "gke_lab"]


def replaced_after_its_pods(fake_pulumi: FakePulumi, old: str, new: str) -> None:
    """The old Job was deleted, and the delete awaited (its pods gone), before the new one was created."""
    record = fake_pulumi.stacks()[SWEEP]
    steps = [(step["op"], step["name"], step.get("awaited")) for step in record["k8s_log"] if step["kind"] == "Job"]
    assert steps[-2:] == [("delete", old, True), ("create", new, None)], steps
    assert record["lingering"] == []


def test_a_new_parallel_on_a_running_sweep_replaces_its_job_and_keeps_the_finished_trials(
    gke_lab: Path, gcs: Any, api: Cluster, fake_pulumi: FakePulumi
) -> None:
    code, stdout, stderr = invoke("experiment", "start", "-s", SWEEP, "--parallel", "3")
    assert code == 0, stdout + stderr
    first = played(fake_pulumi, gcs, api, {k: [Outcome(0, ticks=50)] for k in range(3, 9)})
    first.deploy()
    for _ in range(3):  # trials 0 .. 2 complete, 3 .. 5 are running
        first.tick()
    old = deployed_job(fake_pulumi.state, SWEEP)

    code, stdout, stderr = invoke("experiment", "start", "-s", SWEEP, "--parallel", "5")
    assert code == 0, stdout + stderr
    new = deployed_job(fake_pulumi.state, SWEEP)
    assert new["spec"]["parallelism"] == 5 and new["metadata"]["name"] != old["metadata"]["name"]
    replaced_after_its_pods(fake_pulumi, old["metadata"]["name"], new["metadata"]["name"])
    trials = by_trial(sweep_json())
    assert {trials[k]["state"] for k in range(3)} == {"completed"}  # their results stay; the trainer ends them at once


def test_a_new_image_replaces_a_running_job_only_once_its_pods_are_gone(
    gke_lab: Path, gcs: Any, api: Cluster, fake_pulumi: FakePulumi
) -> None:
    code, stdout, stderr = invoke("experiment", "start", "-s", SWEEP, "--parallel", "3")
    assert code == 0, stdout + stderr
    old = deployed_job(fake_pulumi.state, SWEEP)
    settings = yaml.safe_load((gke_lab / "tfcli.yaml").read_text())
    settings["image"] = "europe-west4-docker.pkg.dev/test-project/tfcli/trainer:custom"
    (gke_lab / "tfcli.yaml").write_text(yaml.safe_dump(settings))

    code, stdout, stderr = invoke("experiment", "start", "-s", SWEEP, "--parallel", "3")
    assert code == 0, stdout + stderr
    new = deployed_job(fake_pulumi.state, SWEEP)
    assert new["spec"]["template"]["spec"]["containers"][0]["image"].endswith(":custom")
    replaced_after_its_pods(fake_pulumi, old["metadata"]["name"], new["metadata"]["name"])


def test_a_stack_file_from_an_older_checkout_cannot_roll_the_sweep_back(gke_lab: Path, fake_pulumi: FakePulumi) -> None:
    path = gke_lab / "stacks" / f"Pulumi.{SWEEP}.yaml"

    def set_rerun(value: int) -> None:
        document = yaml.safe_load(path.read_text())
        document["config"]["tfcli:rerun"] = value
        path.write_text(yaml.safe_dump(document, sort_keys=False))

    set_rerun(2)  # two resumes made new Jobs
    code, stdout, stderr = invoke("experiment", "start", "-s", SWEEP, "--parallel", "3")
    assert code == 0, stdout + stderr
    assert fake_pulumi.stacks()[SWEEP]["outputs"]["rerun"] == 2
    set_rerun(1)  # the stack file of a checkout from before the second
    fake_pulumi.clear()
    code, stdout, stderr = invoke("experiment", "start", "-s", SWEEP, "--parallel", "4")
    said = " ".join((stdout + stderr).split())
    assert code == 2 and f"Pulumi.{SWEEP}.yaml: tfcli:rerun: 1 is below the deployed sweep's 2" in said, said
    assert "Traceback" not in said and not [argv for argv in fake_pulumi.commands() if argv[0] == "up"]
