"""The Kubernetes Job controller's failure semantics, as a stand-in that fails Jobs the way the real one does.

Kubernetes 1.33 (``pkg/controller/job``, ``pkg/apis/batch/validation``), for what tfcli's Jobs use:

- admission (:func:`validate`, from tests/job_admission.py): the cross-field rules of ``ValidateJobSpec`` a schema
  cannot express — a ``podFailurePolicy`` needs ``restartPolicy: Never``; ``FailIndex`` needs
  ``backoffLimitPerIndex``; ``backoffLimitPerIndex`` and ``maxFailedIndexes`` need Indexed mode;
  ``maxFailedIndexes`` needs ``backoffLimitPerIndex`` and at most ``completions``; exit-code values unique, ordered,
  no 0 with ``In``, a ``containerName`` of the template. :func:`validate_update` adds ``ValidateJobSpecUpdate``:
  only ``parallelism``, ``suspend``, ``maxFailedIndexes`` (and the backoff limits) change in place.
- the controller (:class:`JobController`): at most ``parallelism`` pods, lowest pending index first; a failed pod is
  matched against the ``podFailurePolicy`` rules in order (the first match wins; none is ``Count``): ``FailJob``
  marks the Job failed and terminates every running pod (no pending index starts); ``FailIndex`` fails that index;
  ``Ignore`` replaces the pod without counting it; ``Count`` counts against ``backoffLimitPerIndex`` (then the index
  fails past it) or the Job's ``backoffLimit`` (then the Job fails, ``BackoffLimitExceeded``). More failed indexes
  than ``maxFailedIndexes`` fail the Job at once (``MaxFailedIndexesExceeded``); once every index has completed or
  failed, the Job is ``Complete`` or, with failed indexes, ``Failed`` (``FailedIndexes``). ``status`` carries
  ``completedIndexes``, ``failedIndexes`` (with ``backoffLimitPerIndex`` only), the counters, and the
  ``FailureTarget``/``Failed`` or ``SuccessCriteriaMet``/``Complete`` conditions with upstream's reasons and messages.

Time is in ticks: each pod runs its :class:`Outcome`'s ``ticks``. The controller's retry back-off (10 s doubling to
10 min) only delays pods and is not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from job_admission import MUTABLE as MUTABLE
from job_admission import Invalid as Invalid
from job_admission import validate as validate
from job_admission import validate_update as validate_update

INDEX_KEY = "batch.kubernetes.io/job-completion-index"
FAILURE_COUNT = "batch.kubernetes.io/job-index-failure-count"
IGNORED_COUNT = "batch.kubernetes.io/job-index-ignored-failure-count"
DEFAULT_BACKOFF_LIMIT = 6
NO_LIMIT = 2**31 - 1  # the backoffLimit the API server defaults to when backoffLimitPerIndex is set


@dataclass(frozen=True)
class Outcome:
    """How one pod of an index ends: its container's exit code after ``ticks``, perhaps with a disruption."""

    exit_code: int = 0
    ticks: int = 1
    disrupted: bool = False  # the pod gets DisruptionTarget (a spot reclaim, a drain, a preemption)
    message: str = ""  # the container's termination message (the trainer's last lines)
    reason: str = ""  # the container's termination reason; "" means Completed / Error by the exit code


def index_ranges(indexes: set[int]) -> str:
    """``completedIndexes``/``failedIndexes`` as the controller writes them: ``"0,2-4,7"``."""
    parts, ordered = [], sorted(indexes)
    start = previous = None
    for index in [*ordered, None]:
        if start is not None and previous is not None and (index is None or index != previous + 1):
            parts.append(str(start) if start == previous else f"{start}-{previous}")
            start = None
        if index is not None and start is None:
            start = index
        previous = index
    return ",".join(parts)


@dataclass
class _Pod:
    index: int
    attempt: int
    outcome: Outcome
    started: int
    left: int
    ended: Outcome | None = None  # how it ended (the outcome, or a termination by the controller)
    failure_count: int = 0
    ignored_count: int = 0


