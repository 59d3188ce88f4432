"""The local queue of a sweep: ``python -m tfcli.local.queue SWEEP_DIR PARALLEL [HELD]`` keeps ``PARALLEL`` trials
running until every trial has ended, each launched as an ordinary local experiment (its own supervisor, in a session
of its own, so it keeps training if the queue dies).

- A trial that completed is never run again; one that is running when the queue starts (the previous queue
  crashed) is adopted, not started twice; the others (new, paused, interrupted, failed, stopped) are launched and
  resume from their newest checkpoint.
- ``HELD`` (comma-separated trial names) are left as they ended: a pruned trial (early stopping) unless
  ``resume -s --include-pruned`` extends it, a failed one on ``resume -s`` without ``--retry-failed``.
- With early stopping the trials start in the order that fills rungs early (each combination's first seed, then
  the second seeds, ...), and a trial may end ``waiting`` at an undecided rung, its slot going to the next trial; it
  is started again, before new trials, once its rung is decided or nobody is left to decide it
  (:mod:`tfcli.local.waiting`, :mod:`trainer.rung_wait`).
- A trial's slot frees as it writes its ``result.json`` (:class:`Outcomes`): the next trial starts while the
  ended one draws its learning curve and exits, so for a moment ``PARALLEL`` + 1 processes may be alive, one of
  them finishing. Its exit is recorded (and logged) when it comes.
- The trials' trainers are forked by one warm trainer (:mod:`tfcli.local.zygote`, started here and ended with
  this process) that imported TensorFlow and TensorForce once: a trial skips those imports, and stays a process
  of its own (:mod:`tfcli.local.warm`).
- SIGTERM/SIGINT (``experiment pause -s``): no new trial starts; the running ones are paused (checkpoint) and the
  queue exits 143. Exit codes: 0 every trial completed or was pruned, 1 some failed, 143 paused.
"""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import nullcontext
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from tfcli.experiments.spec_view import SpecView
from tfcli.local.ahead import Ahead
from tfcli.local.folder_watch import FolderWatch
from tfcli.local.handle import local_of
from tfcli.local.processes import handle_stop_signals, sleep_until_one_ends
from tfcli.local.standing import OFF, WARM_VARIABLE
from tfcli.local.warm import warm_trainer
from trainer.kernel.errors import TfcliError
from trainer.kernel.spec.outcomes import EXIT_PAUSED

if TYPE_CHECKING:
    from tfcli.experiments.store import ExperimentDir
    from trainer.kernel.spec.sweep import SweepFile

POLL_SECONDS = 0.5


def _log(message: str) -> None:
    print(f"{datetime.now(UTC).isoformat(timespec='seconds')} {message}", flush=True)


