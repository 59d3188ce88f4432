"""A sweep on this machine: the queue process (:mod:`tfcli.local.queue`), its state, pause and stop.

``start`` launches the queue in a session of its own and records its pid in ``experiments/<sweep>/run.json``, as an
experiment's supervisor is recorded; every trial stays an ordinary local experiment that ``status``, ``logs``,
``pause``, ``resume`` and ``stop`` reach on its own too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections import Counter
from typing import TYPE_CHECKING, Any

from tfcli.experiments.progress import read_all
from tfcli.experiments.spec_view import SpecView
from tfcli.experiments.status import ENDED_FOR_GOOD
from tfcli.experiments.store import ExperimentDir, ExperimentStore
from tfcli.local import experiments as local_experiments
from tfcli.local.handle import LocalHandle, local_of
from tfcli.local.processes import RecordedProcess
from tfcli.sweeps.status import SweepStatus
from tfcli.sweeps.store import SweepDir, trial_dirs
from trainer.kernel.errors import TfcliError
from trainer.kernel.spec.documents import display_path
from trainer.kernel.spec.parallel import resolved_parallel

if TYPE_CHECKING:  # numpy: loaded where a sweep's numbers are computed, not for every `list`
    from tfcli.sweeps.aggregate import Run
    from trainer.kernel.spec.sweep import SweepFile, Trial  # the sweep file's models (pydantic): likewise

QUEUE_MODULE = "tfcli.local.queue"
STOP_TIMEOUT = 180.0


def cores_per_trial(spec: dict[str, Any]) -> int:
    """Cores one local trial keeps busy: its process (environments of a multi-threaded run step inside it), plus one
    per environment worker process in distributed mode."""
    view = SpecView(spec)
    return 1 + view.num_workers if view.distributed else 1


def parallel_in_effect(sweep: SweepDir, flag: int | None = None) -> int:
    """Trials at a time here: ``--parallel``, else the sweep file's ``parallel`` (the one rule of
    :func:`trainer.kernel.spec.parallel.resolved_parallel`, as on GKE), else the value in effect when it last ran
    here (``run.json``'s ``parallel``, kept as a GKE sweep's stack keeps ``tfcli:parallelism``: a ``start -s`` or
    ``resume -s`` after ``--parallel 1`` does not take the core a user left free), else what the cores fit."""
    definition = sweep.definition()
    chosen = resolved_parallel(flag, definition.parallel, file=display_path(sweep.sweep_file))
    record = sweep.run_record()
    last = record.parallel if record.backend == LocalHandle.KEY else None
    return chosen or last or default_parallel(definition)


def default_parallel(sweep: SweepFile, cores: int | None = None) -> int:
    """Trials at a time when neither the flag nor the sweep file says: what this machine's cores fit for the
    trials' run mode (at least one)."""
    cores = cores or os.cpu_count() or 1
    assert isinstance(sweep.base, dict)
    per_trial = cores_per_trial({**sweep.base, **widest(sweep)})
    return max(1, cores // per_trial)


def widest(sweep: SweepFile) -> dict[str, Any]:
    """Swept run modes and worker counts count at their largest."""
    wide: dict[str, Any] = {}
    if "run_mode" in sweep.axes and "distributed" in sweep.axes["run_mode"]:
        wide["run_mode"] = "distributed"
    if "num_workers" in sweep.axes:
        wide["num_workers"] = max(int(v) for v in sweep.axes["num_workers"])
    return wide


def queue(sweep: SweepDir) -> RecordedProcess:
    return RecordedProcess(sweep, QUEUE_MODULE)


def queue_alive(sweep: SweepDir) -> bool:
    """Whether the recorded queue process still runs (and is ours: pids get reused)."""
    return queue(sweep).alive()


def sweep_status(store: ExperimentStore, sweep: SweepDir) -> SweepStatus:
    record = sweep.run_record()
    trials = [(trial, local_experiments.status(experiment)) for trial, experiment in trial_dirs(store, sweep)]
    counts = dict(Counter(status.state for _, status in trials))
    alive = queue_alive(sweep)
    if alive:
        state = "pausing" if local_of(record).pause_requested else "running"
    elif sum(counts.get(state, 0) for state in ENDED_FOR_GOOD) == len(trials):
        state = "completed"
    elif record.stopped:
        state = "stopped"
    elif local_of(record).pause_requested:
        state = "paused"
    elif any(status.state in ("running", "pausing") for _, status in trials):
        state = "interrupted"  # the queue died; its trials go on, and `start -s` adopts them
    elif counts.get("failed"):
        state = "failed"
    elif record.started:
        state = "interrupted"
    else:
        state = "new"
    return SweepStatus(sweep.name, state, record.parallel, counts, trials, local_of(record).pid if alive else None)


def _clear(experiment: ExperimentDir) -> None:
    """A trial's results, logs and run record, for ``--restart``."""
    shutil.rmtree(experiment.results, ignore_errors=True)
    shutil.rmtree(experiment.logs, ignore_errors=True)
    experiment.run_file.unlink(missing_ok=True)


def start_sweep(
    store: ExperimentStore,
    sweep: SweepDir,
    *,
    parallel: int | None,
    restart: bool = False,
    held: frozenset[str] | None = None,
) -> tuple[subprocess.Popen[bytes] | None, int]:
    """Launch the queue; returns it (None when every trial has already completed, or is ``held``, and not
    ``restart``) and the trials at a time. Call with the sweep locked. ``held`` None (``start -s``): the pruned
    trials are held, so that only ``resume -s --include-pruned`` trains them on."""
    chosen = parallel_in_effect(sweep, parallel)
    if queue_alive(sweep):
        raise TfcliError(
            f"sweep '{sweep.name}' is already running (pid {local_of(sweep.run_record()).pid})",
            hint=f"`tfcli experiment status -s {sweep.name}` shows its trials",
        )
    trials = [experiment for _, experiment in trial_dirs(store, sweep)]
    if restart:
        for experiment in trials:
            if local_experiments.is_running(experiment):
                raise TfcliError(f"trial '{experiment.name}' is running; pause or stop the sweep first")
        for experiment in trials:
            _clear(experiment)
    if held is None:
        held = frozenset(e.name for e in trials if not restart and local_experiments.status(e).state == "pruned")
    if not restart and all(e.name in held or local_experiments.status(e).state == "completed" for e in trials):
        return None, chosen
    arguments = [str(sweep.root), str(chosen), *([",".join(sorted(held))] if held else [])]
    process = queue(sweep).launch(arguments, sweep.logs / "queue.log", parallel=chosen)
    return process, chosen


def pause_sweep(store: ExperimentStore, sweep: SweepDir, *, timeout: float = STOP_TIMEOUT) -> SweepStatus:
    """Stop launching trials, checkpoint and stop the running ones; every trial resumes later."""
    with sweep.locked():
        process = queue(sweep)
        if not process.wait_exit(process.request_pause(), timeout):
            raise TfcliError(f"sweep '{sweep.name}' did not pause within {timeout:.0f} s")
    return sweep_status(store, sweep)


def stop_sweep(store: ExperimentStore, sweep: SweepDir) -> SweepStatus:
    """End the sweep for good: pause it if it runs, end any trial still running, mark everything stopped."""
    if queue_alive(sweep):
        pause_sweep(store, sweep)
    with sweep.locked():
        for _, experiment in trial_dirs(store, sweep):
            with experiment.locked():
                process = local_experiments.supervisor(experiment)
                process.end(local_experiments.PAUSE_TIMEOUT)
                if experiment.run_record().started and local_experiments.status(experiment).state not in ENDED_FOR_GOOD:
                    process.mark_stopped()
        queue(sweep).mark_stopped()
    return sweep_status(store, sweep)


def trial_numbers(store: ExperimentStore, trial: Trial) -> Run:
    """A trial's numbers from its results folder on this machine."""
    from tfcli.sweeps.aggregate import run_of

    experiment = store.dir(trial.name)
    if not experiment.exists():
        return run_of(trial, [], "new", {})
    records = read_all(experiment.results / "progress.jsonl")
    return run_of(trial, records, local_experiments.status(experiment).state, experiment.result())