@dataclass
class JobController:
    """One Job, its pods and its status, advanced a tick at a time (``script``: each index's pods, in order; an
    index whose script is used up succeeds)."""

    job: dict[str, Any]
    script: dict[int, list[Outcome]] = field(default_factory=dict)
    now: int = 0
    pods: list[_Pod] = field(default_factory=list)
    completed: set[int] = field(default_factory=set)
    failed_indexes: set[int] = field(default_factory=set)
    failure_counts: dict[int, int] = field(default_factory=dict)
    ignored_counts: dict[int, int] = field(default_factory=dict)
    failed_pods: int = 0
    counted_failures: int = 0
    conditions: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        validate(self.job)
        spec = self.job["spec"]
        self.completions = int(spec.get("completions", 1))
        self.per_index = spec.get("backoffLimitPerIndex")
        self.backoff_limit = spec.get("backoffLimit", NO_LIMIT if self.per_index is not None else DEFAULT_BACKOFF_LIMIT)
        self.used = {index: 0 for index in range(self.completions)}

    @property
    def spec(self) -> dict[str, Any]:
        return dict(self.job["spec"])

    @property
    def finished(self) -> bool:
        return any(c["type"] in ("Failed", "Complete") for c in self.conditions)

    def active(self) -> list[_Pod]:
        return [pod for pod in self.pods if pod.ended is None]

    def update(self, job: dict[str, Any]) -> None:
        """An in-place update of the Job (``kubectl apply`` of the same name): ``parallelism``, ``suspend``... as the
        API server allows it. pulumi-kubernetes updates only ``suspend`` so: it replaces a Job whose parallelism
        changes (tests/gke/fake_k8s_provider.py)."""
        validate_update(self.job, job)
        self.job = job

    def run(self, limit: int = 1000) -> None:
        while not self.finished and self.now < limit:
            self.tick()

    def tick(self) -> None:
        if self.finished:
            return
        self.now += 1
        if self.spec.get("suspend"):
            for pod in self.active():  # suspending deletes the active pods; that is no failure
                pod.ended = Outcome(143, message="deleted: the Job was suspended")
            return
        for pod in self.active():
            pod.left -= 1
            if pod.left <= 0:
                self._ended(pod, pod.outcome)
                if self.finished or any(c["type"] == "FailureTarget" for c in self.conditions):
                    break
        if any(c["type"] == "FailureTarget" for c in self.conditions):
            for pod in self.active():  # the controller deletes them: the trainer checkpoints on SIGTERM, exit 143
                pod.ended = Outcome(143, disrupted=True, message="terminated: the Job failed")
            self._condition("Failed", *self._target())
            return
        if len(self.completed) + len(self.failed_indexes) == self.completions:
            if self.failed_indexes:
                self._fail("FailedIndexes", "Job has failed indexes")
                self._condition("Failed", "FailedIndexes", "Job has failed indexes")
            else:
                self._condition("SuccessCriteriaMet", "CompletionsReached", "Reached expected number of succeeded pods")
                self._condition("Complete", "CompletionsReached", "Reached expected number of succeeded pods")
            return
        self._start_pods()

    def _target(self) -> tuple[str, str]:
        target = next(c for c in self.conditions if c["type"] == "FailureTarget")
        return target["reason"], target["message"]

    def _start_pods(self) -> None:
        busy = {pod.index for pod in self.active()}
        room = int(self.spec.get("parallelism", 1)) - len(busy)
        for index in range(self.completions):
            if room <= 0:
                break
            if index in busy or index in self.completed or index in self.failed_indexes:
                continue
            script = self.script.get(index, [])
            outcome = script[self.used[index]] if self.used[index] < len(script) else Outcome(0)
            self.used[index] += 1
            self.pods.append(
                _Pod(
                    index,
                    self.used[index],
                    outcome,
                    self.now,
                    outcome.ticks,
                    failure_count=self.failure_counts.get(index, 0),
                    ignored_count=self.ignored_counts.get(index, 0),
                )
            )
            room -= 1

    def _ended(self, pod: _Pod, outcome: Outcome) -> None:
        pod.ended = outcome
        if outcome.exit_code == 0 and not outcome.disrupted:
            self.completed.add(pod.index)
            return
        self.failed_pods += 1
        action, number, how = self._match(pod, outcome)
        if action == "Ignore":
            self.ignored_counts[pod.index] = self.ignored_counts.get(pod.index, 0) + 1
            return
        if action == "FailJob":
            self._fail("PodFailurePolicy", f"{how} matching FailJob rule at index {number}")
            return
        if action == "FailIndex":
            self.failed_indexes.add(pod.index)
        else:  # Count
            self.counted_failures += 1
            if self.per_index is not None:
                self.failure_counts[pod.index] = self.failure_counts.get(pod.index, 0) + 1
                if self.failure_counts[pod.index] > self.per_index:
                    self.failed_indexes.add(pod.index)
            elif self.counted_failures > self.backoff_limit:
                self._fail("BackoffLimitExceeded", "Job has reached the specified backoff limit")
                return
        most = self.spec.get("maxFailedIndexes")
        if most is not None and len(self.failed_indexes) > most:
            self._fail("MaxFailedIndexesExceeded", "Job has exceeded the specified maximal number of failed indexes")

    def _match(self, pod: _Pod, outcome: Outcome) -> tuple[str, int, str]:
        """The first podFailurePolicy rule the failed pod matches: (action, rule number, what matched)."""
        namespace = self.job["metadata"].get("namespace", "default")
        where = f"pod {namespace}/{self.pod_name(pod)}"
        container = self.job["spec"]["template"]["spec"]["containers"][0]["name"]
        for number, rule in enumerate((self.spec.get("podFailurePolicy") or {}).get("rules", [])):
            codes = rule.get("onExitCodes")
            if codes is not None and outcome.exit_code != 0 and codes.get("containerName") in (None, container):
                inside = outcome.exit_code in codes["values"]
                if inside == (codes["operator"] == "In"):
                    how = f"Container {container} for {where} failed with exit code {outcome.exit_code}"
                    return rule["action"], number, how
            for pattern in rule.get("onPodConditions", []):
                if (
                    pattern["type"] == "DisruptionTarget"
                    and outcome.disrupted
                    and pattern.get("status", "True") == "True"
                ):
                    return rule["action"], number, f"Pod {where} has condition DisruptionTarget"
        return "Count", -1, ""

    def _fail(self, reason: str, message: str) -> None:
        if not any(c["type"] == "FailureTarget" for c in self.conditions):
            self._condition("FailureTarget", reason, message)

    def _condition(self, kind: str, reason: str, message: str) -> None:
        stamp = self.timestamp(self.now)
        self.conditions.append(
            {
                "type": kind,
                "status": "True",
                "reason": reason,
                "message": message,
                "lastProbeTime": stamp,
                "lastTransitionTime": stamp,
            }
        )

    # What the API server serves.

    @staticmethod
    def timestamp(tick: int) -> str:
        return f"2026-11-25T08:{tick // 60:02d}:{tick % 60:02d}Z"

    def pod_name(self, pod: _Pod) -> str:
        return f"{self.job['metadata']['name']}-{pod.index}-{pod.attempt:05d}"

    def job_document(self) -> dict[str, Any]:
        status: dict[str, Any] = {
            "startTime": self.timestamp(0),
            "active": len(self.active()),
            "ready": len(self.active()),
            "succeeded": len(self.completed),
            "failed": self.failed_pods,
            "terminating": 0,
            "completedIndexes": index_ranges(self.completed),
            "uncountedTerminatedPods": {},
        }
        if self.per_index is not None:
            status["failedIndexes"] = index_ranges(self.failed_indexes)
        if self.conditions:
            status["conditions"] = list(self.conditions)
        if any(c["type"] == "Complete" for c in self.conditions):
            status["completionTime"] = self.timestamp(self.now)
        return {**self.job, "status": status}

    def pod_documents(self) -> list[dict[str, Any]]:
        return [self._pod_document(pod) for pod in self.pods]

    def _pod_document(self, pod: _Pod) -> dict[str, Any]:
        template = self.job["spec"]["template"]
        job_name = self.job["metadata"]["name"]
        labels = {
            **template["metadata"].get("labels", {}),
            INDEX_KEY: str(pod.index),
            "job-name": job_name,
            "batch.kubernetes.io/job-name": job_name,
        }
        annotations = {**template["metadata"].get("annotations", {}), INDEX_KEY: str(pod.index)}
        if self.per_index is not None:
            annotations[FAILURE_COUNT] = str(pod.failure_count)
            annotations[IGNORED_COUNT] = str(pod.ignored_count)
        container = template["spec"]["containers"][0]["name"]
        conditions = [{"type": "PodScheduled", "status": "True"}]
        if pod.ended is None:
            phase = "Running"
            state: dict[str, Any] = {"running": {"startedAt": self.timestamp(pod.started)}}
            conditions.append({"type": "Ready", "status": "True"})
        else:
            code = pod.ended.exit_code
            phase = "Succeeded" if code == 0 and not pod.ended.disrupted else "Failed"
            reason = pod.ended.reason or ("Completed" if code == 0 else "Error")
            state = {
                "terminated": {
                    "exitCode": code,
                    "reason": reason,
                    "message": pod.ended.message,
                    "startedAt": self.timestamp(pod.started),
                    "finishedAt": self.timestamp(self.now),
                }
            }
            if pod.ended.disrupted:
                conditions.append(
                    {
                        "type": "DisruptionTarget",
                        "status": "True",
                        "reason": "TerminationByKubelet",
                        "message": "Pod was terminated in response to imminent node shutdown.",
                    }
                )
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": self.pod_name(pod),
                "namespace": self.job["metadata"].get("namespace", "default"),
                "labels": labels,
                "annotations": annotations,
                "creationTimestamp": self.timestamp(pod.started),
            },
            "spec": template["spec"],
            "status": {
                "phase": phase,
                "conditions": conditions,
                "containerStatuses": [
                    {"name": container, "state": state, "ready": pod.ended is None, "restartCount": 0}
                ],
            },
        }
