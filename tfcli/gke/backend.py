"""The GKE backend: a run is a Pulumi stack (an experiment's, or a sweep's with one Indexed Job for its trials), its
results in the stack's bucket. :mod:`tfcli.gke.experiments` and :mod:`tfcli.gke.sweeps` hold the two stack kinds;
both deploy, suspend and tear down through :mod:`tfcli.gke.deploy`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from tfcli.experiments.store import ExperimentStore
from tfcli.gke import experiments, follow, planning, sweeps
from tfcli.gke.deploy import Deployment, has_results
from tfcli.gke.events import UpdateObserver
from tfcli.gke.handle import gke_of, gke_trial_of
from tfcli.gke.logs import stream_logs
from tfcli.gke.pulumi_cli import InstallPrompt
from tfcli.gke.stacks import Stacks
from tfcli.gke.sweep_readings import read_downloaded, trial_status, view
from tfcli.project import ProjectDir
from tfcli.runs.backend import Watcher
from tfcli.runs.reaping import Reaped
from tfcli.runs.results import Ended, LogRequest, Paused, RunStatus, Started, StartOptions, Stopped
from tfcli.runs.resuming import ResumePlan, check_experiment_resumable, released_members
from tfcli.runs.run import Run
from tfcli.sweeps.aggregate import Run as TrialNumbers
from trainer.kernel.errors import TfcliError


class GkeBackend:
    """Pulumi stacks on Google Kubernetes Engine."""

    name = "gke"
    waits_by_default = False  # a run on GKE goes on without this machine: `start` returns once it is deployed

    def __init__(
        self,
        *,
        observer: UpdateObserver | None = None,
        install_prompt: InstallPrompt | None = None,
        build_prompt: Callable[[str], bool] | None = None,
    ) -> None:
        self.observer = observer
        self.install_prompt = install_prompt
        self.build_prompt = build_prompt

    def stacks(self, project: ProjectDir) -> Stacks:
        return Stacks(project, install_prompt=self.install_prompt, build_prompt=self.build_prompt)

    def reap_clusters(self, store: ExperimentStore, *, now: datetime) -> list[Reaped]:
        from tfcli.gke.clusters import reap_clusters

        return reap_clusters(store, stacks=self.stacks(store.project), now=now, observer=self.observer)

    def start(self, run: Run, options: StartOptions, *, resumed: sweeps.Resumed | None = None) -> Started:
        stacks = self.stacks(run.project)
        with run.locked():
            if run.kind == "sweep":
                deployment = sweeps.start(
                    run.store,
                    run.sweep(),
                    parallel=options.parallel,
                    restart=options.restart,
                    shared_cluster=options.shared_cluster,
                    observer=self.observer,
                    stacks=stacks,
                    resumed=resumed,
                )
            else:
                deployment = experiments.start(
                    run.experiment(),
                    run.project,
                    restart=options.restart,
                    shared_cluster=options.shared_cluster,
                    observer=self.observer,
                    stacks=stacks,
                )
        return self._started(run, deployment)

    def _started(self, run: Run, deployment: Deployment) -> Started:
        outputs, shared, nothing = deployment.outputs, deployment.shared_cluster, deployment.nothing_to_run
        on = f"shared cluster {shared}" if shared else "its own cluster"
        place = f"{on} {outputs.get('clusterName', '')}, namespace {outputs.get('namespace', '?')}"
        results = f"results go to {outputs.get('resultsUrl', 'its bucket')}"
        status = f"`tfcli experiment status {run.flag}`"
        if run.kind == "sweep":
            trials = len(outputs.get("trials") or run.trials())
            done = f"Every trial of {run.name} has already completed "
            done += f"(`stop -s {run.name}` downloads them and tears it down)."
            announce = f"Deployed sweep {run.name} on GKE ({place}): {trials} trials in one Indexed Job, "
            announce += f"{outputs.get('parallelism', '?')} at a time; {results}"
            hint = (
                f"Watch it with {status}; `tfcli experiment list -s {run.name}` compares, "
                f"`tfcli experiment stop -s {run.name}` downloads every trial's results and tears it down."
            )
        else:
            done = f"{run.name} has already completed (`--restart` starts it over)."
            announce = f"Deployed {run.name} on GKE ({place}); {results}"
            hint = f"Watch it with {status}; `tfcli experiment download -e {run.name}` copies its results so far."
        return Started(
            run,
            self.name,
            nothing_to_run=nothing,
            launched=deployment,
            announce=[done if nothing else announce],
            detached_hint=hint,
            results_here=False,
            where="on GKE",
        )

    def check_resumable(self, run: Run, plan: ResumePlan | None = None) -> None:
        """An experiment resumes when paused (or completed, its budget raised); a sweep when paused or when its Job
        ended — failed or completed (a new Job runs what did not end) — not while its Job runs."""
        state = plan.state if plan is not None and plan.state is not None else self.status(run).state
        if run.kind == "sweep":
            if state in ("new", "running", "deploying", "destroying"):
                raise TfcliError(
                    f"sweep '{run.name}' is {state}; only a paused sweep can resume (or one whose Job ended)",
                    hint=f"`tfcli experiment status -s {run.name}` shows its trials",
                )
            return
        check_experiment_resumable(run, state, ("paused", "pausing"), plan)

    def resume(self, run: Run, plan: ResumePlan | None = None) -> Started:
        plan = plan or ResumePlan()  # checked by check_resumable before (Backends.resume: one pass)
        if plan.state is None:  # the state the Job is chosen by (a plan made without one)
            plan = dataclasses.replace(plan, state=self.status(run).state)
        if run.kind != "sweep":
            return self.start(run, StartOptions())
        ended = plan.state in ("failed", "completed")  # its Job starts no pod again: a new Job
        released = [member.name for member in released_members(run, plan)]
        deployed = self.stacks(run.project).state(run.name) if released else None
        if deployed is not None and deployed.deployed:  # in the bucket, before any pod runs them (trainer/ended.py)
            sweeps.release_trials(run.project, deployed.outputs, released)
        # A new Job has no slot for a completed trial; a paused one keeps its Job (its suspend flips, in place).
        left = tuple(sorted({*plan.held, *(plan.finished if ended else ())}))
        return self.start(run, StartOptions(), resumed=sweeps.Resumed(left, new_job=ended))

    def pause(self, run: Run) -> Paused:
        stacks = self.stacks(run.project)
        with run.locked():
            if run.kind == "sweep":
                status = sweeps.pause(run.store, run.sweep(), observer=self.observer, stacks=stacks)
                return Paused(run, status.state, completed=status.completed, trials=len(status.trials))
            result = experiments.pause(run.experiment(), run.project, observer=self.observer, stacks=stacks)
        state = "pausing" if result.get("status") == "pausing" else "paused"
        return Paused(run, state, timesteps=int(result.get("timesteps", 0)))

    def stop(self, run: Run, *, download: bool = True) -> Stopped:
        stacks = self.stacks(run.project)
        with run.locked():
            if run.kind == "sweep":
                status = sweeps.stop(
                    run.store, run.sweep(), download_results=download, observer=self.observer, stacks=stacks
                )
                kept = [member.results for member in run.members() if member.results.is_dir()]
                return Stopped(
                    run, kept, download, completed=status.completed, trials=len(status.trials), copies_results=True
                )
            found = experiments.stop(
                run.experiment(), run.project, download=download, observer=self.observer, stacks=stacks
            )
        return Stopped(run, [found] if found else [], download, deployed=found is not None or not download)

    def status(self, run: Run) -> RunStatus:
        stacks = self.stacks(run.project)
        if run.kind == "sweep":
            return view(run.store, run.sweep(), stacks=stacks).status
        if gke_of(run.record).sweep:
            return trial_status(run.store, run.experiment(), stacks=stacks)
        return experiments.status(run.experiment(), run.project, stacks=stacks)

    def download(self, run: Run) -> list[Path]:
        stacks = self.stacks(run.project)
        if run.kind == "sweep":
            with run.locked():
                return sweeps.download(run.store, run.sweep(), stacks=stacks)
        experiment = run.experiment()
        if (sweep := gke_trial_of(run.record)) is not None:
            state = stacks.state(sweep)
            found = sweeps.download_trial(run.store, experiment, state.outputs) if state.deployed else None
            if found is None:
                raise TfcliError(f"trial '{run.name}' of sweep '{sweep}' has no results in the bucket yet")
            return [found]
        if gke_of(run.record).sweep:  # a trial of a stopped sweep: its results were downloaded when it stopped
            if not has_results(experiment):
                raise TfcliError(f"experiment '{run.name}' has no results yet", hint="start it first")
            return [experiment.results]
        with run.locked():
            return [experiments.download_results(experiment, run.project, stacks=stacks)]

    def logs(self, run: Run, request: LogRequest, write: Callable[[str], None]) -> None:
        if run.kind == "sweep":
            raise TfcliError(
                f"sweep '{run.name}' runs on GKE, where each trial has its own pod and log",
                hint=f"`tfcli experiment logs -e {run.name}-K` prints trial K's (`-f` follows it)",
            )
        stream_logs(
            run.experiment(),
            run.project,
            follow=request.follow,
            worker=request.worker,
            tail=request.tail,
            write=write,
            stacks=self.stacks(run.project),
        )

    def follow(self, started: Started, watcher: Watcher) -> Ended:
        if started.run.kind == "sweep":
            return follow.follow_sweep(self, started, watcher, self.stacks(started.run.project))
        return follow.follow_experiment(self, started, watcher)

    def plan(self, run: Run, shared_cluster: str | None = None) -> planning.Planned:
        """The stack ``start`` would deploy, planned offline under Pulumi's mocks, with its hourly cost."""
        if run.kind == "sweep":
            return planning.planned_sweep(run.project, run.sweep(), shared_cluster=shared_cluster)
        return planning.planned(run.store, experiment=run.name, file=None, cluster=shared_cluster)

    def trial_numbers(self, run: Run, *, downloaded: bool = False) -> list[TrialNumbers]:
        if downloaded:
            return [read_downloaded(run.store.dir(trial.name), trial).run() for trial in run.trials()]
        current = view(run.store, run.sweep(), stacks=self.stacks(run.project))
        return [current.run(trial) for trial in run.trials()]
