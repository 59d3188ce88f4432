"""What pulumi-kubernetes 4.x does with the Kubernetes objects of an ``up``, for the fake ``pulumi``.

Written from pulumi/pulumi-kubernetes (provider v4, read at 94977969, July 2026):

- **diff** (``provider/pkg/provider/diff.go``, ``forceNewProperties``): a change to one of a kind's force-new fields
  replaces the object; every kind's are ``.metadata.name`` and ``.metadata.namespace``; ``batch/v1`` Job adds
  ``.spec.completions``, ``.spec.parallelism``, ``.spec.selector`` and ``.spec.template``; a ConfigMap's and a
  Secret's ``.data``/``.binaryData``/``.stringData`` (and a Secret's ``.type``) replace it unless the provider enables
  mutable ConfigMaps/Secrets (tfcli does not); a Service's ``.spec.clusterIP``. Any other change is an update.
- **delete before replace** (``provider/pkg/provider/provider.go``, ``Diff``): when the object is replaced, named
  (``metadata.name``, not auto-named), and keeps its name and namespace; or when the program asks for it
  (``deleteBeforeReplace``). Otherwise Pulumi creates the replacement first and deletes the old one after.
- **create** (``provider/pkg/await/await.go``, ``Creation``): retried only while the API server answers NotFound or
  NoMatch; ``409 AlreadyExists`` — what the API server answers for a name whose object is still being deleted —
  fails the resource, and the ``up``, at once. Then the ready condition (``provider/pkg/metadata/overrides.go``,
  ``ReadyCondition``): ``pulumi.com/skipAwait: "true"`` is ready at once; ``pulumi.com/waitFor`` (``jsonpath=`` or
  ``condition=``, or a JSON list of them, all of which must hold) replaces the built-in awaiter; otherwise a Job's
  built-in awaiter waits for ``Complete`` (``provider/pkg/await/job.go``): 10 minutes by default, and then the
  ``up`` fails — a training Job never completes that soon.
- **delete** (``Deletion``, ``DeletedCondition``, ``allowsSkipAwaitWithDelete``): foreground propagation by default
  (the Job object stays until its pods are gone, each with its ``terminationGracePeriodSeconds``, 30 s unless set);
  the delete is awaited unless the object is one of the legacy kinds that honour ``skipAwait`` on delete
  (Namespace, Pod, ReplicationController, DaemonSet, Deployment, StatefulSet, Job) and carries it. A delete not
  awaited leaves the object (and a Job's pods, still running) *lingering* for that grace period.

The "cluster" here is what the stack's state holds: the objects applied (by Pulumi resource) and those lingering, with
when they go; every step is logged (``k8s_log``) so that tests can see what ran beside what.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SKIP_AWAIT = "pulumi.com/skipAwait"
WAIT_FOR = "pulumi.com/waitFor"
JOB_ROLE = "tfcli/job"  # infra/pod_parts.py: a Job's Pulumi resource is its role; its name carries a digest
DEFAULT_GRACE = 30  # a pod's terminationGracePeriodSeconds when unset
DEFAULT_TIMEOUT = 600  # await.go: 10 minutes

_SELECTOR = [".spec.selector.matchExpressions", ".spec.selector.matchLabels"]
FORCE_NEW: dict[tuple[str, str], list[str]] = {
    ("batch/v1", "Job"): [".spec.completions", ".spec.parallelism", ".spec.selector", ".spec.template", *_SELECTOR],
    ("v1", "ConfigMap"): [".binaryData", ".data"],
    ("v1", "Secret"): [".type", ".stringData", ".data"],
    ("v1", "Service"): [".spec.clusterIP"],
}
METADATA_FORCE_NEW = [".metadata.name", ".metadata.namespace"]
SKIP_AWAIT_ON_DELETE = {
    ("v1", "Namespace"), ("v1", "Pod"), ("v1", "ReplicationController"), ("apps/v1", "DaemonSet"),
    ("apps/v1", "Deployment"), ("apps/v1", "StatefulSet"), ("batch/v1", "Job"),
}  # fmt: skip
PLURAL = {"Job": "jobs.batch", "ConfigMap": "configmaps", "Namespace": "namespaces",
          "ServiceAccount": "serviceaccounts", "Secret": "secrets", "Service": "services"}  # fmt: skip
ALREADY_EXISTS_HINT = "The resource already exists in the cluster."  # await.go's text after the API server's error


class Refused(Exception):
    """What fails the resource (and the ``up``): the API server's answer or the provider's await."""

    resource = ""  # the Pulumi resource that failed (its role: ``job-trials``), set by Cluster.apply


def at(obj: dict[str, Any], path: str) -> Any:
    """The value at ``.a.b`` (None when absent)."""
    value: Any = obj
    for part in path.strip(".").split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def replaces(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The force-new fields that differ (``forceNewProperties`` of the new object's kind)."""
    fields = METADATA_FORCE_NEW + FORCE_NEW.get((new["apiVersion"], new["kind"]), [])
    return [path for path in fields if at(old, path) != at(new, path)]


