"""``tfcli experiment logs`` on GKE: the learner's (or one env worker's) log, streamed from the cluster.

The pod is the newest of its role (a preempted learner's successor, not the pod it replaced); a pod that has not
started has no log yet, and the error says why it waits (:mod:`tfcli.gke.pod_states`). A trial ``<sweep>-k`` of a
GKE sweep is the pod of the sweep's Indexed Job whose slot (completion index) runs it (container ``trial``).
"""

from __future__ import annotations

import codecs
from collections.abc import Callable
from typing import Any

from tfcli.errors import TfcliError
from tfcli.experiments.store import ExperimentDir
from tfcli.gke.stacks import Stacks
from tfcli.gke.sweep_job import SlotTable
from tfcli.project import ProjectDir


def selector(experiment: str, worker: int | None) -> str:
    """The label selector of the learner's pods, or of env worker ``worker``'s."""
    base = f"app.kubernetes.io/instance={experiment}"
    if worker is None:
        return f"{base},app.kubernetes.io/component=learner"
    return f"{base},app.kubernetes.io/component=env-worker,batch.kubernetes.io/job-completion-index={worker}"


def trial_selector(sweep: str, index: int) -> str:
    """The label selector of the pods of slot ``index`` of a sweep's Indexed Job (Kubernetes labels each pod with
    its completion index)."""
    return (
        f"app.kubernetes.io/instance={sweep},app.kubernetes.io/component=trial,"
        f"batch.kubernetes.io/job-completion-index={index}"
    )


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

    sweep = experiment.run_record().sweep
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
        slot = SlotTable.of(outputs, len(outputs.get("trials") or [])).slot(
            int(experiment.name.removeprefix(f"{sweep}-"))
        )
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
    # The chunks are cut by size, not by character: a decoder that keeps an incomplete UTF-8 sequence for the next
    # chunk writes it whole (decoding each chunk alone would turn both halves into U+FFFD).
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for chunk in kube.log_chunks(namespace, pod["metadata"]["name"], container, follow=follow, tail=tail):
        if text := decoder.decode(chunk):
            write(text)
    if rest := decoder.decode(b"", final=True):
        write(rest)
