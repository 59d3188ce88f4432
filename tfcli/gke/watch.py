"""The cluster half of a GKE experiment's status: its pods' state (:mod:`tfcli.gke.pod_states`) and its cost so far
(:mod:`tfcli.gke.cost`), read through the Kubernetes API. A status without them is still a status: a stack without a
kubeconfig output says nothing here, and a cluster that cannot be read says why in ``cluster["error"]``."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any

from tfcli.experiments.spec_view import SpecView
from tfcli.experiments.status import Status
from tfcli.project import ProjectDir
from trainer.kernel.errors import TfcliError


def observe(status: Status, outputs: dict[str, Any], project: ProjectDir, spec: SpecView) -> Status:
    """``status`` with its ``cluster`` and ``cost`` filled in (and ``failed`` when the learner's Job failed)."""
    if not outputs.get("kubeconfig"):
        return status
    from tfcli.gke.cost import Counted, accrued_cost, billing_now, handed_allowance, handed_price
    from tfcli.gke.kube import kube_for
    from tfcli.gke.pod_states import cluster_view

    namespace = str(outputs.get("namespace") or f"tfcli-{status.name}")
    try:
        kube = kube_for(outputs, project)
        pods = kube.pods(namespace, f"app.kubernetes.io/instance={status.name}")
        view = cluster_view(pods, kube.events(namespace), kube.jobs(namespace))
        cost = billing = None
        if not outputs.get("sharedClusterStack"):
            created = (kube.namespace("kube-system").get("metadata") or {}).get("creationTimestamp")
            nodes = kube.nodes()
            cost = accrued_cost(nodes, cluster_created=created, now=datetime.now(UTC))
            billing = billing_now(nodes, own_cluster=True)
    except TfcliError as error:
        return dataclasses.replace(status, cluster={"error": error.message.splitlines()[0]})
    changes: dict[str, Any] = {"cluster": view.as_json()}
    if cost is not None:
        changes["cost"] = {**cost.as_json(), **(billing.as_json() if billing else {}), "max_cost": spec.max_cost}
        if (price := handed_price(pods)) is not None:  # what the trainer counts against max_cost
            counted = Counted(price, status.wall_seconds or 0.0, status.starts, handed_allowance(pods))
            changes["cost"] |= counted.as_json()
    learner_job = view.jobs.get("learner", "")
    if status.state == "running" and learner_job.startswith("Failed"):
        changes["state"] = "failed"
        changes["detail"] = status.detail or (view.learner.reason if view.learner else learner_job)
    return dataclasses.replace(status, **changes)