def delete_before_replace(old: dict[str, Any], new: dict[str, Any], *, program_asks: bool) -> bool:
    """``Diff``'s rule (named, same name and namespace), or the ``deleteBeforeReplace`` resource option."""
    same = all(at(old, path) == at(new, path) for path in METADATA_FORCE_NEW)
    return program_asks or (bool(at(new, ".metadata.name")) and same)


def annotations(obj: dict[str, Any]) -> dict[str, str]:
    return dict((obj.get("metadata") or {}).get("annotations") or {})


def role(obj: dict[str, Any]) -> str:
    """The Pulumi resource an object is (infra/workloads.py ``resource_role``): a Job by its role, others by name."""
    kind = str(obj["kind"]).lower()
    if obj["kind"] == "Job":
        return f"{kind}-{annotations(obj)[JOB_ROLE]}"
    return kind if obj["kind"] == "Namespace" else f"{kind}-{obj['metadata']['name']}"


def grace_seconds(obj: dict[str, Any]) -> int:
    pod = at(obj, ".spec.template.spec") or {}
    return int(pod.get("terminationGracePeriodSeconds", DEFAULT_GRACE))


def live(obj: dict[str, Any], now: float) -> dict[str, Any]:
    """The object as the API server returns it right after the create: a uid, and for a Job the status the Job
    controller gives it at once (``startTime``, or the ``Suspended`` condition of a Job created suspended)."""
    meta = {**obj["metadata"], "uid": f"uid-{obj['metadata']['name']}", "creationTimestamp": now, "generation": 1}
    result = {**obj, "metadata": meta}
    if obj["kind"] == "Job":
        suspended = bool(obj["spec"].get("suspend"))
        result["status"] = (
            {"conditions": [{"type": "Suspended", "status": "True"}]} if suspended else {"startTime": now, "active": 0}
        )
    return result


def condition_holds(expression: str, obj: dict[str, Any]) -> bool:
    """One ``pulumi.com/waitFor`` expression against the object: ``jsonpath={.path}`` (present and not empty),
    ``jsonpath={.path}=value``, ``condition=Type`` (``condition=Type=False``)."""
    if expression.startswith("jsonpath="):
        path, _, wanted = expression.removeprefix("jsonpath=").partition("}=")
        value = at(obj, path.strip("{}"))
        return value not in (None, "", [], {}) if not wanted else str(value) == wanted
    if expression.startswith("condition="):
        kind, _, status = expression.removeprefix("condition=").partition("=")
        conditions = (obj.get("status") or {}).get("conditions") or []
        return any(c.get("type") == kind and c.get("status") == (status or "True") for c in conditions)
    raise Refused(f'expected a "jsonpath=" or "condition=" prefix, got "{expression}"')


def await_ready(obj: dict[str, Any], now: float) -> None:
    """``ReadyCondition`` then, for a Job without overrides, its built-in awaiter (which waits for ``Complete``)."""
    notes = annotations(obj)
    if notes.get(SKIP_AWAIT) == "true":
        return
    current = live(obj, now)
    if WAIT_FOR in notes:
        text = notes[WAIT_FOR]
        try:
            expressions = json.loads(text)
        except ValueError:
            expressions = [text]
        if not all(condition_holds(str(expression), current) for expression in expressions):
            raise Refused(f"timed out waiting for {text} ({DEFAULT_TIMEOUT // 60} minutes)")
        return
    if obj["kind"] == "Job":
        raise Refused(
            f"Job '{obj['metadata']['name']}' timed out waiting to be Ready: Job has not completed "
            f"({DEFAULT_TIMEOUT // 60} minutes)"
        )


