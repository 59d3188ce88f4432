"""An early-stopped sweep on GKE, played without a cloud: the sweep's Indexed Job (rendered by infra from its stack
file) run by the Job controller stand-in, each pod a real worker process (trainer/sweep_worker.py) that trains the
trials it claims into the shared results folder standing for the bucket's FUSE mount (tests/gke/played_sweep.py),
the bucket on the GCS emulator. The trials prune themselves from each other's progress there, with no tfcli process
watching; the workers' indexes complete; ``status -s`` and ``list -s`` read ``pruned`` and the reasons from the
bucket."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_kit import early_stop_sweep, invoke
from fake_kube import Cluster
from gke_testkit import GCP_PROJECT, FakePulumi, make_gke_project, serve_api
from played_sweep import PlayedSweep

from infra.naming import bucket_name

SWEEP = "asha-gke"
BUCKET = bucket_name(SWEEP, GCP_PROJECT)
FAST = {"TFCLI_WORKER_POLL": "0.3"}  # an idle worker looks again within a tick, not 5 s


@pytest.fixture
def api(fake_pulumi: FakePulumi, auth_plugin: Path) -> Iterator[Cluster]:
    yield from serve_api(fake_pulumi, SWEEP)


def test_trials_prune_themselves_through_the_shared_bucket(
    lab: Path, fake_pulumi: FakePulumi, gcs: Any, api: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tfcli.gke.waiting

    monkeypatch.setattr(tfcli.gke.waiting, "POLL_SECONDS", 0.05)
    make_gke_project(lab)
    gcs.create_bucket(BUCKET)
    (lab / "sweep.yaml").write_text(early_stop_sweep(SWEEP))
    code, stdout, stderr = invoke("experiment", "sweep", "-f", "sweep.yaml", "--no-build")
    assert code == 0, stderr
    code, stdout, stderr = invoke("experiment", "start", "-s", SWEEP, "--parallel", "2")
    assert code == 0, stdout + stderr

    sweep = PlayedSweep(fake_pulumi.state, SWEEP, gcs.bucket(BUCKET), api, {}, mount=tmp_path / "mount", env=FAST)
    (tmp_path / "mount").mkdir()
    controller = sweep.deploy()
    deadline = time.monotonic() + 300
    try:
        while not controller.finished and time.monotonic() < deadline:
            sweep.tick()
            time.sleep(0.2)
    finally:
        sweep.end_trainers()
    logs = {log.name: log.read_text()[-2000:] for log in (tmp_path / "mount").glob("*.log")}
    assert controller.finished, logs
    assert controller.completed == {0, 1} and not controller.failed_indexes, logs  # both workers exited 0

    code, stdout, stderr = invoke("experiment", "status", "-s", SWEEP, "--json")
    assert code == 0, stderr
    status = json.loads(stdout)
    assert status["state"] == "completed"
    trials = {t["trial"]: t for t in status["trials"]}
    assert [trials[f"{SWEEP}-{k}"]["state"] for k in range(4)] == ["completed", "completed", "pruned", "pruned"]
    for k in (2, 3):
        assert "at 150 timesteps, below the top 1/2 (2 combinations at this rung)" in trials[f"{SWEEP}-{k}"]["detail"]
        assert 150 <= trials[f"{SWEEP}-{k}"]["timesteps"] < 600
        assert list((tmp_path / "mount" / SWEEP / f"{SWEEP}-{k}" / "checkpoints").glob("*/COMPLETE"))
    code, stdout, stderr = invoke("experiment", "list", "-s", SWEEP, "--json")
    assert code == 0, stderr
    assert [(row["pruned"], row["best"]) for row in json.loads(stdout)] == [(0, True), (2, False)]
