"""A trial trained on another worker pod a moment ago is read as it is now, not as this pod's GCS FUSE mount cached it
(trainer/mount_view.py): ``python -m trainer run`` lists its folder before it reads anything there."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from trainer.mount_view import refresh
from trainer.result_file import read_result

BUCKET = "other-pods"
PRUNED = {"status": "pruned", "reason": "IQM 6.0 at 150 timesteps, below the top 1/2", "timesteps": 150}


def test_a_listing_shows_what_another_pod_wrote_after_this_mount_cached_it(
    gcs: Any, gcsfuse: Callable[..., Path]
) -> None:
    gcs.create_bucket(BUCKET)
    bucket = gcs.bucket(BUCKET)
    for trial in ("new", "old"):  # trials begun on another pod: their folders are there, their result.json not yet
        bucket.blob(f"{trial}/progress.jsonl").upload_from_string("")
    mount = gcsfuse(BUCKET, ttl=60)
    assert read_result(mount / "new") == {} and read_result(mount / "old") == {}  # negative entries, cached
    bucket.blob("new/result.json").upload_from_string(json.dumps(PRUNED))  # another pod's writes, meanwhile
    bucket.blob("old/result.json").upload_from_string('{"status": "paused"}')
    assert read_result(mount / "new") == {}  # within the negative entry's 5 s: still absent here
    assert refresh(mount / "new") == 1
    assert read_result(mount / "new") == PRUNED

    refresh(mount / "old")
    assert read_result(mount / "old") == {"status": "paused"}  # this mount's entry: generation 1, for 60 s
    bucket.blob("old/result.json").upload_from_string(json.dumps(PRUNED))
    assert read_result(mount / "old") == {}  # its generation is gone: ESTALE, read as no result
    refresh(mount / "old")
    assert read_result(mount / "old") == PRUNED
    assert refresh(mount / "missing") == 0


@pytest.mark.slow  # a trainer process (README "Development")
def test_a_trial_pruned_on_another_pod_ends_at_once_here(
    gcs: Any, gcsfuse: Callable[..., Path], tmp_path: Path
) -> None:
    """The sweep worker's case: its mount looked the trial's ``result.json`` up (its previous trial judged a rung
    against it) before the pod that trained the trial last wrote it. Read through that cache, the trial would train
    on from its checkpoint; read as it is, it stays pruned."""
    gcs.create_bucket(BUCKET)
    bucket = gcs.bucket(BUCKET)
    bucket.blob("sweep/trial/result.json").upload_from_string('{"status": "running", "timesteps": 100}')
    mount = gcsfuse(BUCKET, ttl=60)
    assert read_result(mount / "sweep" / "trial")["status"] == "running"  # cached here for 60 s
    bucket.blob("sweep/trial/result.json").upload_from_string(json.dumps(PRUNED))
    spec = tmp_path / "trial.yaml"
    spec.write_text(yaml.safe_dump({"name": "trial", "environment": "cartpole", "agent": "ppo", "total_timesteps": 30}))
    done = subprocess.run(
        [sys.executable, "-m", "trainer", "run", "--spec", str(spec), "--output", str(mount / "sweep" / "trial")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "it stays pruned" in done.stderr, done.stderr
    assert json.loads(bucket.blob("sweep/trial/result.json").download_as_text()) == PRUNED  # nothing rewritten
