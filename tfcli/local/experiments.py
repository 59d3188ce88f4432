"""An experiment on this machine: its supervisor process (:mod:`tfcli.local.supervisor`), its state, its log.

``launch`` starts the supervisor and records its pid in ``run.json``; pause and stop signal it (SIGTERM: the trainer
checkpoints and exits); a later launch starts it again and the trainer continues from its newest checkpoint.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from tfcli.experiments.progress import ProgressReader
from tfcli.experiments.status import Status, reported_state, status_from
from tfcli.experiments.store import ExperimentDir
from tfcli.local.ahead import clear_stale_hold, is_held
from tfcli.local.handle import local_of
from tfcli.local.log_cap import HEAD
from tfcli.local.processes import RecordedProcess
from trainer.kernel.errors import TfcliError

SUPERVISOR_MODULE = "tfcli.local.supervisor"
PAUSE_TIMEOUT = 120.0


def supervisor(experiment: ExperimentDir) -> RecordedProcess:
    return RecordedProcess(experiment, SUPERVISOR_MODULE, experiment.results)


def is_running(experiment: ExperimentDir) -> bool:
    """Its supervisor runs, or a trainer still writes its results (one whose supervisor was killed: the lock the
    trainer holds says so, ``trainer/output_lock.py``)."""
    return supervisor(experiment).alive() or trainer_pid(experiment) is not None


def trainer_pid(experiment: ExperimentDir) -> int | None:
    """The pid of the trainer writing the experiment's results now (0: not known yet), else None."""
    from trainer.output_lock import holder

    return holder(experiment.results)


def launch(
    experiment: ExperimentDir, *, restart: bool = False, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """Start the experiment's supervisor (``env``: variables added for it and its trainer); call with the experiment
    locked."""
    if is_running(experiment):
        raise TfcliError(
            f"experiment '{experiment.name}' is already running (pid {local_of(experiment.run_record()).pid})",
            hint=f"follow it with `tfcli experiment logs -e {experiment.name} -f`, or pause it first",
        )
    if restart:
        for folder in (experiment.results, experiment.logs):
            shutil.rmtree(folder, ignore_errors=True)
    clear_stale_hold(experiment, env)
    return supervisor(experiment).launch([str(experiment.root)], experiment.logs / "trainer.log", env=env)


def pause(experiment: ExperimentDir) -> bool:
    """Checkpoint and stop it; an error when it does not stop within :data:`PAUSE_TIMEOUT`. True when the trainer
    wrote a new ``result.json`` saying paused (a checkpoint saved); False when it ended before it could (paused
    before training began): what is reported is what happened."""
    before = file_stamp(experiment.result_file)
    process = supervisor(experiment)
    if not process.wait_exit(process.request_pause(), PAUSE_TIMEOUT):
        raise TfcliError(
            f"experiment '{experiment.name}' did not pause within {PAUSE_TIMEOUT:.0f} s",
            hint="`tfcli experiment stop` ends it for good",
        )
    return file_stamp(experiment.result_file) != before and experiment.result().get("status") == "paused"


def file_stamp(path: Path) -> tuple[int, int] | None:
    """A file's modification time and size: whether it was written again (a pause here, a trial's outcome in the
    sweep's queue); None when there is none."""
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size


def stop(experiment: ExperimentDir) -> None:
    """End it for good: checkpoint (killed when it does not stop in time) and mark it stopped."""
    process = supervisor(experiment)
    process.end(PAUSE_TIMEOUT)
    process.mark_stopped()


def status(experiment: ExperimentDir) -> Status:
    """The status of an experiment run (or not yet run) on this machine."""
    spec = experiment.spec_view()  # the resolved spec tfcli wrote; listing must not pay for validating it
    record = experiment.run_record()
    result = experiment.result()
    reader = ProgressReader(experiment.results / "progress.jsonl")
    reader.read()
    supervised = supervisor(experiment).alive()
    orphan = None if supervised else trainer_pid(experiment)  # a trainer whose supervisor was killed
    alive = supervised or orphan is not None
    if alive:
        state = "pausing" if local_of(record).pause_requested else "ready" if is_held(experiment) else "running"
    elif record.stopped:
        state = "stopped"
    elif result:
        state = reported_state(spec, result)
    elif record.started:
        state = "interrupted"  # the process is gone and wrote no result: killed, or the machine restarted
    else:
        state = "new"
    return status_from(
        experiment.name,
        spec,
        backend=record.backend or "local",
        state=state,
        result=result,
        reader=reader,
        final=bool(result) and not alive,
        pid=local_of(record).pid if supervised else orphan,
        detail=_detail(state, result, supervised=supervised),
    )


def _detail(state: str, result: dict[str, object], *, supervised: bool) -> str:
    if state == "failed":
        return str(result.get("error", ""))
    if state in ("running", "pausing") and not supervised:
        return "its supervisor is gone; the trainer checkpoints and pauses"
    return ""


def write_log(
    experiment: ExperimentDir, *, follow: bool, worker: int | None, tail: int | None, write: Callable[[str], None]
) -> None:
    """Print a log file (its last ``tail`` lines); with ``follow``, keep printing what is appended until it ends."""
    name = "trainer.log" if worker is None else f"env-worker-{worker}.log"
    path = experiment.logs / name
    if not path.exists():
        raise TfcliError(f"experiment '{experiment.name}' has no {name} yet", hint="start it first")
    with open(path, errors="replace") as handle:
        if tail is not None:
            lines = handle.readlines()
            write("".join(lines[len(lines) - tail :] if tail else []))
        while True:
            chunk = handle.read()
            if chunk:
                write(chunk)
            elif os.fstat(handle.fileno()).st_size < handle.tell():  # cut back to its head (tfcli/local/log_cap.py)
                handle.seek(min(HEAD, os.fstat(handle.fileno()).st_size))
            elif not follow or not is_running(experiment):
                break
            else:
                time.sleep(0.3)
