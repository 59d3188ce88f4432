"""``tfcli experiment logs`` on GKE: the learner's (or one env worker's) log, streamed from the cluster.

The pod is the newest of its role (a preempted learner's successor, not the pod it replaced); a pod that has not
started has no log yet, and the error says why it waits (:mod:`tfcli.gke.pod_states`). A trial ``<sweep>-k`` of a
GKE sweep is the pod of the sweep's Indexed Job whose slot (completion index) runs it (container ``trial``); in an
early-stopped sweep, whose pods are workers that train any trial in turn, it is that trial's sections of every
worker's log (:mod:`trainer.trial_sections`), followed in the worker that trains it now.
"""

from __future__ import annotations

import codecs
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from tfcli.experiments.store import ExperimentDir
from tfcli.gke.handle import gke_of
from tfcli.gke.stacks import Stacks
from tfcli.gke.sweep_job import SlotTable
from tfcli.project import ProjectDir
from trainer.kernel.errors import TfcliError
from trainer.trial_sections import TrialSections


def selector(experiment: str, worker: int | None) -> str:
    """The label selector of the learner's pods, or of env worker ``worker``'s."""
    base = f"app.kubernetes.io/instance={experiment}"
    if worker is None:
        return f"{base},app.kubernetes.io/component=learner"
    return f"{base},app.kubernetes.io/component=env-worker,batch.kubernetes.io/job-completion-index={worker}"


def trial_selector(sweep: str, index: int) -> str:
    """The label selector of the pods of slot ``index`` of a sweep's Indexed Job (Kubernetes labels each pod with
    its completion index)."""
    return f"{worker_selector(sweep)},batch.kubernetes.io/job-completion-index={index}"


def worker_selector(sweep: str) -> str:
    """The label selector of an early-stopped sweep's worker pods (every slot's)."""
    return f"app.kubernetes.io/instance={sweep},app.kubernetes.io/component=trial"


def stream_logs(
    experiment: ExperimentDir,
    project: ProjectDir,
    *,
    follow: bool,
    worker: int | None,
    tail: int | None,
    write: Callable[[str], None],
    stacks: Stacks,
) -> None:
    """Write the pod's log; with ``follow``, keep writing until its container ends."""
    from tfcli.gke.kube import kube_for
    from tfcli.gke.pod_states import pod_state

    sweep = gke_of(experiment.run_record()).sweep
    stack = str(sweep or experiment.name)
    if sweep and worker is not None:
        raise TfcliError("--worker is for distributed runs; a sweep's trials on GKE run in one pod each")
    state = stacks.state(stack)
    if not state.deployed:
        raise TfcliError(
            f"experiment '{experiment.name}' is not deployed on GKE, so it has no logs there",
            hint=f"`tfcli experiment download -e {experiment.name}` copied its results when it was stopped",
        )
    outputs: dict[str, Any] = state.outputs
    namespace = str(outputs.get("namespace") or f"tfcli-{stack}")
    kube = kube_for(outputs, project)
    if sweep:
        who, container = f"trial {experiment.name}", "trial"
        slots = SlotTable.of(outputs, len(outputs.get("trials") or []))
        if slots.workers:
            return _stream_trial_sections(kube, namespace, stack, experiment.name, follow, tail, write)
        slot = slots.slot(int(experiment.name.removeprefix(f"{sweep}-")))
        if slot is None:
            raise TfcliError(
                f"trial {experiment.name} has no pod in its sweep's Job: a resume left it as it ended",
                hint=f"`tfcli experiment status -e {experiment.name}` says how it ended",
            )
        wanted = trial_selector(stack, slot)
    else:
        who = "the learner" if worker is None else f"env worker {worker}"
        container = "learner" if worker is None else "env-worker"
        wanted = selector(experiment.name, worker)
    pods = kube.pods(namespace, wanted)
    if not pods:
        hint = f"`tfcli experiment status -e {experiment.name}` says what it waits for"
        if worker is not None and outputs.get("runMode") != "distributed":
            hint = "--worker is for distributed runs (their env workers); leave it out for the learner's log"
        raise TfcliError(f"{who} of '{stack}' has no pod (yet)", hint=hint)
    pod = max(pods, key=lambda p: str(p["metadata"].get("creationTimestamp") or ""))
    current = pod_state(pod, kube.events(namespace) if pod["status"].get("phase") == "Pending" else [])
    if current.state in ("pending", "image-pull-error"):
        raise TfcliError(f"{who} has no log yet: its pod is {current.state}: {current.reason}")
    for text in _log_text(kube, namespace, pod["metadata"]["name"], container, follow=follow, tail=tail):
        write(text)


def _log_text(kube: Any, namespace: str, pod: str, container: str, *, follow: bool, tail: int | None) -> Iterator[str]:
    """A container's log as text, piece by piece as it arrives."""
    # The chunks are cut by size, not by character: a decoder that keeps an incomplete UTF-8 sequence for the next
    # chunk writes it whole (decoding each chunk alone would turn both halves into U+FFFD).
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for chunk in kube.log_chunks(namespace, pod, container, follow=follow, tail=tail):
        if text := decoder.decode(chunk):
            yield text
    if rest := decoder.decode(b"", final=True):
        yield rest


def _stream_trial_sections(
    kube: Any, namespace: str, sweep: str, trial: str, follow: bool, tail: int | None, write: Callable[[str], None]
) -> None:
    """A trial of an early-stopped sweep: its sections of each worker pod's log, oldest pod first (the last ``tail``
    lines of them all); with ``follow``, then the rest of the section still open in a running worker."""
    pods = sorted(
        (pod for pod in kube.pods(namespace, worker_selector(sweep)) if pod["status"].get("phase") != "Pending"),
        key=lambda pod: str(pod["metadata"].get("creationTimestamp") or ""),
    )
    lines: deque[str] = deque(maxlen=tail)
    training: tuple[str, int] | None = None  # the running pod whose log ends inside the trial, and its lines so far
    for pod in pods:
        name, sections, seen = pod["metadata"]["name"], TrialSections(trial), 0
        for text in _log_text(kube, namespace, name, "trial", follow=False, tail=None):
            kept = sections.feed(text)
            seen += len(kept)
            lines.extend(kept)
        lines.extend(sections.finish())
        if sections.inside and pod["status"].get("phase") == "Running":
            training = (name, seen)
    if not lines and training is None:
        raise TfcliError(
            f"trial {trial} has not been trained by any of the sweep's workers yet",
            hint=f"`tfcli experiment status -e {trial}` says where it stands",
        )
    write("".join(lines))
    if follow and training is not None:
        name, seen = training
        sections = TrialSections(trial)
        for text in _log_text(kube, namespace, name, "trial", follow=True, tail=None):
            for line in sections.feed(text):
                if seen:
                    seen -= 1  # written above
                else:
                    write(line)
        if not seen:
            write("".join(sections.finish()))
