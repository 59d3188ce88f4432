"""Following a run on this machine until it ends (``start --wait``, the default locally).

Ctrl-C pauses it: an experiment's supervisor gets SIGTERM and the trainer checkpoints; a sweep's queue pauses its
running trials. Either can be resumed later from its checkpoints.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time

from tfcli.experiments.progress import ProgressReader
from tfcli.local.sweeps import pause_sweep, queue_alive, sweep_status
from tfcli.runs.backend import Watcher
from tfcli.runs.results import Ended, Started, exit_code
from trainer.kernel.spec.outcomes import EXIT_PAUSED

POLL_SECONDS = 0.5


def wait_a_tick(process: subprocess.Popen[bytes] | None, ticks: int = 1) -> None:
    """Wait ``ticks`` times :data:`POLL_SECONDS` or until ``process`` exits, whichever comes first: the follower
    notices the end of the run at once rather than up to a tick later (a tick adds straight to the wall time of a
    short run). None (a sweep whose queue this CLI did not start): the whole wait."""
    if process is None:
        time.sleep(ticks * POLL_SECONDS)
        return
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=ticks * POLL_SECONDS)


def launched_process(started: Started) -> subprocess.Popen[bytes] | None:
    """The process a local ``start`` launched (the supervisor or the queue; None: nothing to run)."""
    assert started.launched is None or isinstance(started.launched, subprocess.Popen), started.launched
    return started.launched


def follow_experiment(started: Started, watcher: Watcher) -> Ended:
    """Report progress until the supervisor exits; the first Ctrl-C pauses the run (checkpoint)."""
    experiment = started.run.experiment()
    process = launched_process(started)
    assert process is not None
    reader = ProgressReader(experiment.results / "progress.jsonl")
    interrupted = False
    while process.poll() is None:
        try:
            wait_a_tick(process)
            reader.read()
            watcher.progress(reader.timesteps, reader.episodes, reader.mean_return)
        except KeyboardInterrupt:
            if not interrupted:
                interrupted = True
                watcher.progress_detail("pausing: writing a checkpoint…")
                os.kill(process.pid, signal.SIGTERM)
    # progress.jsonl counts finished episodes; the run's last timesteps are in result.json.
    final = experiment.result()
    if final:
        watcher.progress(int(final.get("timesteps", 0)), int(final.get("episodes", 0)), None)
    code = process.returncode
    state = str(final.get("status") or "ended")
    return Ended(
        started.run, state, exit_code(final.get("status"), code, interrupted=interrupted), code, interrupted=interrupted
    )


def follow_sweep(started: Started, watcher: Watcher) -> Ended:
    """Report each trial's start and end until the queue exits; Ctrl-C pauses the sweep."""
    run, process = started.run, launched_process(started)
    sweep = run.sweep()
    began = time.monotonic()
    try:
        while True:
            alive = queue_alive(sweep)
            if process is not None:
                process.poll()
            watcher.trials(sweep_status(run.store, sweep))
            if not alive:
                break
            wait_a_tick(process, ticks=2)  # each tick reads every trial's files: not more often than this
    except KeyboardInterrupt:
        watcher.say(f"Pausing {sweep.name} (its running trials checkpoint)…")
        pause_sweep(run.store, sweep)
        watcher.say(f"Paused; `tfcli experiment resume -s {sweep.name}` continues it.")
        return Ended(run, "paused", EXIT_PAUSED, interrupted=True, report=False)
    code = process.wait() if process is not None else 0
    state = sweep_status(run.store, sweep).state
    return Ended(run, state, 0 if code == 0 else 1, code, seconds=time.monotonic() - began)
