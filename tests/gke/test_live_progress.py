"""A GKE run's progress reaches the bucket while it trains, through the pod's GCS FUSE volume as gcsfuse publishes
(tests/gcsfuse.py: a file is published when it is closed). The experiment is started on GKE by tfcli (the fake
``pulumi up`` renders and admits its learner Job); that Job's container then runs as a real trainer process with
the deployed ConfigMap at ``/etc/tfcli`` and the bucket's stand-in mount at ``/results``, publishing every second
(``TFCLI_PUBLISH_SECONDS=1`` for a test; 60 by default). ``status``/``list`` read the bucket as they do on GKE."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_kit import invoke
from gcsfuse import lose
from gke_testkit import GCP_PROJECT, FakePulumi, make_gke_project
from played_sweep import deployed_job, pod_args

from infra import naming
from infra.naming import bucket_name

pytestmark = pytest.mark.slow  # real trainings or trainer processes (README "Development")

NAME = "live"
BUCKET = bucket_name(NAME, GCP_PROJECT)
SPEC = f"""\
name: {NAME}
environment: cartpole
cluster: single-node
agent: {{agent: ppo, batch_size: 2, network: [{{type: dense, size: 8, activation: tanh}}]}}
run_mode: single
total_timesteps: 10000000
saver_frequency: 100000t
summary_frequency: 1s
"""
PUBLISH_SECONDS = 1.0


def written(log: Path) -> int:
    """The episodes the trainer has finished, by its last status line (``... episodes 340 ...``, every second). Not
    read through the pod's mount: there a read of the file being written would publish it (gcsfuse finalizes a
    streamed file that is read), and nothing reads it there on GKE."""
    found = re.findall(r"episodes ([\d,]+)", log.read_text()) if log.is_file() else []
    return int(found[-1].replace(",", "")) if found else 0


def status() -> dict[str, Any]:
    code, stdout, stderr = invoke("experiment", "status", "-e", NAME, "--json")
    assert code == 0, stderr
    return dict(json.loads(stdout))


@pytest.fixture
def training(
    lab: Path, fake_pulumi: FakePulumi, gcs: Any, gcsfuse: Callable[..., Path], tmp_path: Path
) -> Iterator[tuple[subprocess.Popen[bytes], Path, Path]]:
    """The experiment started on GKE and its learner pod training: (its trainer, its log, its GCS FUSE volume), once
    it has finished 5 episodes."""
    make_gke_project(lab)
    gcs.create_bucket(BUCKET)
    (lab / "live.yaml").write_text(SPEC)
    assert invoke("experiment", "new", "-f", "live.yaml")[0] == 0
    code, stdout, stderr = invoke("experiment", "start", "-e", NAME)
    assert code == 0, stdout + stderr

    stacks = json.loads((fake_pulumi.state / "state.json").read_text())["stacks"]
    spec_dir = tmp_path / "configmap"
    spec_dir.mkdir()
    for key, text in stacks[NAME]["config_maps"]["experiment-spec"].items():
        (spec_dir / key).write_text(text)
    volume = gcsfuse(BUCKET)  # the pod's GCS FUSE volume (metadata cache 60 s, as deployed)
    args = pod_args(deployed_job(fake_pulumi.state, NAME), {naming.SPEC_DIR: spec_dir, naming.RESULTS_DIR: volume})
    log = tmp_path / "learner.log"
    env = {**os.environ, "TFCLI_PUBLISH_SECONDS": str(PUBLISH_SECONDS)}
    with log.open("wb") as errors:
        process = subprocess.Popen([sys.executable, "-m", "trainer", *args], stdout=errors, stderr=errors, env=env)
    try:
        deadline = time.monotonic() + 180
        while written(log) < 5:
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.2)
        yield process, log, volume
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()


def test_gke_status_and_list_show_episodes_while_the_trainer_trains(
    training: tuple[subprocess.Popen[bytes], Path, Path],
) -> None:
    process, log, _ = training
    deadline = time.monotonic() + 10 * PUBLISH_SECONDS + 5
    current = status()
    while current["episodes"] == 0 and time.monotonic() < deadline:
        time.sleep(0.2)
        current = status()
    assert process.poll() is None, log.read_text()[-3000:]  # still training
    assert current["state"] == "running" and current["episodes"] > 0 and current["timesteps"] > 0
    (row,) = json.loads(invoke("experiment", "list", "--json")[1])
    assert row["timesteps"] >= current["timesteps"] > 0


def test_a_lost_node_loses_at_most_the_publication_interval(
    training: tuple[subprocess.Popen[bytes], Path, Path], gcs: Any
) -> None:
    """The node goes (the trainer and its mount killed outright: nothing is closed, nothing staged is uploaded): the
    bucket still holds every episode finished more than an interval before."""
    process, log, volume = training
    finished = written(log)
    time.sleep(3 * PUBLISH_SECONDS)  # more than one interval, with episodes finishing all the time
    process.send_signal(signal.SIGSTOP)
    lose(volume)
    process.send_signal(signal.SIGKILL)
    assert process.wait() == -signal.SIGKILL
    published = gcs.bucket(BUCKET).blob(f"{NAME}/progress.jsonl").download_as_bytes().decode()
    episodes = [json.loads(line)["episode"] for line in published.splitlines()]
    assert episodes == list(range(1, len(episodes) + 1)) and len(episodes) >= finished, log.read_text()[-2000:]
    assert status()["episodes"] == len(episodes)