@dataclass
class Cluster:
    """The stack's Kubernetes objects by Pulumi resource, the ones lingering after a delete that was not awaited
    (``{"kind", "namespace", "name", "until"}``), and the log of what the provider did."""

    objects: dict[str, dict[str, Any]]
    lingering: list[dict[str, Any]]
    log: list[dict[str, Any]] = field(default_factory=list)
    now: float = field(default_factory=time.time)

    def __post_init__(self) -> None:
        self.lingering = [entry for entry in self.lingering if entry["until"] > self.now]

    def _step(self, op: str, obj: dict[str, Any], **extra: Any) -> None:
        self.log.append({"op": op, "kind": obj["kind"], "name": obj["metadata"]["name"], "at": self.now, **extra})

    def create(self, obj: dict[str, Any]) -> None:
        key = (obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"])
        if any((entry["kind"], entry["namespace"], entry["name"]) == key for entry in self.lingering):
            raise Refused(
                f'object is being deleted: {PLURAL.get(obj["kind"], obj["kind"].lower())} "{key[2]}" already '
                f"exists\n\n{ALREADY_EXISTS_HINT}"
            )
        if obj["kind"] == "Job":
            from job_controller import Invalid, validate

            try:
                validate(obj)
            except Invalid as error:
                raise Refused(str(error)) from None
        self._step("create", obj)
        self.objects[role(obj)] = obj
        await_ready(obj, self.now)

    def update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        if new["kind"] == "Job":
            from job_controller import Invalid, validate_update

            try:
                validate_update(old, new)
            except Invalid as error:
                raise Refused(str(error)) from None
        self._step("update", new)
        self.objects[role(new)] = new
        await_ready(new, self.now)

    def delete(self, obj: dict[str, Any]) -> None:
        awaited = not (
            (obj["apiVersion"], obj["kind"]) in SKIP_AWAIT_ON_DELETE and annotations(obj).get(SKIP_AWAIT) == "true"
        )
        self._step("delete", obj, awaited=awaited)
        if self.objects.get(role(obj)) is obj:
            del self.objects[role(obj)]
        if not awaited:
            until = self.now + grace_seconds(obj)
            where = {"namespace": obj["metadata"].get("namespace"), "name": obj["metadata"]["name"]}
            self.lingering.append({"kind": obj["kind"], **where, "until": until})

    def apply(self, objects: list[dict[str, Any]], *, program_dbr: tuple[str, ...] = ("Job",)) -> dict[str, str]:
        """Apply the program's objects in its order; the removed ones are deleted last. Returns each resource's
        step (``create``, ``same``, ``update``, ``replace``, ``delete``); raises :class:`Refused` at the first
        failure, the steps done so far kept (as Pulumi keeps them in the state)."""
        steps: dict[str, str] = {}
        wanted = {role(obj) for obj in objects}
        for obj in objects:
            try:
                self._apply_one(obj, steps, program_dbr)
            except Refused as refused:
                refused.resource = role(obj)
                raise
        for key in [key for key in self.objects if key not in wanted]:
            steps[key] = "delete"
            self.delete(self.objects[key])
        return steps

    def _apply_one(self, obj: dict[str, Any], steps: dict[str, str], program_dbr: tuple[str, ...]) -> None:
        """One resource's step: create, update in place, or replace (delete first when it must keep its name)."""
        key = role(obj)
        old = self.objects.get(key)
        if old is None:
            steps[key] = "create"
            self.create(obj)
        elif replaces(old, obj):
            steps[key] = "replace"
            if delete_before_replace(old, obj, program_asks=obj["kind"] in program_dbr):
                self.delete(old)
                self.create(obj)
            else:
                self.create(obj)
                self.delete(old)
        elif old != obj:
            steps[key] = "update"
            self.update(old, obj)
        else:
            steps[key] = "same"

    def destroy(self) -> None:
        for obj in reversed(list(self.objects.values())):
            self.delete(obj)


def render_objects(stack: str, config: dict[str, Any], stack_file: Path) -> list[dict[str, Any]]:
    """The Kubernetes objects the stack's program applies, rendered from its config by infra's own code (none for
    a cluster stack)."""
    root = Path(__file__).resolve().parents[2]
    sys.path[:0] = [str(root), str(root / "tests")]
    if "tfcli:sweep" in config:
        from infra.sweep_config import sweep_settings_from_config
        from infra.sweep_program import sweep_objects

        return sweep_objects(sweep_settings_from_config(config, stack=stack))
    if "tfcli:experiment" in config:
        import yaml

        from infra.manifests import render_stack_file

        return list(yaml.safe_load_all(render_stack_file(stack_file, token="fake-token")))
    return []
