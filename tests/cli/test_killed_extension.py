"""An extension killed outright is read as interrupted, with its own counts, and a plain resume continues it (issue
29, rows 6 and 12): before, the previous segment's ``result.json`` stayed, so a completed run read ``paused`` at the
previous segment's counts and a pruned one stayed ``pruned`` with its old reason, which no resume continued.

Real processes: a finished tiny CartPole run (marked pruned by hand for the pruned case, as early stopping writes it),
extended with ``resume --total-timesteps``, its whole process group killed with SIGKILL past a new checkpoint."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from cli_kit import invoke, status, tiny_spec, wait_for

from tfcli.experiments.store import ExperimentDir
from tfcli.local.handle import local_of

pytestmark = pytest.mark.slow  # real trainings or trainer processes (README "Development")

SPEC = tiny_spec("grow", 300)


def checkpoint_past(results: Path, timesteps: int) -> bool:
    for state in results.glob("checkpoints/*/state.json"):
        if (state.parent / "COMPLETE").is_file() and json.loads(state.read_text())["timesteps"] > timesteps:
            return True
    return False


@pytest.mark.parametrize("ended", ["completed", "pruned"])
def test_an_extension_killed_outright_reads_interrupted_with_its_own_counts_and_resumes(lab: Path, ended: str) -> None:
    (lab / "grow.yaml").write_text(SPEC)
    code, stdout, stderr = invoke("experiment", "start", "-f", "grow.yaml", "--local")
    assert code == 0, stdout + stderr
    experiment = ExperimentDir(lab / "experiments" / "grow")
    if ended == "pruned":
        result = json.loads((experiment.results / "result.json").read_text())
        result.update(status="pruned", reason="IQM 9.0 at 300 timesteps, below the top 1/3")
        (experiment.results / "result.json").write_text(json.dumps(result))
    assert status("grow")["state"] == ended

    extend = ["--total-timesteps", "200000", *(["--include-pruned"] if ended == "pruned" else [])]
    code, stdout, stderr = invoke("experiment", "resume", "-e", "grow", *extend, "--detach")
    assert code == 0, stdout + stderr
    wait_for(lambda: checkpoint_past(experiment.results, 400), what="a checkpoint of the extension")
    supervisor = local_of(experiment.run_record()).pid
    assert supervisor
    os.killpg(supervisor, signal.SIGKILL)  # supervisor, trainer and all: nothing gets to write a result
    wait_for(lambda: status("grow")["state"] != "running", timeout=30, what="the processes' end")

    seen = status("grow")
    assert seen["state"] == "interrupted", seen
    assert int(str(seen["timesteps"])) > 400  # the extension's own counts, not the previous segment's 300
    code, stdout, stderr = invoke("experiment", "resume", "-e", "grow", "--detach")  # a plain resume continues it
    assert code == 0, stdout + stderr
    wait_for(lambda: status("grow")["state"] == "running", timeout=30, what="the resumed run")
    assert invoke("experiment", "stop", "-e", "grow")[0] == 0
