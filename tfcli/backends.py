"""The one place a run's backend is chosen, and the rules that span backends.

- ``start`` trains where ``--backend NAME`` (``--local``: ``local``) says, else where the project's default is
  (``backend:`` in ``tfcli.yaml``; without it GKE when ``tfcli.yaml`` names a GCP project, else this machine); every
  later command follows the backend ``run.json`` recorded at that start. Names are looked up in the registry
  (:mod:`tfcli.runs.registry`), where ``local`` and ``gke`` register themselves as their packages are imported here.
  A run that never started belongs to the project's default (``status`` reads it here: there is nothing of it
  anywhere).
- A trial of a sweep deployed on GKE is started, paused and stopped with its sweep, never on its own.
- Before a run starts on another backend (GKE, ...) nothing of it may still run on this machine, and nothing of it
  may run here while a backend that keeps its runs (GKE's stack) holds it (:func:`tfcli.runs.registry.held`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, cast

import tfcli.gke  # noqa: F401  (registers `gke`; its implementation loads only when a run needs it)
from tfcli.experiments.status import Status
from tfcli.experiments.store import ExperimentStore
from tfcli.gke.handle import gke_trial_of
from tfcli.local.backend import LocalBackend
from tfcli.local.experiments import is_running
from tfcli.local.sweeps import queue_alive
from tfcli.project import ProjectDir
from tfcli.runs import registry
from tfcli.runs.backend import Backend, ClusterBackend, Watcher
from tfcli.runs.reaping import Reaped, reap_reason
from tfcli.runs.results import Ended, LogRequest, Paused, RunStatus, Started, StartOptions, Stopped
from tfcli.runs.resuming import FLAGS, ResumeOptions, plan_resume, write_budget
from tfcli.runs.run import Run
from tfcli.stackfiles.files import stack_path
from tfcli.sweeps.status import SweepStatus
from trainer.kernel.errors import InvalidInput, TfcliError
from trainer.kernel.spec.documents import display_path
from trainer.kernel.spec.library import PROJECT_FILE
from trainer.kernel.spec.parallel import checked_parallel

if TYPE_CHECKING:  # numpy's sweep statistics load where a table is drawn, not for every `list`
    from tfcli.runs.comparison import Comparison
    from tfcli.sweeps.aggregate import Row

if TYPE_CHECKING:  # the GKE backend (stacks, bucket, sweep readings) loads where a run is on GKE, not for every `list`
    from tfcli.gke.backend import GkeBackend
    from tfcli.gke.events import UpdateObserver
    from tfcli.gke.planning import Planned
    from tfcli.gke.pulumi_cli import InstallPrompt


@dataclass
class Backends:
    """The backends of one CLI call, with what the GKE one needs from its caller (``observer``: shows Pulumi
    updates; ``install_prompt``: offers to install a missing Pulumi CLI)."""

    observer: UpdateObserver | None = None
    install_prompt: InstallPrompt | None = None
    build_prompt: Callable[[str], bool] | None = None  # asked before a project's first trainer image build

    def named(self, name: str, where: str = "--backend") -> Backend:
        """The registered backend ``name`` (``where``: the flag or ``file: field`` it was read from, for the error
        an unknown name is)."""
        return registry.create(name, registry.Caller(self.observer, self.install_prompt, self.build_prompt), where)

    def gke(self) -> GkeBackend:
        return cast("GkeBackend", self.named("gke"))

    def default(self, project: ProjectDir) -> str:
        """The project's default backend, a registered one (``backend:`` in tfcli.yaml is checked here)."""
        name = project.settings.default_backend
        registry.registration(name, f"{display_path(project.root / PROJECT_FILE)}: backend")
        return name

    def chosen(self, project: ProjectDir, backend: str | None) -> str:
        """Where ``start`` trains: ``--backend`` (checked against the registry), else the project's default."""
        return registry.registration(backend).name if backend is not None else self.default(project)

    def of(self, run: Run) -> Backend:
        """Where the run last started (a run that never started: the project's default)."""
        if run.record.backend is None:
            return self.named(self.default(run.project))
        return self.named(run.record.backend, f"{display_path(run.folder.run_file)}: backend")

    # -- lifecycle --------------------------------------------------------------------------------------------

    def check_start(self, project: ProjectDir, *, backend: str | None, shared_cluster: str | None) -> None:
        """What ``start`` refuses before anything is written: an unknown backend, a shared cluster for a run on a
        backend that does not run on shared clusters (:func:`refuse_cluster`), or one that does not exist."""
        name = self.chosen(project, backend)
        if shared_cluster is None:
            return
        refuse_cluster(project, name, chosen_by_flag=backend is not None)
        from tfcli.stackfiles.files import cluster_spec

        cluster_spec(project, shared_cluster)  # an unknown one is an InvalidInput listing the known ones

    def start(self, run: Run, *, backend: str | None = None, options: StartOptions, resume: bool = False) -> Started:
        """Start ``run`` on ``backend`` (None: the project's default); ``resume``: only a resumable one."""
        refuse_alone(run, "start")
        self.check_start(run.project, backend=backend, shared_cluster=options.shared_cluster)
        if run.kind == "sweep":
            checked_parallel(options.parallel)  # one rule for every backend (an experiment ignores it)
        if resume:
            self.of(run).check_resumable(run)
        target = self.named(self.chosen(run.project, backend))
        if target.name != LocalBackend.name:  # nothing of it may still run on this machine
            LocalBackend().refuse_running(run)
        return target.start(run, options)

    def resume(self, run: Run, options: ResumeOptions | None = None) -> Started:
        """Continue a paused or interrupted run where it last ran; ``options``: retry a sweep's failed trials, raise
        the budget of finished members (:mod:`tfcli.runs.resuming`: one plan, carried out by the run's backend)."""
        refuse_alone(run, "start")
        options = options or ResumeOptions()
        options.check()  # bad flags before anything is read
        refuse_trial_budget(run, options)
        backend = self.of(run)
        with run.locked():  # check, then write, then launch: a refused resume has changed nothing
            status = backend.status(run)
            if isinstance(status, SweepStatus):
                members = [(trial.index, trial_status) for trial, trial_status in status.trials]
            else:
                assert isinstance(status, Status)
                members = [(0, status)]
            plan = plan_resume(run, members, options, status.state)
            backend.check_resumable(run, plan)
            write_budget(run, plan)
            started = backend.resume(run, plan)
        return dataclasses.replace(started, announce=[*plan.notes, *started.announce])

    def refuse_replacing(self, run: Run) -> None:
        """``--restart`` replaces a run's definition and deletes its results: refused while any of it runs, on GKE
        (deployed and not stopped) or here (a queue, a supervisor or a trainer). Called under the run's lock, before
        anything is written."""
        flag, what = run.flag, run.kind
        members = [run.store.dir(name) for name in run.store.names() if run.store.sweep_owning(name) == run.name]
        members = members if run.kind == "sweep" else [run.experiment()]  # by folder: sweep.yaml may be hand-edited
        records = [member.run_record() for member in (run.folder, *members)]
        deployed = [record.backend for record in records if registry.held(record)]
        if deployed:
            raise TfcliError(
                f"{what} '{run.name}' is deployed on {registry.title(str(deployed[0]))}; --restart starts over only "
                f"from a stopped {what}",
                hint=f"`tfcli experiment stop {flag}` first (downloads its results, destroys the stack)",
            )
        running = [run.name] if run.kind == "sweep" and queue_alive(run.sweep()) else []
        running += [member.name for member in members if is_running(member)]
        if running:
            raise TfcliError(
                f"{what} '{run.name}' is running ({', '.join(running[:4])}); --restart would delete the results "
                "it is writing",
                hint=f"`tfcli experiment stop {flag}` (or pause) first, then --restart",
            )

    def pause(self, run: Run) -> Paused:
        refuse_alone(run, "pause")
        return self.of(run).pause(run)

    def stop(self, run: Run, *, download: bool = True) -> Stopped:
        refuse_alone(run, "stop")
        return self.of(run).stop(run, download=download)

    def reap(self, store: ExperimentStore, *, now: datetime) -> list[Reaped]:
        """Stop, results downloaded, every experiment deployed on GKE that ended or outlived its ``ttl``
        (:func:`tfcli.runs.reaping.reap_reason`); a sweep's trials go with their sweep. Then destroy the idle shared
        clusters past their ``ttl``. One that cannot be read or stopped is reported and the others still reaped."""
        reaped = []
        for name in store.names():
            run = Run(store, store.get(name))
            if not self._maybe_deployed(run):
                continue
            try:
                status = self.of(run).status(run)
                assert isinstance(status, Status)
                ttl = run.experiment().spec().ttl
                seconds = ttl.seconds if ttl is not None else None
                reason = reap_reason(
                    status.state, status.detail, started_at=run.record.started_at, ttl_seconds=seconds, now=now
                )
                if reason is not None:
                    reaped.append(Reaped(run.name, reason, self.stop(run, download=True).summary()))
            except TfcliError as error:
                reaped.append(Reaped(run.name, "could not be reaped", error=error.message.splitlines()[0]))
        return reaped + self._reap_clusters(store, now=now)

    def _reap_clusters(self, store: ExperimentStore, *, now: datetime) -> list[Reaped]:
        """The project's idle shared clusters past their ``ttl``, destroyed by each backend that runs on shared
        clusters (after the experiments: one stopped above may have been the last on its cluster), whichever backend
        the project's runs train on by default. A project with no shared cluster loads none of them."""
        from tfcli.stackfiles.files import cluster_names

        if not cluster_names(store.project):
            return []
        reaped: list[Reaped] = []
        for name in registry.on_shared_clusters():
            reaped += cast(ClusterBackend, self.named(name)).reap_clusters(store, now=now)
        return reaped

    @staticmethod
    def _maybe_deployed(run: Run) -> bool:
        """Started from here on a registered backend that keeps its runs (GKE) and not stopped, or — in a checkout
        with no ``run.json``, as CI's (the stack deployed by the experiments workflow) — an experiment with a stack
        file of its own in a project whose default backend keeps its runs. Not a trial of a deployed sweep."""
        record = run.record
        if record.started:
            registered = record.backend in registry.names()  # one this process cannot ask is not reaped from here
            return registered and registry.held(record) and gke_trial_of(record) is None
        return registry.keeps_runs(run.project.settings.default_backend) and stack_path(run.project, run.name).is_file()

    def follow(self, started: Started, watcher: Watcher) -> Ended:
        return self.named(started.backend, "the started run's backend").follow(started, watcher)

    # -- reading ----------------------------------------------------------------------------------------------

    def status(self, run: Run) -> RunStatus:
        if run.record.started:
            return self.of(run).status(run)
        status = LocalBackend().status(run)  # nothing of it runs anywhere: read it here
        return dataclasses.replace(status, backend=self.default(run.project))

    def statuses(self, store: ExperimentStore) -> list[Status]:
        """Every experiment's status; a GKE one that cannot be read (no Pulumi CLI, no credentials) is ``unknown``."""
        runs = [Run(store, store.get(name)) for name in store.names()]

        def one(run: Run) -> Status:
            try:
                status = self.status(run)
            except TfcliError as error:
                return unknown(run, error)
            assert isinstance(status, Status)
            return status

        remote = [run for run in runs if run.record.backend not in (None, LocalBackend.name)]
        if len(remote) < 2:
            return [one(run) for run in runs]
        with ThreadPoolExecutor(max_workers=min(8, len(remote))) as pool:  # each one runs a few pulumi commands
            return list(pool.map(one, runs))

    def download(self, run: Run) -> list[Path]:
        return self.of(run).download(run)

    def logs(self, run: Run, request: LogRequest, write: Callable[[str], None]) -> None:
        """A run that never started has no log anywhere: it is looked for here, which says so."""
        if run.record.backend is None:
            LocalBackend().logs(run, request, write)
            return
        self.of(run).logs(run, request, write)

    def compare(self, run: Run, *, downloaded: bool = False) -> list[Row]:
        """A sweep's combinations compared (``list -s``): IQM over seeds with CIs, the best marked; ``downloaded``:
        from the copies here (what ``plot -s`` draws)."""
        from tfcli.sweeps.aggregate import rows  # numpy: loaded where a table is drawn

        sweep = run.sweep()
        numbers = self.of(run).trial_numbers(run, downloaded=downloaded)
        return rows(run.trials(), numbers, seeds=sweep.definition().seeds, target_return=sweep.target_return())

    def compare_runs(self, runs: list[Run]) -> Comparison:
        from tfcli.runs.comparison import experiment_row, of_experiments, of_sweep

        """``experiment compare``: experiments side by side, or one sweep's combinations (the rows of
        :meth:`compare`), by the spec keys that differ, with what each reached (read where each run is)."""
        if len(runs) == 1 and runs[0].kind == "sweep":
            (run,) = runs
            sweep_status = self.status(run)
            assert isinstance(sweep_status, SweepStatus)
            return of_sweep(run.name, self.compare(run), sweep_status)
        compared = []
        for run in runs:
            status = self.status(run)
            assert isinstance(status, Status)
            compared.append(experiment_row(run.experiment(), status, results_here=results_here(run, status)))
        return of_experiments([run.experiment().spec_data() for run in runs], compared)

    def plan(self, run: Run, shared_cluster: str | None = None) -> Planned:
        """Offline: the stack ``pulumi up -s NAME`` deploys, whichever backend trains the run."""
        return self.gke().plan(run, shared_cluster)

    def plan_on(self, run: Run, backend: str, shared_cluster: str | None = None) -> object:
        """Offline: what ``start --backend NAME`` would make there, in that backend's own plan type (``local``: the
        processes, a ``LocalPlan``; ``gke``: the stack); a shared cluster is refused as ``start`` refuses it."""
        if shared_cluster is not None:
            refuse_cluster(run.project, registry.registration(backend).name, chosen_by_flag=True)
        return self.named(backend).plan(run, shared_cluster)


