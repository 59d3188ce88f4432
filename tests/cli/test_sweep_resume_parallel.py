"""``resume -s`` runs a local sweep at the trials at a time it last ran with, as a GKE sweep's stack keeps its
``tfcli:parallelism`` (tfcli/stackfiles/sweep.py): a user who started it with ``--parallel 1`` to keep a core free
does not find both cores taken after a pause. The queue is a stand-in that records how it was launched; the
queue's own use of ``parallel`` is tests/cli/test_sweep_ahead.py's and test_sweep_local.py's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_kit import invoke, stand_in_supervisors, tiny_sweep

RECORDS_ITS_LAUNCH = """
import json, sys
with open("launches.jsonl", "a") as launches:
    launches.write(json.dumps(sys.argv[1:]) + "\\n")
"""


def queue_launches(lab: Path) -> list[list[str]]:
    """Each stand-in queue's module and arguments (``SWEEP_ROOT PARALLEL [HELD]``), in launch order."""
    return [json.loads(line) for line in (lab / "launches.jsonl").read_text().splitlines()]


def trials_at_a_time(launch: list[str]) -> int:
    module, _root, parallel, *_held = launch
    assert module == "tfcli.local.queue", launch
    return int(parallel)


@pytest.fixture
def tiny(lab: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (lab / "tiny.yaml").write_text(tiny_sweep())
    code, _, stderr = invoke("experiment", "sweep", "-f", "tiny.yaml", "--no-build")
    assert code == 0, stderr
    stand_in_supervisors(monkeypatch, RECORDS_ITS_LAUNCH)  # and 4 cores: the default is 4 trials at a time
    return lab


def test_resume_keeps_the_parallel_the_sweep_was_started_with(tiny: Path) -> None:
    code, stdout, stderr = invoke("experiment", "start", "-s", "tiny", "--local", "--parallel", "1", "--detach")
    assert code == 0, stderr
    assert "1 trial(s) at a time" in stdout
    code, stdout, stderr = invoke("experiment", "resume", "-s", "tiny")
    assert "1 trial(s) at a time" in stdout, stdout + stderr
    assert [trials_at_a_time(launch) for launch in queue_launches(tiny)] == [1, 1]


def test_a_new_parallel_given_at_start_is_the_one_resume_keeps(tiny: Path) -> None:
    for parallel in ("1", "3"):
        code, _, stderr = invoke("experiment", "start", "-s", "tiny", "--local", "--parallel", parallel, "--detach")
        assert code == 0, stderr
    invoke("experiment", "resume", "-s", "tiny")
    assert [trials_at_a_time(launch) for launch in queue_launches(tiny)] == [1, 3, 3]


def test_without_a_parallel_given_resume_runs_what_the_cores_fit(tiny: Path) -> None:
    code, _, stderr = invoke("experiment", "start", "-s", "tiny", "--local", "--detach")
    assert code == 0, stderr
    invoke("experiment", "resume", "-s", "tiny")
    assert [trials_at_a_time(launch) for launch in queue_launches(tiny)] == [4, 4]
