"""Why an experiment's pods are where they are, in words: the cluster half of ``experiment status`` and ``list``.

Reads the API's own documents (pods, the namespace's events, Jobs; see :mod:`tfcli.gke.kube`) and says, for the
learner (and the env workers of a distributed run):

- pending, with the scheduler's and the cluster autoscaler's reason: no node with a free GPU yet and a scale-up under
  way (``TriggeredScaleUp``), no scale-up possible (``NotTriggerScaleUp``: the pool is at ``max_nodes``), a scale-up
  that failed (``FailedScaleUp``: GCE quota, or the zone is out of that GPU), a taint no node of the pod tolerates;
- its image cannot be pulled (``ImagePullBackOff``/``ErrImagePull``, with the registry's message);
- starting, running (with how often it was preempted and resumed), completed;
- failed, with the trainer's last error line: the containers' ``terminationMessagePolicy: FallbackToLogsOnError``
  (``infra/manifests.py``) makes a failed container's last log lines its termination message.

A pod of a Job that GKE took away (spot reclaim, node shutdown, drain: a ``DisruptionTarget`` condition, or the
trainer's 143 after SIGTERM) counts as a preemption; the Job starts a new pod, which resumes from the checkpoint.
Only pods Kubernetes still lists are counted (it forgets the pods of deleted nodes after a while).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from trainer.kernel.spec.outcomes import EXIT_COST_LIMIT, EXIT_PAUSED

ROLE_LABEL = "app.kubernetes.io/component"
INDEX_LABEL = "batch.kubernetes.io/job-completion-index"
IMAGE_ERRORS = ("ImagePullBackOff", "ErrImagePull", "InvalidImageName", "ErrImageNeverPull")
# The scheduler's taint plugin: before Kubernetes 1.34 ``node(s) had untolerated taint {nvidia.com/gpu: present}``,
# from 1.34 on (kubernetes PR 134740, cherry-picked into 1.34's patch releases) ``node(s) had untolerated taint(s)``:
# taint keys and values may be sensitive, so the pod's status no longer names them. Both mean the same; only the old
# one names the taint.
UNTOLERATED = re.compile(r"node\(s\) had untolerated taint(?:\(s\)|s)?(?: (\{[^}]*\}))?")


@dataclass(frozen=True)
class PodState:
    """One pod in words: ``state`` is a word (pending, image-pull-error, starting, running, completed, failed,
    preempted, paused), ``reason`` the sentence that explains it."""

    name: str
    role: str
    state: str
    reason: str = ""
    restarts: int = 0


@dataclass(frozen=True)
class ClusterView:
    """The experiment's pods: the current learner's (and workers') states and the learner's preemptions."""

    learner: PodState | None
    workers: tuple[PodState, ...] = ()
    preemptions: int = 0
    jobs: dict[str, str] = field(default_factory=dict)  # Job role -> Complete | Failed: reason | Suspended

    def summary(self) -> str:
        """One line: the learner's state and reason, preemptions, and workers that are not running."""
        if self.learner is None:
            failed = [f"{role} Job {state}" for role, state in self.jobs.items() if state.startswith("Failed")]
            return "; ".join(failed) or "no learner pod yet"
        parts = [f"learner {self.learner.state}" + (f": {self.learner.reason}" if self.learner.reason else "")]
        if self.preemptions:
            times = "once" if self.preemptions == 1 else f"{self.preemptions} times"
            parts.append(f"preempted {times} and resumed from its checkpoint")
        waiting = [w for w in self.workers if w.state not in ("running", "completed")]
        if waiting:
            first = waiting[0]
            parts.append(
                f"{len(waiting)} of {len(self.workers)} env workers {first.state}"
                + (f": {first.reason}" if first.reason else "")
            )
        return "; ".join(parts)

    def brief(self) -> str:
        """A few words for ``list``: the learner's state and its preemptions (``status`` says why)."""
        if self.learner is None:
            return "no learner pod"
        return self.learner.state + (f", preempted {self.preemptions}x" if self.preemptions else "")

    def as_json(self) -> dict[str, Any]:
        return {
            "summary": self.summary(),
            "brief": self.brief(),
            "learner": None if self.learner is None else vars(self.learner),
            "workers": [vars(worker) for worker in self.workers],
            "preemptions": self.preemptions,
            "jobs": self.jobs,
        }


def _condition(pod: dict[str, Any], kind: str) -> dict[str, Any] | None:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == kind:
            return dict(condition)
    return None


def _container_statuses(pod: dict[str, Any]) -> list[dict[str, Any]]:
    return list((pod.get("status") or {}).get("containerStatuses") or [])


def _terminated(pod: dict[str, Any], container: str) -> dict[str, Any] | None:
    for status in _container_statuses(pod):
        if status.get("name") == container:
            state = status.get("state") or {}
            return state.get("terminated") or (status.get("lastState") or {}).get("terminated")
    return None


def last_error_line(message: str) -> str:
    """The trainer's ``error: ...`` line of a termination message (the log's last lines), else its last line."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:") or "Error" in line.split(":", 1)[0]]
    return (errors or lines or [""])[-1]


def _events_of(pod: dict[str, Any], events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    name = pod["metadata"]["name"]
    mine = [
        event
        for event in events
        if (event.get("involvedObject") or {}).get("kind") == "Pod" and event["involvedObject"].get("name") == name
    ]
    return sorted(mine, key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "")


def _unschedulable(message: str, events: list[dict[str, Any]]) -> str:
    """The scheduler's refusal, completed by what the cluster autoscaler did about it (its newest event)."""
    autoscaler = [e for e in events if e.get("reason") in ("TriggeredScaleUp", "NotTriggerScaleUp", "FailedScaleUp")]
    latest = autoscaler[-1] if autoscaler else None
    gpu = "nvidia.com/gpu" in message
    what = "a node with a free GPU" if gpu else "a node with room for it"
    if latest is not None and latest["reason"] == "FailedScaleUp":
        text = str(latest.get("message", ""))
        if "quota" in text.lower():
            return f"no {what.removeprefix('a ')}: adding a node failed, the GCP quota is too low ({text})"
        if "out of resources" in text.lower() or "stockout" in text.lower():
            return f"no {what.removeprefix('a ')}: adding a node failed, the zone has none left ({text})"
        return f"no {what.removeprefix('a ')}: adding a node failed ({text})"
    if latest is not None and latest["reason"] == "TriggeredScaleUp":
        return f"waiting for {what}: the cluster autoscaler is adding one ({latest.get('message', '')})"
    if latest is not None and latest["reason"] == "NotTriggerScaleUp":
        text = str(latest.get("message", ""))
        if "max node group size reached" in text:
            return (
                f"no {what.removeprefix('a ')}, and its node pool is at its maximum size (the cluster's max_nodes): "
                f"{text}"
            )
        return f"unschedulable, and the cluster autoscaler cannot add a node for it: {text}"
    if taint := UNTOLERATED.search(message):
        named = f" {taint.group(1)}" if taint.group(1) else ""
        return f"unschedulable: the nodes with room have a taint the pod does not tolerate{named} ({message})"
    if gpu:
        return f"waiting for {what} (no GPU node yet; the autoscaler has not acted): {message}"
    return f"unschedulable: {message}"


def pod_state(pod: dict[str, Any], events: list[dict[str, Any]]) -> PodState:
    """One pod's state and the reason for it."""
    metadata = pod.get("metadata") or {}
    status = pod.get("status") or {}
    role = str((metadata.get("labels") or {}).get(ROLE_LABEL, "pod"))
    container = "env-worker" if role == "env-worker" else role
    restarts = sum(int(c.get("restartCount", 0)) for c in _container_statuses(pod))
    name = str(metadata.get("name", "?"))
    phase = status.get("phase")

    def state(word: str, reason: str = "") -> PodState:
        return PodState(name, role, word, reason, restarts)

    disruption = _condition(pod, "DisruptionTarget")
    if phase == "Succeeded":
        return state("completed")
    if phase == "Failed":
        terminated = _terminated(pod, container) or {}
        if disruption is not None and disruption.get("status") == "True":
            return state("preempted", str(disruption.get("message") or disruption.get("reason") or ""))
        if status.get("reason") in ("Terminated", "Shutdown", "NodeShutdown"):
            return state("preempted", str(status.get("message") or status.get("reason")))
        code = terminated.get("exitCode")
        if code == EXIT_PAUSED:
            return state("preempted", "stopped by SIGTERM after a checkpoint (a pause, a drain or a spot reclaim)")
        if code == EXIT_COST_LIMIT:
            return state("paused", last_error_line(str(terminated.get("message", ""))) or "max_cost reached")
        line = last_error_line(str(terminated.get("message", "")))
        return state("failed", line or f"exit code {code}, {terminated.get('reason', 'no message')}")
    for container_status in _container_statuses(pod):
        waiting = (container_status.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") in IMAGE_ERRORS:
            image = container_status.get("image", "")
            return state("image-pull-error", f"cannot pull {image}: {waiting.get('message', waiting['reason'])}")
    if phase == "Pending":
        scheduled = _condition(pod, "PodScheduled")
        if scheduled is not None and scheduled.get("status") == "False":
            return state("pending", _unschedulable(str(scheduled.get("message", "")), _events_of(pod, events)))
        waiting = [((c.get("state") or {}).get("waiting") or {}).get("reason") for c in _container_statuses(pod)]
        return state("starting", ", ".join(w for w in waiting if w) or "scheduled, its containers are starting")
    if phase == "Running":
        return state("running")
    return state(str(phase or "unknown").lower())


def _created(pod: dict[str, Any]) -> str:
    return str((pod.get("metadata") or {}).get("creationTimestamp") or "")


def _job_state(job: dict[str, Any]) -> str:
    if (job.get("spec") or {}).get("suspend"):
        return "Suspended"
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition.get("status") != "True":
            continue
        if condition.get("type") == "Complete":
            return "Complete"
        if condition.get("type") == "Failed":
            return f"Failed: {condition.get('reason', '')} {condition.get('message', '')}".strip()
    return "Active"


def cluster_view(pods: list[dict[str, Any]], events: list[dict[str, Any]], jobs: list[dict[str, Any]]) -> ClusterView:
    """The experiment's state from its namespace's pods, events and Jobs."""
    learners = sorted(
        (p for p in pods if (p["metadata"].get("labels") or {}).get(ROLE_LABEL) == "learner"), key=_created
    )
    states = [pod_state(pod, events) for pod in learners]
    preemptions = sum(1 for s in states[:-1] if s.state == "preempted")
    workers: dict[str, dict[str, Any]] = {}
    for pod in sorted(
        (p for p in pods if (p["metadata"].get("labels") or {}).get(ROLE_LABEL) == "env-worker"), key=_created
    ):
        workers[(pod["metadata"].get("labels") or {}).get(INDEX_LABEL, pod["metadata"]["name"])] = pod  # newest
    job_states = {
        str(
            ((job.get("metadata") or {}).get("annotations") or {}).get("tfcli/job", job["metadata"]["name"])
        ): _job_state(job)
        for job in jobs
    }
    return ClusterView(
        learner=states[-1] if states else None,
        workers=tuple(pod_state(pod, events) for _, pod in sorted(workers.items())),
        preemptions=preemptions,
        jobs=job_states,
    )


def trial_pods(pods: list[dict[str, Any]], events: list[dict[str, Any]]) -> dict[int, PodState]:
    """A sweep's pods on GKE: the newest pod of each completion index (slot) of its Indexed Job (a preempted pod's
    successor, not the pod it replaced), in words; tfcli/gke/sweep_job.py ``SlotTable`` says whose trial it runs."""
    newest: dict[int, dict[str, Any]] = {}
    for pod in sorted(pods, key=_created):
        labels = pod["metadata"].get("labels") or {}
        index = labels.get(INDEX_LABEL) or (pod["metadata"].get("annotations") or {}).get(INDEX_LABEL)
        if labels.get(ROLE_LABEL) == "trial" and str(index).isdigit():
            newest[int(str(index))] = pod
    return {index: pod_state(pod, events) for index, pod in newest.items()}
