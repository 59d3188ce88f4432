"""A GKE sweep's trials stopping at ``max_cost`` are paused trials, not failed indexes, and ``resume -s`` goes on
with them once ``max_cost`` is raised.

Three tiny trials, two of them with a ``max_cost`` they reach at their first steps (a sweep axis) and one with room to
finish: more than half (``maxFailedIndexes``: 1 of 3) stop at their limit. Each pod is a real trainer with the
deployed Job's own args and env (its ``TFCLI_HOURLY_PRICE``), run by the Job controller stand-in
(tests/gke/played_sweep.py, tests/job_controller.py): a trial at its limit must end its index without failing it,
else the Job fails as ``MaxFailedIndexesExceeded`` (a fault all trials share) and the third trial is stopped with it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_kit import invoke
from fake_kube import Cluster
from gke_testkit import FakePulumi, serve_api
from played_sweep import deployed_job
from test_sweep_resume_trainers import BUDGET, SWEEP, TRIALS, play, start_sweep, sweep_file

TINY, ROOMY = 1e-9, 1000.0
SWEEP_FILE = sweep_file(f"max_cost: [{TINY}, {2 * TINY}, {ROOMY}]")
AT_LIMIT = {f"{SWEEP}-0", f"{SWEEP}-1"}


@pytest.fixture
def api(fake_pulumi: FakePulumi, auth_plugin: Path) -> Iterator[Cluster]:
    yield from serve_api(fake_pulumi, SWEEP)


def sweep_status() -> dict[str, Any]:
    code, stdout, stderr = invoke("experiment", "status", "-s", SWEEP, "--json")
    assert code == 0, stderr
    return dict(json.loads(stdout))


def test_trials_at_max_cost_end_their_indexes_without_failing_the_job_and_resume_goes_on(
    lab: Path, fake_pulumi: FakePulumi, gcs: Any, api: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tfcli.gke.waiting

    monkeypatch.setattr(tfcli.gke.waiting, "POLL_SECONDS", 0.05)
    start_sweep(lab, gcs, SWEEP_FILE, parallel=3)
    mount = tmp_path / "mount"
    controller = play(fake_pulumi, gcs, api, mount)
    job = controller.job_document()
    assert not controller.failed_indexes and controller.completed == {0, 1, 2}, job["status"]
    assert [c["type"] for c in job["status"]["conditions"] if c["status"] == "True"][-1] == "Complete"

    status = sweep_status()
    trials = {trial["trial"]: trial for trial in status["trials"]}
    for name in AT_LIMIT:
        assert trials[name]["state"] == "paused" and trials[name]["detail"].startswith("max_cost reached ($"), name
        assert trials[name]["timesteps"] < BUDGET
    assert (trials[f"{SWEEP}-2"]["state"], trials[f"{SWEEP}-2"]["timesteps"]) == ("completed", BUDGET)
    assert status["state"] == "failed" and "MaxFailedIndexes" not in status["detail"]
    assert status["detail"] == f"2 of 3 trials did not complete: {SWEEP}-0 paused, {SWEEP}-1 paused"
    code, stdout, stderr = invoke("experiment", "list", "-s", SWEEP)
    listed = " ".join(stdout.split())
    assert code == 0, stderr
    assert "max_cost=1e-09 0/1" in listed and "failed" not in listed, listed

    # max_cost raised in sweep.yaml and in each trial's experiment.yaml alike (an axis changed in sweep.yaml alone
    # would relabel the trials' results, which reading the sweep refuses): resume -s replaces the ended Job, holding
    # no trial; the two go on to the budget.
    raised = {TINY: ROOMY, 2 * TINY: ROOMY + 1, ROOMY: ROOMY + 2}
    sweep_yaml = lab / "experiments" / SWEEP / "sweep.yaml"
    definition = yaml.safe_load(sweep_yaml.read_text())
    definition["axes"]["max_cost"] = [raised[value] for value in definition["axes"]["max_cost"]]
    sweep_yaml.write_text(yaml.safe_dump(definition, sort_keys=False))
    for trial_yaml in (lab / "experiments").glob(f"{SWEEP}-*/experiment.yaml"):
        spec = yaml.safe_load(trial_yaml.read_text())
        spec["max_cost"] = raised[spec["max_cost"]]
        trial_yaml.write_text(yaml.safe_dump(spec, sort_keys=False))
    ended_job = deployed_job(fake_pulumi.state, SWEEP)
    code, stdout, stderr = invoke("experiment", "resume", "-s", SWEEP)
    assert code == 0, stdout + stderr
    new_job = deployed_job(fake_pulumi.state, SWEEP)
    assert new_job["metadata"]["name"] != ended_job["metadata"]["name"]
    assert "--hold" not in new_job["spec"]["template"]["spec"]["containers"][0]["args"]
    controller = play(fake_pulumi, gcs, api, mount)
    assert controller.completed == {0, 1} and not controller.failed_indexes  # a slot each for trials 0 and 1 only
    status = sweep_status()
    assert status["state"] == "completed"
    assert {t["trial"]: (t["state"], t["timesteps"]) for t in status["trials"]} == dict.fromkeys(
        [*TRIALS, f"{SWEEP}-2"], ("completed", BUDGET)
    )
    assert "resuming from checkpoint" in (mount / f"{SWEEP}-0.log").read_text()
