"""The local backend: runs train as processes on this machine, their results written in place.

An experiment is one supervisor process (:mod:`tfcli.local.experiments`); a sweep is one queue process that starts
its trials as ordinary local experiments (:mod:`tfcli.local.sweeps`). Both are a :class:`RecordedProcess`, so
starting, pausing and stopping them is one code path; only what they launch differs.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tfcli.experiments.spec_view import SpecView
from tfcli.local import experiments, sweeps
from tfcli.local.follow import follow_experiment, follow_sweep
from tfcli.local.handle import local_of
from tfcli.runs.backend import Watcher
from tfcli.runs.registry import held_elsewhere, title
from tfcli.runs.results import Ended, LogRequest, Paused, RunStatus, Started, StartOptions, Stopped
from tfcli.runs.resuming import ResumePlan, check_experiment_resumable, released_members
from tfcli.runs.run import Run
from trainer.ended import release
from trainer.kernel.errors import TfcliError

if TYPE_CHECKING:  # numpy: loaded where a sweep's numbers are computed, not for every `list`
    from tfcli.sweeps.aggregate import Run as TrialNumbers

RESUMABLE = ("paused", "stopped", "interrupted", "failed")


@dataclass(frozen=True)
class LocalPlan:
    """What ``start --local`` would run here: the processes of one experiment (its supervisor, the trainer and, when
    distributed, one env-worker each), the cores they keep busy, and a sweep's trials at a time on this machine."""

    name: str
    run_mode: str
    env_workers: int
    cores: int
    parallel: int | None  # a sweep's trials at a time (None: an experiment)
    machine_cores: int

    @property
    def processes(self) -> int:
        return 2 + self.env_workers  # the supervisor, the trainer, its env-workers


