"""A GKE sweep worker's log starts with its own lines: google-api-core's notice about Python 3.11's end of support
("FutureWarning: You are using a Python version ...", printed when google-cloud-storage is imported) is silenced
where the worker starts, as the trainer silences it before importing TensorFlow (trainer/compat.py).

The worker is a real ``python -m trainer sweep-worker`` process over the GCS emulator: every trial's claim is ended
already, so it reads each one through the storage API, logs that every trial has ended and exits 0. It is started
both as the pod starts it and through :func:`trainer.sweep_worker.run_worker` alone, which silences the notice
itself rather than relying on ``trainer.__main__`` having done so for TensorFlow."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_kit import early_stop_sweep, invoke

from trainer.sweep_claims import Claims, claims_folder

pytestmark = pytest.mark.slow

SWEEP = "asha"
NOTICE = "You are using a Python version"
# run_worker alone, with the logging trainer.__main__ sets up
RUN_WORKER = (
    "import logging, sys; from pathlib import Path; from trainer.sweep_worker import run_worker;"
    "logging.basicConfig(format='%(name)s: %(message)s'); logging.getLogger('trainer').setLevel(logging.INFO);"
    "sys.exit(run_worker(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4], []))"
)


@pytest.mark.parametrize("entry", ["python -m trainer sweep-worker", "run_worker"])
def test_a_workers_stderr_has_no_python_version_notice(entry: str, lab: Path, gcs: Any, tmp_path: Path) -> None:
    (lab / "sweep.yaml").write_text(early_stop_sweep(SWEEP))
    code, _, stderr = invoke("experiment", "sweep", "-f", "sweep.yaml", "--no-build")
    assert code == 0, stderr
    specs = tmp_path / "specs"
    specs.mkdir()
    for k in range(4):  # the ConfigMap's files, as the pod has them
        shutil.copy(lab / "experiments" / f"{SWEEP}-{k}" / "experiment.yaml", specs / f"slot-{k}.yaml")
    bucket = gcs.create_bucket("results")
    claims = Claims(bucket, claims_folder(SWEEP, 0), "an-earlier-worker")
    for k in range(4):
        claim = claims.take(f"{SWEEP}-{k}")
        assert claim is not None and claims.end(f"{SWEEP}-{k}", claim, "completed") is not None

    env = {key: value for key, value in os.environ.items() if key != "PYTHONWARNINGS"}  # warnings as a pod shows them
    parent = str(tmp_path / "results" / SWEEP)
    if entry == "run_worker":
        command = [sys.executable, "-c", RUN_WORKER, str(specs), parent, "results", SWEEP]
    else:
        command = [sys.executable, "-m", "trainer", "sweep-worker", "--specs", str(specs)]
        command += ["--output-parent", parent, "--bucket", "results", "--prefix", SWEEP]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)

    assert done.returncode == 0, done.stderr
    assert "every trial of the sweep has ended" in done.stderr  # it did talk to the bucket
    assert NOTICE not in done.stderr and "FutureWarning" not in done.stderr, done.stderr
    assert done.stderr.splitlines()[0].endswith("every trial of the sweep has ended"), done.stderr
