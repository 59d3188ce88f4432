"""A local sweep started again (``resume -s``, ``start -s``) without ``--parallel`` runs at the trials at a time it
last ran with, as a GKE sweep's stack keeps its ``tfcli:parallelism`` (tfcli/stackfiles/sweep.py): a user who
started it with ``--parallel 1`` to keep a core free does not find both cores taken after a pause. The queue is a
stand-in that records how it was launched; the queue's own use of ``parallel`` is tests/cli/test_sweep_ahead.py's
and test_sweep_local.py's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_kit import invoke, stand_in_supervisors, tiny_sweep, wait_for

from tfcli.experiments.record import RunRecord
from tfcli.local.sweeps import parallel_in_effect, queue_alive
from tfcli.sweeps.store import SweepDir

RECORDS_ITS_LAUNCH = """
import json, sys
with open("launches.jsonl", "a") as launches:
    launches.write(json.dumps(sys.argv[1:]) + "\\n")
"""


def queue_launches(lab: Path) -> list[list[str]]:
    """Each stand-in queue's module and arguments (``SWEEP_ROOT PARALLEL [HELD]``), in launch order."""
    launches = lab / "launches.jsonl"
    return [json.loads(line) for line in launches.read_text().splitlines()] if launches.exists() else []


def trials_at_a_time(launch: list[str]) -> int:
    module, _root, parallel, *_held = launch
    assert module == "tfcli.local.queue", launch
    return int(parallel)


def start_detached(lab: Path, *flags: str) -> str:
    """``start -s tiny --local FLAGS --detach``, once its stand-in queue has recorded its launch and exited (the next
    start or resume would be refused while it runs); what the start printed."""
    launched = len(queue_launches(lab))
    code, stdout, stderr = invoke("experiment", "start", "-s", "tiny", "--local", *flags, "--detach")
    assert code == 0, stdout + stderr
    sweep = SweepDir(lab / "experiments" / "tiny")
    wait_for(lambda: len(queue_launches(lab)) > launched and not queue_alive(sweep), 30, "the stand-in queue's end")
    return stdout


@pytest.fixture
def tiny(lab: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (lab / "tiny.yaml").write_text(tiny_sweep())
    code, _, stderr = invoke("experiment", "sweep", "-f", "tiny.yaml", "--no-build")
    assert code == 0, stderr
    stand_in_supervisors(monkeypatch, RECORDS_ITS_LAUNCH)  # and 4 cores: the default is 4 trials at a time
    return lab


def test_resume_keeps_the_parallel_the_sweep_was_started_with(tiny: Path) -> None:
    assert "1 trial(s) at a time" in start_detached(tiny, "--parallel", "1")
    _, stdout, stderr = invoke("experiment", "resume", "-s", "tiny")
    assert "1 trial(s) at a time" in stdout, stdout + stderr
    assert [trials_at_a_time(launch) for launch in queue_launches(tiny)] == [1, 1]


def test_a_new_parallel_given_at_start_is_the_one_resume_keeps(tiny: Path) -> None:
    for parallel in ("1", "3"):
        start_detached(tiny, "--parallel", parallel)
    invoke("experiment", "resume", "-s", "tiny")
    assert [trials_at_a_time(launch) for launch in queue_launches(tiny)] == [1, 3, 3]


def test_a_start_without_a_parallel_keeps_the_last_one_too(tiny: Path) -> None:
    for flags in (["--parallel", "1"], []):
        assert "1 trial(s) at a time" in start_detached(tiny, *flags)
    assert [trials_at_a_time(launch) for launch in queue_launches(tiny)] == [1, 1]


def test_the_sweep_files_parallel_is_over_the_last_start_as_on_gke(tiny: Path) -> None:
    """The rule of tfcli/stackfiles/sweep.py's ``deploy_stack``: the flag, else the file, else what is kept."""
    sweep_file = tiny / "experiments" / "tiny" / "sweep.yaml"
    start_detached(tiny, "--parallel", "1")
    sweep_file.write_text(sweep_file.read_text() + "parallel: 2\n")
    invoke("experiment", "resume", "-s", "tiny")
    assert [trials_at_a_time(launch) for launch in queue_launches(tiny)] == [1, 2]


def test_without_a_parallel_given_resume_runs_what_the_cores_fit(tiny: Path) -> None:
    start_detached(tiny)
    invoke("experiment", "resume", "-s", "tiny")
    assert [trials_at_a_time(launch) for launch in queue_launches(tiny)] == [4, 4]


def test_what_a_gke_run_kept_is_not_this_machines(tiny: Path) -> None:
    """A sweep last run on GKE recorded its pods at a time there; here the cores decide."""
    sweep = SweepDir(tiny / "experiments" / "tiny")
    sweep.write_run_record(RunRecord(backend="gke", parallel=8))
    assert parallel_in_effect(sweep) == 4
    sweep.write_run_record(RunRecord(backend="local", parallel=1))
    assert parallel_in_effect(sweep) == 1
