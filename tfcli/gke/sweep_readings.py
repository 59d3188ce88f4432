"""A GKE sweep's trials as read from its bucket (or, once it is stopped, from their downloads here).

The trials' numbers are read remotely into memory, not downloaded: ``progress.jsonl`` is a line per episode (well
under a megabyte for the runs a sweep makes), the aggregate table needs every episode of every trial, and a local
copy could be stale (a partial download) or mix with the results of an earlier local run. Once the sweep is stopped
its bucket is gone and the downloads are what is read.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfcli.experiments.progress import ProgressReader
from tfcli.experiments.spec_view import SpecView
from tfcli.experiments.status import ENDED_FOR_GOOD, Status, reported_state, status_from
from tfcli.experiments.store import ExperimentDir, ExperimentStore
from tfcli.gke import states, sweep_job
from tfcli.gke.bucket_reads import BucketReads, read_trials
from tfcli.gke.handle import gke_of
from tfcli.gke.pod_states import PodState
from tfcli.gke.results import RemoteResults, remote_results
from tfcli.gke.stacks import Stacks, StackState
from tfcli.gke.sweep_job import JobReading
from tfcli.gke.waiting import FINAL
from tfcli.sweeps.aggregate import Run, run_of
from tfcli.sweeps.status import SweepStatus
from tfcli.sweeps.store import SweepDir
from trainer.kernel.errors import TfcliError
from trainer.kernel.spec.sweep import Trial


@dataclass(frozen=True)
class TrialReading:
    """One trial as read from the bucket (or, once stopped, from its download): its state and numbers."""

    trial: Trial
    state: str
    result: dict[str, Any]
    records: list[dict[str, Any]]
    reader: ProgressReader
    detail: str = ""  # why, when the cluster says more than the bucket (tfcli/gke/sweep_job.py)

    def status(self) -> Status:
        final = self.state in ("completed", "pruned", "failed", "paused", "stopped") and bool(self.result)
        detail = self.detail or (str(self.result.get("error", "")) if self.state == "failed" else "")
        return status_from(
            self.trial.name,
            SpecView(self.trial.data),
            backend="gke",
            state=self.state,
            result=self.result,
            reader=self.reader,
            final=final,
            detail=detail,
        )

    def run(self) -> Run:
        return run_of(self.trial, self.records, self.state, self.result)


def trial_remote(base: RemoteResults, trial: str) -> RemoteResults:
    return dataclasses.replace(
        base, prefix=f"{base.prefix}/{trial}" if base.prefix else trial, progress=ProgressReader(Path("progress"))
    )


def read_deployed(
    project: Any, outputs: dict[str, Any], trials: list[Trial], reads: BucketReads | None = None
) -> list[TrialReading]:
    """Every trial's ``result.json`` and ``progress.jsonl`` from the sweep's bucket, in the trials' order: read
    concurrently (:mod:`tfcli.gke.bucket_reads`), and with ``reads`` kept from the last call only what changed."""
    base = remote_results(project, outputs, client=reads.client if reads is not None else None)
    suspended = bool(outputs.get("suspended"))
    read = read_trials(base, [trial.name for trial in trials], reads)
    readings = []
    for trial in trials:
        files = read[trial.name]
        started = bool(files.reader.episodes or files.result.get("status"))
        result, spec = files.result, SpecView(trial.data)
        if result.get("status") == "completed" and reported_state(spec, result) == "paused":  # raised budget
            result = {**result, "status": "paused"}
        state = states.deployed_state(result, suspended=suspended, started=started)
        if state == "running" and reported_state(spec, result) == "waiting":
            state = "waiting"  # at an undecided rung, given back to the sweep's workers (trainer/sweep_worker.py)
        readings.append(TrialReading(trial, state, dict(files.result), list(files.records), files.reader))
    return readings


def read_downloaded(experiment: ExperimentDir, trial: Trial) -> TrialReading:
    """A trial of a sweep that is not deployed, from ``experiments/<trial>/results/`` (its download) and its run
    record (how the cluster ended it, for a trial that failed before it wrote a ``result.json``)."""
    reader = ProgressReader(experiment.results / "progress.jsonl")
    records = reader.read()
    result = experiment.result() if experiment.exists() else {}
    record = experiment.run_record() if experiment.exists() else None
    reported = str(result.get("status", ""))
    detail = ""
    ended = gke_of(record) if record is not None else None
    if ended is not None and ended.ended_as:
        state, detail = ended.ended_as, ended.ended_reason or ""
    elif reported in FINAL:
        state = reported
    elif record is not None and record.stopped:
        state = "stopped"
    else:
        state = reported or "new"
    return TrialReading(trial, state, result, records, reader, detail)


def _sweep_state(readings: list[TrialReading], *, suspended: bool) -> str:
    """The sweep's state from its trials alone (when its Job cannot be read): it has ended once every trial has —
    completed (or pruned), failed, or paused at ``max_cost`` while the Job runs (nothing starts that trial again)."""
    states = Counter(reading.state for reading in readings)
    if sum(states.get(state, 0) for state in ENDED_FOR_GOOD) == len(readings):
        return "completed"
    if suspended:
        return "pausing" if states.get("pausing") else "paused"
    if sum(states.get(state, 0) for state in (*ENDED_FOR_GOOD, "failed", "paused", "stopped")) == len(readings):
        return "failed"
    return "running"


@dataclass(frozen=True)
class SweepView:
    """The sweep's stack and its trials' readings: what ``status -s``, ``list -s`` and ``stop -s`` look at."""

    status: SweepStatus
    readings: list[TrialReading]
    stack: StackState

    def run(self, trial: Trial) -> Run:
        return next(reading for reading in self.readings if reading.trial.name == trial.name).run()


def view(store: ExperimentStore, sweep: SweepDir, *, stacks: Stacks, reads: BucketReads | None = None) -> SweepView:
    """The sweep's state from its stack, its bucket and its Job (never a stale local file while it is deployed);
    ``reads``, kept between the polls of a follow, makes a poll fetch only what changed."""
    trials = sweep.trials()
    state = stacks.state(sweep.name)
    record = sweep.run_record()
    cluster = None
    detail = ""
    if state.deployed:
        readings = read_deployed(store.project, state.outputs, trials, reads)
        if state.outputs.get("kubeconfig"):
            cluster = read_cluster(store, sweep.name, state.outputs)
            readings = cluster.judge(readings)
        job = cluster.job if cluster is not None else None
        ended = job is not None and job.complete  # starts nothing more, suspended or not: resume makes a new Job
        current = _sweep_state(readings, suspended=bool(state.outputs.get("suspended")) and not ended)
        if job is not None:
            current = sweep_job.sweep_state(job) or current
            if current == "completed" and any(reading.state == "failed" for reading in readings):
                current = "failed"  # a trial the Job left as it ended (held) had failed
            detail = job.failed or ""
        if current == "failed" and not detail:
            short = [
                f"{reading.trial.name} {reading.state}" for reading in readings if reading.state not in ENDED_FOR_GOOD
            ]
            detail = f"{len(short)} of {len(readings)} trials did not complete: {', '.join(short[:5])}"
        parallel = state.outputs.get("parallelism")
    else:
        readings = [read_downloaded(store.dir(trial.name), trial) for trial in trials]
        current = states.undeployed_state(record, state)
        handle = gke_of(record)
        if current == "stopped" and handle.ended_as:  # how the cluster ended it, before it was torn down
            current, detail = handle.ended_as, handle.ended_reason or ""
        parallel = record.parallel
    counts = dict(Counter(reading.state for reading in readings))
    trial_statuses = [(reading.trial, reading.status()) for reading in readings]
    if cluster is not None:
        trial_statuses = cluster.annotate(trial_statuses)
    status = SweepStatus(
        sweep.name, current, None if parallel is None else int(parallel), counts, trial_statuses, None, "gke", detail
    )
    return SweepView(status, readings, state)


@dataclass(frozen=True)
class ClusterReading:
    """The sweep's pods (the newest of each slot, in words) and its trials Job, or why they cannot be read; each
    slot read as the trial it runs (:class:`~tfcli.gke.sweep_job.SlotTable`)."""

    pods: dict[int, PodState]  # by trial
    job: JobReading | None  # its indexes as trials
    error: str | None = None
    slots: sweep_job.SlotTable | None = None  # None: the cluster could not be read

    def judge(self, readings: list[TrialReading]) -> list[TrialReading]:
        """Each trial's state, corrected by what the Job says (a failed index, a Job that ended without it)."""
        if self.job is None:
            return readings
        judged = []
        for reading in readings:
            index = reading.trial.index
            paused_for = str(reading.result.get("reason")) if states.paused_at_max_cost(reading.result) else ""
            held = self.slots is not None and self.slots.slot(index) is None
            verdict = sweep_job.trial_verdict(
                index, reading.state, self.job, self.pods.get(index), paused_for=paused_for, held=held
            )
            if verdict is not None:
                reading = dataclasses.replace(reading, state=verdict.state, detail=verdict.detail)
            judged.append(reading)
        return judged

    def annotate(self, statuses: list[tuple[Trial, Status]]) -> list[tuple[Trial, Status]]:
        """Each trial's pod in words (``cluster: {"pod", "reason"}``), or the reason the cluster cannot be read
        (``cluster: {"error"}``); a status without them is still a status."""
        if self.error is not None:
            unread = {"error": self.error}
            return [(trial, dataclasses.replace(status, cluster=unread)) for trial, status in statuses]
        return [
            (trial, dataclasses.replace(status, cluster={"pod": pod.state, "reason": pod.reason}))
            if (pod := self.pods.get(trial.index)) is not None
            else (trial, status)
            for trial, status in statuses
        ]


