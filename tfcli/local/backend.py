"""Starting, pausing and stopping experiments as processes on this machine.

``start`` launches the supervisor (:mod:`tfcli.local.supervisor`) in a session of its own and records its pid
in ``run.json``; pause and stop signal it (SIGTERM: the trainer checkpoints and exits), resume starts it again
and the trainer continues from its newest checkpoint.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from tfcli.errors import TfcliError
from tfcli.experiments.status import SUPERVISOR_MODULE, local_process_alive
from tfcli.experiments.store import ExperimentDir

PAUSE_TIMEOUT = 120.0


def is_running(experiment: ExperimentDir) -> bool:
    return local_process_alive(experiment.run_record(), experiment)


def launch(experiment: ExperimentDir, *, restart: bool = False) -> subprocess.Popen[bytes]:
    """Start the experiment's supervisor; call with the experiment locked."""
    if is_running(experiment):
        pid = experiment.run_record().get("pid")
        raise TfcliError(
            f"experiment '{experiment.name}' is already running (pid {pid})",
            hint=f"follow it with `tfcli experiment logs -e {experiment.name} -f`, or pause it first",
        )
    if restart:
        for folder in (experiment.results, experiment.logs):
            shutil.rmtree(folder, ignore_errors=True)
    process = spawn(SUPERVISOR_MODULE, [str(experiment.root)], experiment.logs / "trainer.log")
    experiment.write_run_record({"backend": "local", "pid": process.pid, "started_at": now()})
    return process


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def spawn(module: str, arguments: list[str], log_file: Path) -> subprocess.Popen[bytes]:
    """``python -m module ARGUMENTS`` in a session of its own (no CLI process need stay alive, and signals to the
    CLI's terminal do not reach it), its output appended to ``log_file``."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    log = open(log_file, "ab")  # noqa: SIM115 - handed to the child
    try:
        return subprocess.Popen(
            [sys.executable, "-m", module, *arguments],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
        )
    finally:
        log.close()


def signal_pause(experiment: ExperimentDir) -> int:
    """Ask a running experiment to checkpoint and stop (SIGTERM); returns the supervisor's pid."""
    record = experiment.run_record()
    if not local_process_alive(record, experiment):
        raise TfcliError(f"experiment '{experiment.name}' is not running")
    pid = int(record["pid"])
    experiment.write_run_record({**record, "pause_requested": True})
    os.kill(pid, signal.SIGTERM)
    return pid


def wait_exit(experiment: ExperimentDir, pid: int, timeout: float = PAUSE_TIMEOUT) -> bool:
    """Wait until the supervisor ``pid`` has exited; False on timeout."""
    deadline = time.monotonic() + timeout
    record = {"pid": pid}
    while time.monotonic() < deadline:
        if not local_process_alive(record, experiment):
            return True
        time.sleep(0.2)
    return False


def kill(experiment: ExperimentDir, pid: int) -> None:
    """Last resort when a pause times out: kill the whole process group (the run loses what is unsaved)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def mark_stopped(experiment: ExperimentDir) -> None:
    record = experiment.run_record()
    record.pop("pause_requested", None)
    experiment.write_run_record({**record, "stopped": True})