def refuse_cluster(project: ProjectDir, name: str, *, chosen_by_flag: bool) -> None:
    """``--cluster`` for a run on the backend ``name``: refused (exit 2) unless that backend runs on shared clusters
    (its registration's ``shared_clusters``); the message names the backend and how it was chosen (its flag, or the
    project's default)."""
    if registry.registration(name).shared_clusters:
        return
    kinds = registry.on_shared_clusters()
    said = " or ".join(registry.title(kind) for kind in kinds)
    refused = f"--cluster: backend '{name}' does not run on shared clusters (a shared cluster is a {said} cluster)"
    if chosen_by_flag:
        raise InvalidInput(f"{refused}; it has no meaning with {registry.flag(name)}")
    if project.settings.backend is None:  # the default rule chose it: no GCP project
        raise InvalidInput(
            f"{refused}, and this project names no GCP project (set one with `tfcli init -r PROJECT_ID`)"
        )
    others = " or ".join(f"`{registry.flag(kind)}`" for kind in kinds)
    raise InvalidInput(
        f"{refused}, and this project's runs train on '{name}' ({PROJECT_FILE}: backend; {others} starts this one "
        "on a shared cluster)"
    )


def refuse_trial_budget(run: Run, options: ResumeOptions) -> None:
    """A sweep has one budget (its trials are compared at it): one trial's is not raised alone, which would split
    it; the sweep is extended instead (every trial, ``resume -s``)."""
    sweep = run.store.sweep_owning(run.name) if run.kind == "experiment" and options.budget else None
    if sweep:
        flags = " ".join(f"{FLAGS[key]} {value}" for key, value in options.budget.items())
        raise InvalidInput(
            f"{FLAGS[next(iter(options.budget))]}: experiment '{run.name}' is a trial of sweep '{sweep}', which has "
            "one budget for all its trials; raising one trial's would split it",
            hint=f"`tfcli experiment resume -s {sweep} {flags}` extends every trial",
        )


