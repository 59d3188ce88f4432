"""A sweep's trials at a time on this machine follow the one rule of trainer/kernel/spec/parallel.py, as on GKE
(tests/gke/test_sweep_parallel_gke.py): the sweep file's ``parallel`` is the default, ``start -s --parallel N``
overrides it for that start, else what the cores fit. The value in effect is what the queue runs, what the sweep's
``run.json`` records and what ``status -s`` and ``plan -s --local`` show."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from cli_kit import invoke, sweep_status, tiny_sweep, wait_for

from tfcli.local.sweeps import default_parallel
from trainer.kernel.spec.sweep import read_sweep_file

SWEEP = "tiny"


def made(lab: Path, parallel: int | None) -> int:
    """The tiny sweep, its file saying ``parallel`` (None: nothing); returns what the cores would fit."""
    text = tiny_sweep(SWEEP) + (f"parallel: {parallel}\n" if parallel is not None else "")
    (lab / "tiny.yaml").write_text(text)
    code, _, stderr = invoke("experiment", "sweep", "-f", "tiny.yaml", "--no-build")
    assert code == 0, stderr
    stored = yaml.safe_load((lab / "experiments" / SWEEP / "sweep.yaml").read_text())
    return default_parallel(read_sweep_file(stored, "sweep.yaml"))


def planned(*flags: str) -> int:
    code, stdout, stderr = invoke("experiment", "plan", "-s", SWEEP, "--local", "--json", *flags)
    assert code == 0, stderr
    return int(json.loads(stdout)["parallel"])


def test_plan_s_local_shows_the_sweep_files_value_else_what_the_cores_fit(lab: Path) -> None:
    cores = made(lab, None)
    assert planned() == cores
    stored = lab / "experiments" / SWEEP / "sweep.yaml"
    stored.write_text(stored.read_text().replace("parallel: null", f"parallel: {cores + 3}"))
    assert planned() == cores + 3


def test_a_bad_parallel_in_the_stored_sweep_file_is_exit_2_naming_it(lab: Path) -> None:
    made(lab, None)
    stored = lab / "experiments" / SWEEP / "sweep.yaml"
    stored.write_text(stored.read_text().replace("parallel: null", "parallel: 0"))
    for command in (("start", "-s", SWEEP, "--local"), ("plan", "-s", SWEEP, "--local")):
        code, stdout, stderr = invoke("experiment", *command)
        assert code == 2, stdout + stderr
        assert f"experiments/{SWEEP}/sweep.yaml: parallel: at least 1, got 0" in stderr and "Traceback" not in stderr
    assert not (lab / "experiments" / SWEEP / "run.json").exists()


@pytest.mark.slow  # starts the queue and its trainers
def test_the_queue_runs_the_sweep_files_value_and_the_flag_overrides_it(lab: Path) -> None:
    cores = made(lab, 3)
    assert cores != 3  # what the file says, not what the cores fit (this machine: 2 cores)
    queue_log = lab / "experiments" / SWEEP / "logs" / "queue.log"
    for flags, expected in (((), 3), (("--parallel", "1"), 1)):
        code, stdout, stderr = invoke("experiment", "start", "-s", SWEEP, "--local", "--detach", *flags)
        assert code == 0, stdout + stderr
        assert f"{expected} trial(s) at a time" in stdout
        record = json.loads((lab / "experiments" / SWEEP / "run.json").read_text())
        assert record["parallel"] == expected and sweep_status(SWEEP)["parallel"] == expected
        wait_for(lambda: f"; {expected} at a time" in (queue_log.read_text() if queue_log.exists() else ""),  # noqa: B023
                 what="the queue to say how many trials it runs at once")  # fmt: skip
        code, stdout, stderr = invoke("experiment", "pause", "-s", SWEEP)
        assert code == 0, stdout + stderr
        queue_log.unlink()
