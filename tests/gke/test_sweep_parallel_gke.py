"""A sweep's trials at a time on GKE follow the one rule of trainer/kernel/spec/parallel.py, as locally
(tests/cli/test_sweep_parallel.py): the sweep file's ``parallel`` is the default, ``start -s --parallel N``
overrides it, and the value in effect is the stack's ``tfcli:parallelism``, the Job's ``parallelism``, the sweep's
``run.json`` ``parallel``, and what ``status -s`` and ``plan -s`` show. The stack is played by the fake ``pulumi``
(whose program is the sweep program's own config reader, infra/sweep_config.py), the bucket by gcp-storage-emulator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_kit import invoke
from gke_testkit import GCP_PROJECT, FakePulumi, make_gke_project, stack_config

from infra.naming import bucket_name

pytestmark = pytest.mark.slow

SWEEP = "par"


def in_effect(lab: Path) -> dict[str, Any]:
    """Where the trials at a time show: the stack key, the deployed output, run.json, status -s, plan -s."""
    status = json.loads(invoke("experiment", "status", "-s", SWEEP, "--json")[1])
    plan = json.loads(invoke("experiment", "plan", "-s", SWEEP, "--json")[1])
    record = json.loads((lab / "experiments" / SWEEP / "run.json").read_text())
    return {
        "key": stack_config(lab, SWEEP).get("tfcli:parallelism"),
        "record": record["parallel"],
        "status": status["parallel"],
        "plan": plan["parallelism"],
    }


def test_the_sweep_files_parallel_is_the_default_and_the_flag_overrides_it(
    lab: Path, fake_pulumi: FakePulumi, gcs: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tfcli.gke.waiting

    monkeypatch.setattr(tfcli.gke.waiting, "POLL_SECONDS", 0.05)
    make_gke_project(lab)
    gcs.create_bucket(bucket_name(SWEEP, GCP_PROJECT))
    sweep = yaml.safe_load((lab / "configs" / "sweeps" / "cartpole-lr.yaml").read_text())
    (lab / "par.yaml").write_text(yaml.safe_dump({**sweep, "name": SWEEP, "parallel": 2}))
    code, _, stderr = invoke("experiment", "sweep", "-f", "par.yaml", "--no-build")
    assert code == 0, stderr

    code, stdout, stderr = invoke("experiment", "start", "-s", SWEEP)  # no flag: the sweep file's 2
    assert code == 0, stdout + stderr
    assert "9 trials in one Indexed Job, 2 at a time" in stdout
    assert in_effect(lab) == {"key": 2, "record": 2, "status": 2, "plan": 2}
    assert fake_pulumi.stacks()[SWEEP]["outputs"]["parallelism"] == 2

    code, stdout, stderr = invoke("experiment", "start", "-s", SWEEP, "--parallel", "4")  # the flag overrides it
    assert code == 0, stdout + stderr
    # plan -s shows what `start -s` would deploy now: without the flag, the sweep file's 2 again
    assert "4 at a time" in stdout and in_effect(lab) == {"key": 4, "record": 4, "status": 4, "plan": 2}

    code, stdout, stderr = invoke("experiment", "start", "-s", SWEEP)  # as locally: the flag is one start's
    assert code == 0, stdout + stderr
    assert in_effect(lab) == {"key": 2, "record": 2, "status": 2, "plan": 2}


def test_a_bad_parallel_in_the_stored_sweep_file_is_exit_2_naming_it(
    lab: Path, fake_pulumi: FakePulumi, gcs: Any
) -> None:
    make_gke_project(lab)
    assert invoke("experiment", "sweep", "-f", "cartpole-lr", "-n", SWEEP, "--no-build")[0] == 0
    stored = lab / "experiments" / SWEEP / "sweep.yaml"
    stored.write_text(stored.read_text().replace("parallel: null", "parallel: 0"))
    before = (lab / "stacks" / f"Pulumi.{SWEEP}.yaml").read_text()
    for command in (("start", "-s", SWEEP), ("plan", "-s", SWEEP)):
        code, stdout, stderr = invoke("experiment", *command)
        assert code == 2, stdout + stderr
        assert f"experiments/{SWEEP}/sweep.yaml: parallel: at least 1, got 0" in stderr and "Traceback" not in stderr
    assert fake_pulumi.verbs() == [] and not (lab / "experiments" / SWEEP / "run.json").exists()
    assert (lab / "stacks" / f"Pulumi.{SWEEP}.yaml").read_text() == before