def read_cluster(store: ExperimentStore, sweep: str, outputs: dict[str, Any]) -> ClusterReading:
    """The sweep's pods, events and Jobs: three API calls for all its trials."""
    from tfcli.gke.kube import kube_for
    from tfcli.gke.pod_states import trial_pods

    namespace = str(outputs.get("namespace") or f"tfcli-{sweep}")
    try:
        kube = kube_for(outputs, store.project)
        pods = trial_pods(
            kube.pods(namespace, f"app.kubernetes.io/instance={sweep},app.kubernetes.io/component=trial"),
            kube.events(namespace),
        )
        job = sweep_job.trials_job(kube.jobs(namespace))
    except TfcliError as error:
        return ClusterReading({}, None, error.message.splitlines()[0])
    slots = sweep_job.SlotTable.of(outputs, len(outputs.get("trials") or []))
    return ClusterReading(slots.by_trial(pods), None if job is None else slots.reading(job), slots=slots)


def trial_status(store: ExperimentStore, experiment: ExperimentDir, *, stacks: Stacks) -> Status:
    """``status -e <sweep>-k`` of a trial of a GKE sweep: read from the sweep's bucket (its download once stopped)."""
    from tfcli.sweeps.store import get_sweep

    sweep = get_sweep(store, str(gke_of(experiment.run_record()).sweep))
    trial = next(trial for trial in sweep.trials() if trial.name == experiment.name)
    state = stacks.state(sweep.name)
    if state.deployed:
        (reading,) = read_deployed(store.project, state.outputs, [trial])
    else:
        reading = read_downloaded(experiment, trial)
    return reading.status()
