"""``resume -s`` of a GKE sweep with real (tiny) trainers in its pods: each deployed Job played by the Job controller
stand-in, each pod a real ``trainer`` process with the Job's own args and ConfigMap, writing to the shared results
folder that stands for the bucket's FUSE mount, synced to the bucket on the GCS emulator (tests/gke/played_sweep.py).
What the new Jobs did is read back through tfcli (``status -s --json``, ``download -s``):

- extended (``--total-timesteps``): every trial trains from its final checkpoint to exactly the raised budget, its
  curve going on from its old last episode (the old records unchanged, no episode run twice);
- ``--retry-failed``: a trial whose pods were OOM-killed past their first checkpoint until its index failed is left
  failed by a plain resume (the other trial completed, so no new Job), then re-run by a new Job from that checkpoint
  to exactly its budget, while the completed trial's pod ends at once (already done) and is not retrained.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_kit import invoke
from fake_kube import Cluster
from gke_testkit import GCP_PROJECT, FakePulumi, make_gke_project, serve_api
from job_controller import JobController
from played_sweep import PlayedSweep, deployed_job

from infra.naming import bucket_name

pytestmark = pytest.mark.slow  # real trainings or trainer processes (README "Development")

SWEEP = "duo-gke"
BUCKET = bucket_name(SWEEP, GCP_PROJECT)
BUDGET = 300
TRIALS = [f"{SWEEP}-0", f"{SWEEP}-1"]


def sweep_file(axis: str) -> str:
    """The tiny CartPole sweep :data:`SWEEP` over one ``axis`` (``key: [values]``)."""
    return f"""\
name: {SWEEP}
base:
  name: {SWEEP}
  environment: cartpole
  cluster: single-node
  agent: {{agent: ppo, batch_size: 2, network: [{{type: dense, size: 8, activation: tanh}}]}}
  total_timesteps: {BUDGET}
  saver_frequency: 100t
axes:
  {axis}
"""


SWEEP_FILE = sweep_file("agent.learning_rate: [1e-3, 3e-3]")


@pytest.fixture
def api(fake_pulumi: FakePulumi, auth_plugin: Path) -> Iterator[Cluster]:
    yield from serve_api(fake_pulumi, SWEEP)


@pytest.fixture
def started(lab: Path, fake_pulumi: FakePulumi, gcs: Any, api: Cluster, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The two-trial sweep created and started on GKE (its Job deployed, not yet run)."""
    import tfcli.gke.waiting

    monkeypatch.setattr(tfcli.gke.waiting, "POLL_SECONDS", 0.05)
    return start_sweep(lab, gcs, SWEEP_FILE, parallel=2)


def start_sweep(lab: Path, gcs: Any, sweep_file: str, *, parallel: int) -> Path:
    """The sweep ``sweep_file`` (named :data:`SWEEP`) created in ``lab`` and started on GKE (``--parallel``)."""
    make_gke_project(lab)
    gcs.create_bucket(BUCKET)
    (lab / "duo.yaml").write_text(sweep_file)
    code, _, stderr = invoke("experiment", "sweep", "-f", "duo.yaml", "--no-build")
    assert code == 0, stderr
    code, stdout, stderr = invoke("experiment", "start", "-s", SWEEP, "--parallel", str(parallel))
    assert code == 0, stdout + stderr
    return lab


def play(pulumi: FakePulumi, gcs: Any, api: Cluster, mount: Path, oom_killed: set[int] | None = None) -> JobController:
    """Run the Job deployed now to its end, its pods real trainers writing to ``mount`` (synced to the bucket)."""
    mount.mkdir(exist_ok=True)
    sweep = PlayedSweep(pulumi.state, SWEEP, gcs.bucket(BUCKET), api, {}, mount=mount, oom_killed=oom_killed or set())
    return sweep.play(240, tick=0.05)


def said(stdout: str, stderr: str) -> str:
    return " ".join((stdout + stderr).split())


def trials_status() -> dict[str, dict[str, Any]]:
    code, stdout, stderr = invoke("experiment", "status", "-s", SWEEP, "--json")
    assert code == 0, stderr
    return {trial["trial"]: trial for trial in json.loads(stdout)["trials"]}


def downloaded(lab: Path) -> dict[str, tuple[list[dict[str, Any]], dict[str, Any] | None]]:
    """``download -s``, then each trial's episodes and ``result.json`` (None: it wrote none) as downloaded."""
    code, stdout, stderr = invoke("experiment", "download", "-s", SWEEP)
    assert code == 0, stdout + stderr
    found = {}
    for name in TRIALS:
        results = lab / "experiments" / name / "results"
        lines = [json.loads(line) for line in (results / "progress.jsonl").read_text().splitlines()]
        result = json.loads((results / "result.json").read_text()) if (results / "result.json").is_file() else None
        found[name] = (lines, result)
    return found