def run_queue(root: Path, parallel: int, held: frozenset[str] = frozenset()) -> int:
    from tfcli.experiments.status import ENDED_FOR_GOOD
    from tfcli.experiments.store import ExperimentDir
    from tfcli.local import experiments
    from tfcli.local.sweeps import default_parallel
    from tfcli.local.waiting import Rungs, interleaved
    from tfcli.sweeps.store import SweepDir
    from trainer.rung_wait import WAIT_ENV

    sweep = SweepDir(root)
    trials = [ExperimentDir(root.parent / trial.name) for trial in sweep.trials()]
    definition = sweep.definition()
    if definition.early_stop is not None:
        os.environ[WAIT_ENV] = "1"  # its trials may wait at a rung: this queue starts them again (trainer.rung_wait)
        trials = interleaved(trials, definition.seeds)
    rungs = Rungs(trials)
    stopping = False
    spare_core = parallel < default_parallel(definition)  # a trial may get ready ahead only on a core left idle

    def stop(_signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    handle_stop_signals(stop)
    pending = [trial for trial in trials if experiments.status(trial).state != "completed" and trial.name not in held]
    done = len(trials) - len(pending) - len(held)
    _log(f"{done} of {len(trials)} trials already completed; {parallel} at a time")
    if held:
        _log(f"left as they ended: {', '.join(sorted(held))}")
    warm = warm_trainer(sweep.logs / "warm.log") if pending and _warm_worth_it(definition) else nullcontext()
    with warm, FolderWatch() as watch:  # trials forked warm: the imports paid once per sweep (tfcli.local.zygote)
        running: dict[str, tuple[ExperimentDir, subprocess.Popen[bytes] | None]] = {}
        outcomes = Outcomes(watch)
        failed = 0
        ahead = Ahead()  # the next trial, started while every slot trains; held until a slot frees

        def occupied() -> int:
            return sum(not outcomes.written(trial) and not ahead.holds(trial) for trial, _ in running.values())

        def launched(trial: ExperimentDir, env: dict[str, str] | None = None) -> bool:
            nonlocal failed
            outcomes.launching(trial)
            try:
                with trial.locked():
                    process = experiments.launch(trial, env=env)
            except TfcliError as error:
                outcomes.ended(trial)
                _log(f"{trial.name}: not started: {error.message}")
                failed += 1
                return False
            running[trial.name] = (trial, process)
            _log(f"{trial.name}: started (pid {process.pid})" + (", ahead of its turn" if env else ""))
            return True

        waiting: list[ExperimentDir] = []  # ended at an undecided rung, to start again once it is decided
        while (pending or running or waiting) and not stopping:
            ready = [trial for trial in waiting if rungs.ready(trial)] if occupied() < parallel else []
            if waiting and not (ready or running or pending):
                _log(f"nothing left to decide the rungs of {', '.join(t.name for t in waiting)}; they stay waiting")
                failed += len(waiting)
                break
            starting = ready + pending  # a promoted (or pruned) trial first, then a new one
            while starting and occupied() < parallel and not stopping:
                trial = starting.pop(0)
                (waiting if trial in waiting else pending).remove(trial)
                if ahead.holds(trial):
                    ahead.release()
                    _log(f"{trial.name}: its turn (started ahead, ready)")
                elif experiments.is_running(trial):
                    running[trial.name] = (trial, None)
                    _log(f"{trial.name}: already running (pid {local_of(trial.run_record()).pid}), adopted")
                else:
                    launched(trial)
            next_ready_ahead = spare_core and pending and not ahead.trial and occupied() >= parallel and not stopping
            if next_ready_ahead and _worth_holding(pending[0]) and not launched(pending[0], ahead.hold(pending[0])):
                ahead.release()
                pending.pop(0)
            children = [child for _, child in running.values() if child is not None]
            sleep_until_one_ends(children, POLL_SECONDS, watch.fd)  # an exit, or a file written in a trial's folder
            watch.drain()
            for name, (trial, child) in list(running.items()):
                if child is not None:
                    child.poll()  # reap it, so that its pid reads as gone
                if experiments.is_running(trial):
                    continue
                del running[name]
                outcomes.ended(trial)
                if ahead.holds(trial):  # it ended before its turn (failed to build, paused by hand)
                    ahead.release()
                    pending.remove(trial)
                state, reason = _ended(trial)
                if state == "waiting":
                    waiting.append(trial)
                else:
                    failed += state not in ENDED_FOR_GOOD
                _log(f"{name}: {state}" + (f" ({reason})" if reason else ""))
        if stopping:
            for name, (trial, _process) in running.items():
                supervisor = experiments.supervisor(trial)
                if not supervisor.alive():
                    continue
                try:
                    supervisor.end(experiments.PAUSE_TIMEOUT)
                except TfcliError:
                    continue  # it ended by itself meanwhile
                _log(f"{name}: paused")
            ahead.release()
            _log("paused")
            return EXIT_PAUSED
        _log("every trial completed" if not failed else f"done; {failed} trial(s) did not complete")
        return 0 if not failed else 1


class Outcomes:
    """Which running trials have written their outcome: a ``result.json`` other than the one there at launch (a
    resumed trial's previous one is withdrawn as its trainer starts; every run writes its own as it ends). Such a
    trial's slot is free: its process is drawing the learning curve and exiting, and the next trial starts meanwhile
    (its supervisor's start and its agent's build on the other core: issue 30). An adopted trial (no launch seen)
    holds its slot until it exits. Each launched trial's folder, and its ``results/`` once there, are watched, so
    that the queue's sleep ends as the file appears (:mod:`tfcli.local.folder_watch`)."""

    def __init__(self, watch: FolderWatch) -> None:
        self._watch = watch
        self._before: dict[str, tuple[tuple[int, int] | None, list[int | None]]] = {}

    def launching(self, trial: ExperimentDir) -> None:
        from tfcli.local.experiments import file_stamp

        self._before[trial.name] = (file_stamp(trial.result_file), [self._watch.add(trial.root)])

    def written(self, trial: ExperimentDir) -> bool:
        from tfcli.local.experiments import file_stamp

        if trial.name not in self._before:
            return False
        before, watches = self._before[trial.name]
        if len(watches) == 1 and trial.results.is_dir():
            watches.append(self._watch.add(trial.results))  # results/ is made by the trainer, after the launch
        now = file_stamp(trial.result_file)
        return now is not None and now != before

    def ended(self, trial: ExperimentDir) -> None:
        _, watches = self._before.pop(trial.name, (None, []))
        for wd in watches:
            self._watch.forget(wd)


def _warm_worth_it(definition: SweepFile) -> bool:
    """Whether any trial may run forked warm: not where warm trainers are turned off (``TFCLI_WARM_TRAINER=off``);
    a distributed trial starts its learner fresh (its env-workers are fresh processes anyway), so a sweep of only
    distributed trials starts no zygote."""
    if os.environ.get(WARM_VARIABLE) == OFF:
        return False
    base = definition.base if isinstance(definition.base, dict) else {}
    return not SpecView(base).distributed or "run_mode" in definition.axes


def _worth_holding(trial: ExperimentDir) -> bool:
    """Whether to start ``trial`` ahead of its turn (where the running trials leave a core idle: ``--parallel``
    below what the cores fit; at ``--parallel 2`` on 2 cores it made a sweep 11% slower, bench/README.md): not one
    that runs already (the next start adopts it), nor a distributed one (its env-workers' start-up would take the
    cores of the trial that trains)."""
    from tfcli.local import experiments

    return not experiments.is_running(trial) and not trial.spec_view().distributed


def _ended(trial: ExperimentDir) -> tuple[str, str]:
    """How a trial that stopped running ended, and why when pruned; a trial whose folder can no longer be read (its
    spec deleted or damaged by hand) is one failed trial in the log, not the end of the queue."""
    from tfcli.local import experiments

    try:
        status = experiments.status(trial)
    except (TfcliError, OSError) as error:
        return "failed", f"its folder cannot be read: {getattr(error, 'message', error)}"
    return status.state, status.detail if status.state in ("pruned", "waiting") else ""


def main() -> None:
    if len(sys.argv) not in (3, 4):
        print("usage: python -m tfcli.local.queue SWEEP_DIR PARALLEL [HELD]", file=sys.stderr)
        raise SystemExit(2)
    held = frozenset(filter(None, sys.argv[3].split(","))) if len(sys.argv) == 4 else frozenset()
    raise SystemExit(run_queue(Path(sys.argv[1]), int(sys.argv[2]), held))


if __name__ == "__main__":
    main()
