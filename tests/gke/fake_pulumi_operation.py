"""``pulumi up`` and ``pulumi destroy`` of the fake CLI (tests/gke/fake_pulumi.py, whose docstring says what it
models): the engine events, the image builds, the Kubernetes objects applied as pulumi-kubernetes does, the history
and outputs. A module of its own, imported only by those two commands, so that the many quick calls the Automation
API makes (``version``, ``stack select``, ``config``, ``stack output``) start without it (~0.1 s each, thousands in
the suite)."""

from __future__ import annotations

import sys
import time
from typing import Any

from fake_k8s_provider import Cluster, Refused, render_objects
from fake_pulumi_events import EventLog
from fake_pulumi_images import DYNAMIC, BuildError, image_outputs, is_image_stack, pinned, up_images
from fake_pulumi_program import outputs_for, resources_for, urn
from fake_pulumi_stack import fail, injected, load, read_config, save, stack_file, unlock

TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.000Z"
K8S_TYPES = {"Job": "kubernetes:batch/v1:Job", "ConfigMap": "kubernetes:core/v1:ConfigMap",
             "Namespace": "kubernetes:core/v1:Namespace", "ServiceAccount": "kubernetes:core/v1:ServiceAccount",
             "Secret": "kubernetes:core/v1:Secret", "Service": "kubernetes:core/v1:Service"}  # fmt: skip


def cluster_of(record: dict[str, Any]) -> Cluster:
    return Cluster(dict(record.get("objects") or {}), list(record.get("lingering") or []))


def keep_cluster(record: dict[str, Any], cluster: Cluster) -> None:
    """The objects as the state keeps them, and the Jobs and ConfigMaps' data that the Job controller stand-in and
    tests/gke/played_sweep.py read."""
    record["objects"] = cluster.objects
    record["lingering"] = cluster.lingering
    record.setdefault("k8s_log", []).extend(cluster.log)
    record["jobs"] = [obj for obj in cluster.objects.values() if obj["kind"] == "Job"]
    record["config_maps"] = {
        obj["metadata"]["name"]: dict(obj.get("data") or {})
        for obj in cluster.objects.values()
        if obj["kind"] == "ConfigMap"
    }


def play_the_trainer(stack: str, outputs: dict[str, Any]) -> None:
    """What the trainer does when its Job is suspended: checkpoint and write result.json (``control.json``'s
    ``on_suspend: {stack: {object: text}}``), into the bucket on the GCS emulator the tests run."""
    files = load("control.json", {}).get("on_suspend", {}).get(stack)
    if not files:
        return
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage

    bucket = storage.Client(project="test", credentials=AnonymousCredentials()).bucket(outputs["bucket"])
    prefix = outputs.get("experiment") or outputs["sweep"]  # a sweep's trials write <sweep>/<trial>/...
    for name, text in files.items():
        bucket.blob(f"{prefix}/{name}").upload_from_string(text)


def history_entry(kind: str, result: str, changes: dict[str, int], number: int) -> dict[str, Any]:
    now = time.strftime(TIME_FORMAT, time.gmtime())
    return {
        "version": number,
        "kind": kind,
        "startTime": now,
        "endTime": now,
        "message": "",
        "environment": {"exec.kind": "auto.local"},
        "config": {},
        "result": result,
        "resourceChanges": changes,
    }