def assert_continued(kept: list[dict[str, Any]], after: list[dict[str, Any]], budget: int) -> None:
    """The curve goes on from ``kept``: those records unchanged, the next ones numbered on from the last episode,
    timesteps strictly increasing across the boundary and never past the budget."""
    assert kept and after[: len(kept)] == kept and len(after) > len(kept)
    assert [line["episode"] for line in after] == list(range(1, len(after) + 1))  # none re-run, none lost
    steps = [line["timesteps"] for line in after]
    assert all(a < b for a, b in itertools.pairwise(steps)) and steps[-1] <= budget


def resumed_at(mount: Path, trial: str) -> list[str]:
    """The trainer's "resuming from checkpoint" lines in the trial's pod logs."""
    return [line for line in (mount / f"{trial}.log").read_text().splitlines() if "resuming from checkpoint" in line]


def test_extended_gke_sweep_trains_each_trial_on_to_exactly_the_new_budget(
    started: Path, fake_pulumi: FakePulumi, gcs: Any, api: Cluster, tmp_path: Path
) -> None:
    mount = tmp_path / "mount"
    controller = play(fake_pulumi, gcs, api, mount)
    assert controller.completed == {0, 1} and not controller.failed_indexes
    assert {name: t["timesteps"] for name, t in trials_status().items()} == dict.fromkeys(TRIALS, BUDGET)
    before = downloaded(started)

    code, stdout, stderr = invoke("experiment", "resume", "-s", SWEEP, "--total-timesteps", "500")
    assert code == 0, stdout + stderr
    assert "budget raised to timesteps 500: 2 finished run(s) continue" in said(stdout, stderr)
    controller = play(fake_pulumi, gcs, api, mount)
    assert controller.completed == {0, 1} and not controller.failed_indexes

    status = trials_status()
    assert {name: (t["state"], t["timesteps"]) for name, t in status.items()} == dict.fromkeys(
        TRIALS, ("completed", 500)
    )
    after = downloaded(started)
    for name in TRIALS:
        lines, result = after[name]
        assert result is not None and (result["status"], result["timesteps"]) == ("completed", 500)
        assert_continued(before[name][0], lines, 500)
        assert len(resumed_at(mount, name)) == 1 and f"{BUDGET} timesteps" in resumed_at(mount, name)[0]


def test_retry_failed_on_gke_reruns_the_failed_trial_from_its_checkpoint_to_exactly_its_budget(
    started: Path, fake_pulumi: FakePulumi, gcs: Any, api: Cluster, tmp_path: Path
) -> None:
    mount = tmp_path / "mount"
    controller = play(fake_pulumi, gcs, api, mount, oom_killed={1})
    assert controller.completed == {0} and controller.failed_indexes == {1}
    status = trials_status()
    assert (status[TRIALS[0]]["state"], status[TRIALS[1]]["state"]) == ("completed", "failed")
    checkpoint = sorted((mount / SWEEP / TRIALS[1] / "checkpoints").glob("*/COMPLETE"))[-1].parent
    kept = json.loads((checkpoint / "state.json").read_text())
    assert 100 <= kept["timesteps"] < BUDGET
    before = downloaded(started)
    assert before[TRIALS[1]][1] is None and len(before[TRIALS[1]][0]) >= kept["episodes"]
    done = (mount / SWEEP / TRIALS[0] / "result.json").read_bytes()

    # A plain resume holds the failed trial; with the other completed, nothing is left to run: no new Job.
    failed_job = deployed_job(fake_pulumi.state, SWEEP)
    code, stdout, stderr = invoke("experiment", "resume", "-s", SWEEP)
    assert code == 0, stdout + stderr
    assert f"1 failed trial(s) left as they are ({TRIALS[1]})" in said(stdout, stderr)
    assert deployed_job(fake_pulumi.state, SWEEP) == failed_job
    assert trials_status()[TRIALS[1]]["state"] == "failed" and downloaded(started) == before

    # --retry-failed: from the checkpoint to exactly the budget; the completed trial gets no pod (one slot: trial 1).
    code, stdout, stderr = invoke("experiment", "resume", "-s", SWEEP, "--retry-failed")
    assert code == 0, stdout + stderr
    retry_job = deployed_job(fake_pulumi.state, SWEEP)
    assert retry_job["metadata"]["name"] != failed_job["metadata"]["name"] and retry_job["spec"]["completions"] == 1
    controller = play(fake_pulumi, gcs, api, mount)
    assert controller.completed == {0} and not controller.failed_indexes
    status = trials_status()
    assert {name: (t["state"], t["timesteps"]) for name, t in status.items()} == dict.fromkeys(
        TRIALS, ("completed", BUDGET)
    )
    after = downloaded(started)
    lines, result = after[TRIALS[1]]
    assert result is not None and (result["status"], result["timesteps"]) == ("completed", BUDGET)
    assert_continued(before[TRIALS[1]][0][: kept["episodes"]], lines, BUDGET)
    where = f"{kept['timesteps']:,} timesteps, {kept['episodes']:,} episodes done"
    assert resumed_at(mount, TRIALS[1])[-1].endswith(where)
    assert (mount / SWEEP / TRIALS[0] / "result.json").read_bytes() == done and after[TRIALS[0]] == before[TRIALS[0]]
    assert "already completed" not in (mount / f"{TRIALS[0]}.log").read_text()  # no second pod ran it