class LocalBackend:
    """Processes on this machine."""

    name = "local"
    waits_by_default = True  # a run here is followed until it ends unless told --detach

    def start(self, run: Run, options: StartOptions, *, held: frozenset[str] | None = None) -> Started:
        """``held``: trials of a sweep its queue leaves as they ended (``resume -s``; None: the pruned ones).
        ``options.shared_cluster`` never reaches this backend: ``--cluster`` is refused for a backend that does not
        run on shared clusters before a backend is asked (:func:`tfcli.backends.refuse_cluster`)."""
        for member in run.members():
            if held_elsewhere(record := member.run_record(), self.name):
                what = "trial" if run.kind == "sweep" else "experiment"
                raise TfcliError(
                    f"{what} '{member.name}' is deployed on {title(str(record.backend))}; it cannot run here at the "
                    "same time",
                    hint=f"`tfcli experiment stop {run.flag}` downloads its results (checkpoints included) and "
                    "destroys its stack; `--local` then continues it on this machine",
                )
        with run.locked():
            if run.kind == "sweep":
                process, parallel = sweeps.start_sweep(
                    run.store, run.sweep(), parallel=options.parallel, restart=options.restart, held=held
                )
            else:
                experiment = run.experiment()
                done = not options.restart and experiments.status(experiment).state == "completed"
                process = None if done else experiments.launch(experiment, restart=options.restart)
                parallel = None
        return self._started(run, process, parallel)

    def _started(self, run: Run, process: subprocess.Popen[bytes] | None, parallel: int | None) -> Started:
        name, status = run.name, f"`tfcli experiment status {run.flag}`"
        if process is None:
            done = f"{name} has already completed (`--restart` starts it over)."
            if run.kind == "sweep":
                done = f"Every trial of {name} has already completed (`--restart` starts the sweep over)."
            return Started(run, self.name, nothing_to_run=True, announce=[done])
        if run.kind == "sweep":
            announce = [f"Started sweep {name}: {parallel} trial(s) at a time (queue pid {process.pid})"]
            hint = f"Watch it with {status}; `tfcli experiment list -s {name}` compares."
        else:
            announce = []
            hint = (
                f"Started {name} in the background (pid {process.pid}). "
                f"Watch it with `tfcli experiment logs -e {name} -f` or {status}."
            )
        return Started(run, self.name, launched=process, parallel=parallel, announce=announce, detached_hint=hint)

    def check_resumable(self, run: Run, plan: ResumePlan | None = None) -> None:
        """An experiment resumes when paused, stopped, interrupted or failed, or completed (pruned) when its budget
        is raised; a sweep resumes its unfinished trials whatever its state."""
        if run.kind == "sweep" and sweeps.queue_alive(run.sweep()):
            raise TfcliError(
                f"sweep '{run.name}' is already running (pid {local_of(run.sweep().run_record()).pid})",
                hint=f"pause it first (`tfcli experiment pause -s {run.name}`), then resume it",
            )
        if run.kind == "experiment":
            state = plan.state if plan is not None and plan.state is not None else None
            state = state or experiments.status(run.experiment()).state
            check_experiment_resumable(run, state, RESUMABLE, plan)

    def resume(self, run: Run, plan: ResumePlan | None = None) -> Started:
        plan = plan or ResumePlan()  # checked by check_resumable before (Backends.resume: one pass)
        held = frozenset(trial.name for trial in run.trials() if trial.index in plan.held)
        for member in released_members(run, plan):  # before the queue starts them (trainer/ended.py)
            release(member.results)
        return self.start(run, StartOptions(), held=held)

    def pause(self, run: Run) -> Paused:
        if run.kind == "sweep":
            status = sweeps.pause_sweep(run.store, run.sweep())
            return Paused(run, status.state, completed=status.completed, trials=len(status.trials))
        experiment = run.experiment()
        with run.locked():
            saved = experiments.pause(experiment)
        if not saved:
            return Paused(run, "ended")
        return Paused(run, "paused", timesteps=int(experiment.result().get("timesteps", 0)))

    def stop(self, run: Run, *, download: bool = True) -> Stopped:
        """Locally the results are already here: ``download`` changes nothing."""
        if run.kind == "sweep":
            status = sweeps.stop_sweep(run.store, run.sweep())
            kept = [member.results for member in run.members() if member.results.is_dir()]
            return Stopped(run, kept, completed=status.completed, trials=len(status.trials))
        experiment = run.experiment()
        with run.locked():
            experiments.stop(experiment)
        return Stopped(run, [experiment.results])

    def status(self, run: Run) -> RunStatus:
        if run.kind == "sweep":
            return sweeps.sweep_status(run.store, run.sweep())
        return experiments.status(run.experiment())

    def download(self, run: Run) -> list[Path]:
        """Where the results already are; a member that started but wrote nothing is an error."""
        members = run.members()
        if run.kind == "sweep":
            members = [m for m in members if m.results.is_dir() or m.run_record().started]
        for member in members:
            if not member.results.is_dir():
                raise TfcliError(f"experiment '{member.name}' has no results yet", hint="start it first")
        return [member.results for member in members]

    def logs(self, run: Run, request: LogRequest, write: Callable[[str], None]) -> None:
        if run.kind == "experiment":
            experiments.write_log(
                run.experiment(), follow=request.follow, worker=request.worker, tail=request.tail, write=write
            )
            return
        path = run.folder.logs / "queue.log"
        if not path.exists():
            raise TfcliError(
                f"sweep '{run.name}' has no queue log yet", hint=f"start it: `tfcli experiment start -s {run.name}`"
            )
        write(request.tailed(path.read_text(errors="replace")))
        write(f"(each trial's own log: `tfcli experiment logs -e {run.name}-K`)\n")

    def follow(self, started: Started, watcher: Watcher) -> Ended:
        if started.run.kind == "sweep":
            return follow_sweep(started, watcher)
        return follow_experiment(started, watcher)

    def plan(self, run: Run, shared_cluster: str | None = None) -> LocalPlan:
        """The processes a run starts here and the cores they keep busy; a sweep's trials at a time (what
        ``start -s --local`` picks when not told ``--parallel``). ``shared_cluster`` is always None here (see
        :meth:`start`)."""
        parallel = None
        if run.kind == "sweep":
            definition = run.sweep().definition()
            base = definition.base if isinstance(definition.base, dict) else {}
            spec = {**base, **sweeps.widest(definition)}
            parallel = sweeps.parallel_in_effect(run.sweep())
        else:
            spec = run.experiment().spec_data()
        view = SpecView(spec)
        workers = view.num_workers if view.distributed else 0
        cores = sweeps.cores_per_trial(spec)
        return LocalPlan(run.name, view.run_mode, workers, cores, parallel, os.cpu_count() or 1)

    def trial_numbers(self, run: Run, *, downloaded: bool = False) -> list[TrialNumbers]:
        return [sweeps.trial_numbers(run.store, trial) for trial in run.trials()]

    def refuse_running(self, run: Run) -> None:
        """Before another backend starts ``run``: nothing of it may still run here."""
        if run.kind == "sweep" and sweeps.queue_alive(run.sweep()):
            raise TfcliError(
                f"sweep '{run.name}' is running on this machine; it cannot run on GKE at the same time",
                hint=f"`tfcli experiment stop -s {run.name}` first",
            )
        running = [member.name for member in run.members() if experiments.is_running(member)]
        if running and run.kind == "sweep":
            raise TfcliError(
                f"trials of sweep '{run.name}' run on this machine ({', '.join(running[:3])})",
                hint=f"`tfcli experiment stop -s {run.name}` ends them first",
            )