def refuse_alone(run: Run, action: str) -> None:
    """A trial of a deployed GKE sweep is run by the sweep's stack: it is started, paused and stopped with it."""
    if run.kind != "experiment" or (sweep := gke_trial_of(run.record)) is None:
        return
    raise TfcliError(
        f"experiment '{run.name}' is a trial of sweep '{sweep}', deployed on GKE; it cannot {action} on its own",
        hint=f"`tfcli experiment pause -s {sweep}` / `stop -s {sweep}` act on the whole sweep (stop downloads every "
        f"trial's results and destroys its stack; `start -e {run.name} --local` then continues this one here)",
    )


def results_here(run: Run, status: Status) -> bool:
    """Whether ``experiments/NAME/results/`` holds the run's own episodes: a backend that does not keep its runs
    leaves them here (a local run writes them in place); a copy of a run that a backend keeps (GKE) is its own once
    downloaded after it last trained (the copy's result.json says what its status does)."""
    if not registry.keeps_runs(status.backend):
        return True
    copy = run.experiment().result()
    return bool(copy) and (copy.get("status"), copy.get("timesteps")) == (status.state, status.timesteps)


def unknown(run: Run, error: TfcliError) -> Status:
    """A status that could not be read, with the reason's first line."""
    return Status(
        name=run.name,
        backend=run.record.backend or run.project.settings.default_backend,
        run_mode=run.experiment().spec_view().run_mode,
        state="unknown",
        timesteps=0,
        episodes=0,
        budget="",
        progress=None,
        mean_return=None,
        wall_seconds=None,
        timesteps_per_second=None,
        pid=None,
        detail=error.message.splitlines()[0],
    )
