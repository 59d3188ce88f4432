"""An early-stopped GKE sweep whose pods are workers (trainer/sweep_worker.py), played without a cloud and without a
tfcli process watching: the Job the fake ``pulumi up`` applied, run by the Job controller stand-in, each pod a real
``python -m trainer sweep-worker`` process with its own GCS FUSE mount of the bucket on the GCS emulator (which
checks request preconditions as GCS does, tests/gcs_preconditions.py), claiming trials through the storage API.

Issue 28 item 2: with the hopeless combination FIRST in grid order and 2 workers for 4 trials, the first trial at a
rung waits there (its worker takes the next trial) until the rung is decided, so the hopeless trials are pruned at
the first rung; under the old rule (train on while undecided) nothing ever waits and the test fails. A worker killed
mid-trial loses its lease and another worker finishes that trial exactly, from its checkpoint. With the hopeless
combination last, the same workers prune it too, and ``status -s``/``list -s`` read it all from the bucket."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_kit import early_stop_sweep, invoke
from fake_kube import Cluster
from gke_testkit import GCP_PROJECT, FakePulumi, make_gke_project, serve_api
from played_sweep import PlayedSweep

from infra.naming import bucket_name
from trainer.sweep_claims import claims_folder

pytestmark = pytest.mark.slow

SWEEP = "asha-workers"
BUCKET = bucket_name(SWEEP, GCP_PROJECT)
BUDGET = 600
FAST = {"TFCLI_CLAIM_LEASE": "4", "TFCLI_WORKER_POLL": "0.3"}  # seconds, not minutes: a dead worker's lease expires


@pytest.fixture
def api(fake_pulumi: FakePulumi, auth_plugin: Path) -> Iterator[Cluster]:
    yield from serve_api(fake_pulumi, SWEEP)


def _deploy(lab: Path, gcs: Any, text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import tfcli.gke.waiting

    monkeypatch.setattr(tfcli.gke.waiting, "POLL_SECONDS", 0.05)
    make_gke_project(lab)
    gcs.create_bucket(BUCKET)
    (lab / "sweep.yaml").write_text(text)
    code, stdout, stderr = invoke("experiment", "sweep", "-f", "sweep.yaml", "--no-build")
    assert code == 0, stderr
    code, stdout, stderr = invoke("experiment", "start", "-s", SWEEP, "--parallel", "2")
    assert code == 0, stdout + stderr


def _play(sweep: PlayedSweep, mount: Path) -> dict[str, str]:
    mount.mkdir()
    controller = sweep.play(400)
    logs = {log.name: log.read_text()[-3000:] for log in mount.glob("*.log")}
    assert controller.completed == {0, 1} and not controller.failed_indexes, logs  # both workers exited 0
    return logs


def _status() -> dict[str, dict[str, Any]]:
    code, stdout, stderr = invoke("experiment", "status", "-s", SWEEP, "--json")
    assert code == 0, stderr
    status = json.loads(stdout)
    assert status["state"] == "completed"
    return {t["trial"]: t for t in status["trials"]}


def _steps(mount: Path, trial: str) -> list[int]:
    lines = (mount / SWEEP / trial / "progress.jsonl").read_text().splitlines()
    return [int(json.loads(line)["timesteps"]) for line in lines]


@pytest.mark.parametrize("hopeless_first", [True, False], ids=["hopeless-first", "hopeless-last"])
def test_hopeless_trials_are_pruned_by_two_workers_in_either_queue_order(
    hopeless_first: bool,
    lab: Path,
    fake_pulumi: FakePulumi,
    gcs: Any,
    api: Cluster,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _deploy(lab, gcs, early_stop_sweep(SWEEP, hopeless_first=hopeless_first), monkeypatch)
    (job,) = json.loads((fake_pulumi.state / "state.json").read_text())["stacks"][SWEEP]["jobs"]
    assert job["spec"]["completions"] == job["spec"]["parallelism"] == 2  # two workers for four trials
    mount = tmp_path / "mount"
    sweep = PlayedSweep(fake_pulumi.state, SWEEP, gcs.bucket(BUCKET), api, {}, mount=mount, env=FAST)
    logs = _play(sweep, mount)

    trials = _status()
    hopeless, good = ((0, 1), (2, 3)) if hopeless_first else ((2, 3), (0, 1))
    states = {k: "pruned" if k in hopeless else "completed" for k in range(4)}
    assert [trials[f"{SWEEP}-{k}"]["state"] for k in range(4)] == [states[k] for k in range(4)]
    for k in hopeless:
        assert 150 <= trials[f"{SWEEP}-{k}"]["timesteps"] < 300, trials  # stopped at the first rung, not past it
        assert "at 150 timesteps, below the top 1/2 (2 combinations" in trials[f"{SWEEP}-{k}"]["detail"]
        assert list((mount / SWEEP / f"{SWEEP}-{k}" / "checkpoints").glob("*/COMPLETE"))  # kept where it stopped
    for k in good:
        assert trials[f"{SWEEP}-{k}"]["timesteps"] == BUDGET
        steps = _steps(mount, f"{SWEEP}-{k}")
        assert steps == sorted(steps) and len(set(steps)) == len(steps) and 300 < steps[-1] <= BUDGET  # one curve
    spent = sum(trial["timesteps"] for trial in trials.values())
    assert spent <= 0.75 * 4 * BUDGET, trials  # the full grid is 2,400
    if hopeless_first:  # the unfavourable order: only waiting at the rung prunes there
        assert "waiting at rung 150 timesteps" in "".join(logs.values()), logs  # a trial gave its worker away
    code, stdout, stderr = invoke("experiment", "list", "-s", SWEEP, "--json")
    assert code == 0, stderr
    rows = [(row["pruned"], row["best"]) for row in json.loads(stdout)]
    assert rows == ([(2, False), (0, True)] if hopeless_first else [(0, True), (2, False)])


def test_a_worker_killed_mid_trial_loses_its_lease_and_another_finishes_the_trial_exactly(
    lab: Path, fake_pulumi: FakePulumi, gcs: Any, api: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = early_stop_sweep(SWEEP).replace("saver_frequency: 10000t", "saver_frequency: 200t")
    _deploy(lab, gcs, text, monkeypatch)
    mount = tmp_path / "mount"
    victim = f"{SWEEP}-0"
    sweep = PlayedSweep(fake_pulumi.state, SWEEP, gcs.bucket(BUCKET), api, {}, mount=mount, env=FAST, oom_trial=victim)
    logs = _play(sweep, mount)
    assert sweep.killed_worker, logs  # its worker was killed once the trial had a checkpoint
    assert any(pod.attempt > 0 for pod in sweep.controller.pods) if sweep.controller else False  # a new pod

    trials = _status()
    assert trials[victim]["state"] == "completed" and trials[victim]["timesteps"] == BUDGET
    steps = _steps(mount, victim)
    assert steps == sorted(steps) and len(set(steps)) == len(steps) and 300 < steps[-1] <= BUDGET  # resumed exactly
    claim = json.loads(gcs.bucket(BUCKET).blob(f"{claims_folder(SWEEP, 0)}/{victim}.json").download_as_text())
    assert claim["ended"] == "completed"


def test_status_shows_a_trial_waiting_at_a_rung_on_gke(
    lab: Path, fake_pulumi: FakePulumi, gcs: Any, api: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 28 item 5 on GKE: the bucket's ``result.json`` of a trial given back at a rung reads ``waiting``."""
    _deploy(lab, gcs, early_stop_sweep(SWEEP), monkeypatch)
    reason = "waiting at rung 150 timesteps for 1 more combination (1 of 2 there)"
    counts = {"timesteps": 152, "episodes": 9, "wall_seconds": 2.0, "timesteps_per_second": 76.0, "updates": 4}
    result = {"status": "paused", **counts, "mean_return_last_100": 16.9, "reason": reason}
    gcs.bucket(BUCKET).blob(f"{SWEEP}/{SWEEP}-0/result.json").upload_from_string(json.dumps(result))
    code, stdout, stderr = invoke("experiment", "status", "-s", SWEEP, "--json")
    assert code == 0, stderr
    trials = {t["trial"]: t for t in json.loads(stdout)["trials"]}
    assert trials[f"{SWEEP}-0"]["state"] == "waiting"
    assert reason in trials[f"{SWEEP}-0"]["detail"]
    code, stdout, stderr = invoke("experiment", "status", "-s", SWEEP)
    assert code == 0 and "waiting" in stdout, stdout + stderr
