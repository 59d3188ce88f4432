"""What is reported is what happened (issue 21): a pause right after a start, and outputs checked before the work.

On the main before the fix, ``pause`` 0.2 s after ``start --detach`` printed "Paused ... (checkpoint saved)" though
the supervisor died of the SIGTERM it had no handler for yet, ``play --video /proc/x.gif`` played and then failed
with imageio tracebacks, and ``plot -o`` made missing folders where ``play`` refused them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_kit import invoke
from tfcli.experiments.store import ExperimentDir
from tfcli.local.processes import spawn

pytestmark = pytest.mark.slow  # real trainings or trainer processes (README "Development")

TINY = (
    "name: {name}\nenvironment: cartpole\nagent: {{agent: ppo, batch_size: 2, network: [{{type: dense, size: 8}}]}}\n"
    "total_timesteps: {budget}\n"
)


def new_experiment(lab: Path, name: str, budget: int = 300) -> ExperimentDir:
    (lab / f"{name}.yaml").write_text(TINY.format(name=name, budget=budget))
    code, _, stderr = invoke("experiment", "new", "-f", f"{name}.yaml")
    assert code == 0, stderr
    return ExperimentDir(lab / "experiments" / name)


def test_a_pause_sent_while_the_supervisor_is_still_starting_is_handled_not_fatal(lab: Path) -> None:
    experiment = new_experiment(lab, "early")
    process = spawn("tfcli.local.supervisor", [str(experiment.root)], experiment.logs / "trainer.log")
    os.kill(process.pid, signal.SIGTERM)  # before the interpreter has even started
    assert process.wait(timeout=60) == 143  # paused by its own handler, not killed by the signal (-15)
    assert not (experiment.results / "result.json").exists()  # it never began training


# The pause lands in the window after the supervisor's last look at it and before it has a trainer to forward it to
# (a warm trainer asked for, or a fresh one being started): on a busy machine, where a full test run found
# `experiment stop` 0.2 s after `start --detach` waiting its whole 120 s for a trainer that never heard of the stop.
STOP_WHILE_STARTING_PROBE = """
import os, signal, sys, time
from pathlib import Path
import tfcli.local.supervisor as supervisor

def start_warm(arguments, env, name):
    os.kill(os.getpid(), signal.SIGTERM)  # the pause arrives now: no trainer yet
    return None  # no warm trainer: a fresh process starts

supervisor.start_warm = start_warm
supervisor.learner_command = lambda *_: [sys.executable, "-c", "import time; time.sleep(60)"]  # a trainer, slowly
started = time.monotonic()
code = supervisor.supervise(Path(sys.argv[1]))
print("CODE", code, "SECONDS", round(time.monotonic() - started))
"""


def test_a_pause_sent_while_the_trainer_is_being_started_reaches_it(lab: Path) -> None:
    experiment = new_experiment(lab, "starting")
    probe = [sys.executable, "-c", STOP_WHILE_STARTING_PROBE, str(experiment.root)]
    result = subprocess.run(probe, capture_output=True, text=True, timeout=50, check=True)
    code, seconds = result.stdout.split()[1::2]
    assert int(code) == -signal.SIGTERM, result.stdout  # the trainer got the pause as it started, not 60 s later
    assert int(seconds) < 30, result.stdout


SLOW_TRAINER_START = """\
import pathlib, time
if b"-m\\x00trainer\\x00" in pathlib.Path("/proc/self/cmdline").read_bytes():
    time.sleep(30)  # a trainer still starting when the pause comes, however busy the machine
"""


def test_pause_says_checkpoint_saved_only_when_the_trainer_wrote_paused(
    lab: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    experiment = new_experiment(lab, "quick")
    experiment.results.mkdir(parents=True)
    earlier = {"status": "paused", "timesteps": 123, "episodes": 4, "reason": "SIGTERM"}  # an earlier segment's
    (experiment.results / "result.json").write_text(json.dumps(earlier))
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(SLOW_TRAINER_START)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))  # "at once" by construction, not by a race
    code, stdout, stderr = invoke("experiment", "start", "-e", "quick", "--local", "--detach")
    assert code == 0, stderr
    code, stdout, stderr = invoke("experiment", "pause", "-e", "quick")  # the trainer has not begun
    assert code == 0, stderr
    assert "checkpoint saved" not in stdout
    assert "Paused quick before it saved anything" in stdout
    assert json.loads((experiment.results / "result.json").read_text()) == earlier  # nothing claimed, nothing lost


def test_pause_of_a_training_run_reports_its_checkpoint(lab: Path) -> None:
    from tests.cli_kit import wait_for

    experiment = new_experiment(lab, "later", budget=1_000_000)
    assert invoke("experiment", "start", "-e", "later", "--local", "--detach")[0] == 0
    progress = experiment.results / "progress.jsonl"
    wait_for(lambda: progress.exists() and progress.stat().st_size > 0, what="the first episode")
    code, stdout, stderr = invoke("experiment", "pause", "-e", "later")
    assert code == 0, stderr
    result = json.loads((experiment.results / "result.json").read_text())
    assert result["status"] == "paused" and result["timesteps"] > 0
    assert f"Paused later at {result['timesteps']:,} timesteps (checkpoint saved)." in stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("play", "-e", "nope", "--video", "/proc/x.gif"), "--video: /proc/x.gif: cannot write in /proc"),
        (("play", "-e", "nope", "--video", "missing/x.gif"), "--video: missing/x.gif: the folder missing does not"),
        (("play", "-e", "nope", "--video", "here.gif"), "--video: here.gif: is a folder"),
        (("plot", "-e", "nope", "-o", "/proc/x.png"), "-o/--output: /proc/x.png: cannot write in /proc"),
        (("plot", "-e", "nope", "-o", "missing/x.png"), "-o/--output: missing/x.png: the folder missing does not"),
        (("plot", "-e", "nope", "-o", "x.jpg"), "-o/--output: x.jpg: write a .png file"),
    ],
)
def test_outputs_are_checked_before_any_work_and_alike(lab: Path, args: tuple[str, ...], needle: str) -> None:
    (lab / "here.gif").mkdir()
    code, _, stderr = invoke("experiment", *args)
    assert code == 2 and needle in stderr, stderr
    assert "no experiment named" not in stderr  # refused before the experiment was even looked up
    assert not (lab / "missing").exists()  # neither command makes the folder
    assert not [p for p in lab.iterdir() if p.name.endswith(".probe")]