def operation(kind: str, stack: str, options: dict[str, list[str]], state: dict[str, Any]) -> None:
    """``up`` or ``destroy``."""
    record = state["stacks"][stack]
    if "--yes" not in options and "-y" not in options:
        fail("error: --yes or --skip-preview must be passed in to proceed when running in non-interactive mode")
    unlock(stack, record)
    log = EventLog((options.get("--event-log") or [None])[-1])
    _, config = read_config(stack)
    log.emit(preludeEvent={"config": {key: str(value) for key, value in config.items()}})
    download = {"type": "plugin-download", "id": "gcp", "message": "gcp", "received": 1, "total": 1, "done": True}
    log.emit(progressEvent=download)  # a kind of event the SDK does not model: it must pass unharmed
    problem = injected(kind, stack)
    cluster = cluster_of(record)
    steps: dict[str, str] = {}
    if problem is None and kind == "up" and is_image_stack(config):  # fake_pulumi_images.py: the builds
        try:
            steps = up_images(record, config, log, stack)
        except BuildError as failed:
            save("state.json", state)  # a build that succeeded before the failure stays built
            problem = {"stderr": "error: update failed", "diagnostic": f"Exception: {failed}",
                       "urn": urn(stack, DYNAMIC, failed.name)}  # fmt: skip
    elif problem is None and kind == "up":
        try:
            steps = cluster.apply(pinned(render_objects(stack, config, stack_file(stack)), config, state))
        except LookupError as missing:  # the image stack a StackReference reads is not there
            problem = {"stderr": f"error: {missing}", "diagnostic": str(missing)}
        except Refused as refused:  # as pulumi-kubernetes reports the API server's answer, or its await's
            keep_cluster(record, cluster)  # what was done before the failure stays done
            job = urn(stack, "kubernetes:batch/v1:Job", f"{stack}-{refused.resource}")
            problem = {"stderr": "error: update failed", "diagnostic": f"resource job failed: {refused}", "urn": job}
    if problem is not None:
        if diagnostic := problem.get("diagnostic"):
            failing = problem.get("urn") or urn(stack, "gcp:container/cluster:Cluster", f"{stack}-cluster")
            log.emit(diagnosticEvent={"urn": failing, "prefix": "error: ", "message": diagnostic + "\n",
                                      "color": "never", "severity": "error"})  # fmt: skip
            failed = {"op": "create", "urn": failing, "type": failing.split("::")[2], "old": None,
                      "new": None, "detailedDiff": None, "provider": ""}  # fmt: skip
            log.emit(resOpFailedEvent={"metadata": failed, "status": 1, "steps": 1})
        log.emit(summaryEvent={"maybeCorrupt": False, "durationSeconds": 1, "resourceChanges": {},
                               "PolicyPacks": {}, "isPreview": False})  # fmt: skip
        log.emit(cancelEvent={})
        log.close()
        record["history"].insert(0, history_entry(kind if kind == "destroy" else "update", "failed", {}, 0))
        save("state.json", state)
        sys.stdout.write(problem.get("stdout", ""))
        fail(problem.get("stderr", "error: update failed"), int(problem.get("code", 255)))
    if kind == "up":
        previous = {tuple(item) for item in record.get("resources", [])}
        resources = resources_for(stack, config)
        changes: dict[str, int] = {}
        for type_, name in resources:
            op = "same" if (type_, name) in previous else "create"
            if type_ in K8S_TYPES.values() and op == "same":
                op = next((step for key, step in steps.items() if name.endswith(f"-{key}")), op)
            if type_ == DYNAMIC:  # a trainer build: what its provider's diff said
                op = steps.get(name, op)
            changes[op] = changes.get(op, 0) + 1
            log.step(stack, op, type_, name, begun=type_ == DYNAMIC and op != "same")
        record["resources"] = [list(item) for item in resources]
        record["outputs"] = image_outputs(record, config) if is_image_stack(config) else outputs_for(stack, config)
        keep_cluster(record, cluster)
    else:
        changes = {"delete": len(record.get("resources", []))}
        for type_, name in reversed([tuple(item) for item in record.get("resources", [])]):
            log.step(stack, "delete", type_, name)
        cluster.destroy()
        keep_cluster(record, cluster)
        record["resources"] = []
        record["outputs"] = {}
    if kind == "up" and record["outputs"].get("suspended"):
        play_the_trainer(stack, record["outputs"])
    log.emit(summaryEvent={"maybeCorrupt": False, "durationSeconds": 1, "resourceChanges": changes,
                           "PolicyPacks": {}, "isPreview": False})  # fmt: skip
    log.emit(cancelEvent={})
    log.close()
    record["history"].insert(0, history_entry("update" if kind == "up" else "destroy", "succeeded", changes, 0))
    for number, entry in enumerate(reversed(record["history"]), start=1):
        entry["version"] = number
    save("state.json", state)
    sys.stdout.write(f"{'Updating' if kind == 'up' else 'Destroying'} ({stack}):\nResources:\n    {changes}\n")
