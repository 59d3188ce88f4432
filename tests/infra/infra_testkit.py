"""Helpers for the Pulumi tests: stack config for a bundled experiment; the program evaluated under mocks; the
planned Kubernetes objects by name and the checks that they are wired together (worker DNS, references, bucket).

Every plan comes from :func:`infra.plan.plan_stack` — the program run under ``pulumi.runtime.set_mocks`` with the
given stack config — and is cached per config, so each parametrized test costs a dictionary lookup after the first.
"""

from __future__ import annotations

import json
from typing import Any

from infra import naming
from infra.manifests import build_manifests, context_for
from infra.plan import SECRET, Plan, PlannedResource, plan_stack
from infra.pod_parts import job_role
from infra.stack_files import experiment_stack_config
from trainer.kernel.spec import ConfigLibrary, Experiment, load_experiment
from trainer.kernel.spec.library import BUNDLED_CONFIGS

LIBRARY = ConfigLibrary((BUNDLED_CONFIGS,))
PROJECT = "test-project"
REGION = "us-central1"
ZONE = "us-central1-a"
SHARED_STACK = "shared-t4"
BUNDLED_EXPERIMENTS = sorted(path.stem for path in (BUNDLED_CONFIGS / "experiments").iterdir())
RUN_MODES = ("single", "multi-threaded", "distributed")
WRITE_ROLES = {"roles/storage.objectAdmin", "roles/storage.objectCreator", "roles/storage.objectUser"}

_PLANS: dict[str, Plan] = {}


def experiment(name: str, **overrides: Any) -> Experiment:
    """A bundled experiment, with spec keys overridden (``run_mode=...``, ``num_workers=...``)."""
    return load_experiment(name, library=LIBRARY, overrides=overrides or None).spec


def in_mode(name: str, run_mode: str) -> Experiment:
    return experiment(name, run_mode=run_mode, num_workers=3 if run_mode != "single" else None)


def stack_config(spec: Experiment, *, shared: bool = False, **extra: Any) -> dict[str, Any]:
    config = experiment_stack_config(
        spec, project=PROJECT, region=REGION, zone=ZONE, shared_cluster_stack=SHARED_STACK if shared else None
    )
    return {**config, **extra}


def plan_for(config: dict[str, Any], *, stack: str = "test") -> Plan:
    key = json.dumps([stack, config], sort_keys=True, default=str)
    if key not in _PLANS:
        _PLANS[key] = plan_stack(config, stack=stack)
    return _PLANS[key]


def jobs(plan: Plan) -> dict[str, PlannedResource]:
    """The Jobs by role (``learner``, ``env-workers``); their names carry a digest of what they run."""
    return {job_role(r.inputs): r for r in plan.of_type("kubernetes:batch/v1:Job")}


def containers(job: PlannedResource) -> list[dict[str, Any]]:
    return list(job.inputs["spec"]["template"]["spec"]["containers"])


def k8s_objects(plan: Plan) -> list[PlannedResource]:
    return [r for r in plan.resources if r.type.startswith("kubernetes:") and r.custom]


# --- the planned objects and how they are wired together --------------------------------------------------------------


def objects_of(plan: Plan, spec: Experiment) -> dict[tuple[str, str, str], dict[str, Any]]:
    """The planned Kubernetes objects by (kind, namespace, name); a Secret's hidden data from the same render."""
    found = {}
    for resource in plan.resources:
        if resource.type.startswith("kubernetes:") and resource.type != "pulumi:providers:kubernetes":
            obj = resource.inputs
            found[obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"]] = obj
    rendered = build_manifests(spec, context_for(spec, project=PROJECT, location=ZONE), token="t0ken")
    for obj in rendered:
        if obj["kind"] == "Secret":
            planned = found[obj["kind"], obj["metadata"]["namespace"], obj["metadata"]["name"]]
            assert planned == {**obj, "stringData": SECRET}
            found[obj["kind"], obj["metadata"]["namespace"], obj["metadata"]["name"]] = obj
    return found


def check_worker_dns(objects: dict[tuple[str, str, str], dict[str, Any]]) -> int:
    """The learner's ``--workers`` are indexed pods' hostnames behind a headless Service that selects them."""
    checked = 0
    for (kind, namespace, _), job in objects.items():
        if kind != "Job":
            continue
        (container, *_) = job["spec"]["template"]["spec"]["containers"]
        if "--workers" not in container["args"]:
            continue
        addresses = container["args"][container["args"].index("--workers") + 1].split(",")
        for index, address in enumerate(addresses):
            host, port = address.rsplit(":", 1)
            pod_name, subdomain = host.split(".", 1)
            assert "." not in subdomain, f"{address}: <hostname>.<subdomain> resolves in the pod's own namespace"
            owner = next(
                (
                    w
                    for (k, ns, name), w in objects.items()
                    if k == "Job" and ns == namespace and pod_name == f"{name}-{index}"
                ),
                None,
            )
            assert owner is not None, f"{address}: no indexed Job in {namespace} has a pod named {pod_name}"
            spec = owner["spec"]
            assert spec["completionMode"] == "Indexed" and spec["completions"] == spec["parallelism"] == len(addresses)
            template = spec["template"]
            assert template["spec"]["subdomain"] == subdomain
            service = objects.get(("Service", namespace, subdomain))
            assert service is not None, f"{address}: no Service {subdomain} in {namespace}"
            assert service["spec"]["clusterIP"] == "None"  # headless: per-pod DNS records
            assert service["spec"]["selector"].items() <= template["metadata"]["labels"].items()
            (service_port,) = [p for p in service["spec"]["ports"] if str(p["port"]) == port]
            (worker,) = template["spec"]["containers"]
            container_ports = {p["containerPort"] for p in worker["ports"]}
            assert service_port["targetPort"] in container_ports
            assert worker["args"][worker["args"].index("--port") + 1] == str(service_port["targetPort"])
            checked += 1
    return checked


def check_references(objects: dict[tuple[str, str, str], dict[str, Any]]) -> None:
    """Every Secret / ConfigMap / ServiceAccount a pod names exists in its namespace with the keys it reads."""
    for (kind, namespace, name), job in objects.items():
        if kind != "Job":
            continue
        assert ("Namespace", "", namespace) in objects
        pod = job["spec"]["template"]["spec"]
        account = pod.get("serviceAccountName", "default")  # "default" exists in every namespace
        assert account == "default" or ("ServiceAccount", namespace, account) in objects, f"{name}: {account}"
        for container in pod["containers"]:
            for variable in container.get("env", []):
                source = variable.get("valueFrom", {})
                if ref := source.get("secretKeyRef"):
                    secret = objects[("Secret", namespace, ref["name"])]
                    assert ref["key"] in {**secret.get("data", {}), **secret.get("stringData", {})}
                if ref := source.get("configMapKeyRef"):
                    assert ref["key"] in objects[("ConfigMap", namespace, ref["name"])]["data"]
            volumes = {volume["name"]: volume for volume in pod.get("volumes", [])}
            for mount in container.get("volumeMounts", []):
                assert mount["name"] in volumes, f"{name}: mounts {mount['name']}, which no volume is"
        for volume in pod.get("volumes", []):
            if "configMap" in volume:
                data = objects[("ConfigMap", namespace, volume["configMap"]["name"])]["data"]
                assert {item["key"] for item in volume["configMap"].get("items", [])} <= data.keys()
            if "secret" in volume:
                assert ("Secret", namespace, volume["secret"]["secretName"]) in objects


def check_results_bucket(plan: Plan, objects: dict[tuple[str, str, str], dict[str, Any]]) -> None:
    """FUSE volume -> annotated pod -> KSA -> Google SA that may write exactly that bucket, bound to the KSA."""
    (bucket,) = plan.of_type("gcp:storage/bucket:Bucket")
    accounts = {
        naming.service_account_email(a.inputs["accountId"], a.inputs["project"]): a
        for a in plan.of_type("gcp:serviceaccount/account:Account")
    }
    fuse_pods = 0
    for (kind, namespace, _), job in objects.items():
        if kind != "Job":
            continue
        template = job["spec"]["template"]
        fuse = [
            v
            for v in template["spec"].get("volumes", [])
            if v.get("csi", {}).get("driver") == "gcsfuse.csi.storage.gke.io"
        ]
        if not fuse:
            continue
        fuse_pods += 1
        assert template["metadata"]["annotations"]["gke-gcsfuse/volumes"] == "true"
        (volume,) = fuse
        assert volume["csi"]["volumeAttributes"]["bucketName"] == bucket.inputs["name"]
        ksa = template["spec"]["serviceAccountName"]
        email = objects[("ServiceAccount", namespace, ksa)]["metadata"]["annotations"]["iam.gke.io/gcp-service-account"]
        google_account = accounts[email]
        member = f"serviceAccount:{email}"
        grants = [
            *plan.of_type("gcp:storage/bucketIAMMember:BucketIAMMember"),
            *plan.of_type("gcp:storage/bucketIAMBinding:BucketIAMBinding"),
        ]
        writes = {
            r.inputs["bucket"]
            for r in grants
            if member in (r.inputs.get("member"), *r.inputs.get("members", [])) and r.inputs["role"] in WRITE_ROLES
        }
        assert writes == {bucket.inputs["name"]}, "write access to exactly the experiment's bucket"
        project_grants = [
            *plan.of_type("gcp:projects/iAMMember:IAMMember"),
            *plan.of_type("gcp:projects/iAMBinding:IAMBinding"),
        ]
        assert not [r for r in project_grants if member in (r.inputs.get("member"), *r.inputs.get("members", []))]
        bindings = [
            r
            for r in plan.of_type("gcp:serviceaccount/iAMMember:IAMMember")
            if r.inputs["role"] == "roles/iam.workloadIdentityUser"
            and r.inputs["serviceAccountId"]
            == google_account.inputs.get("name", f"projects/{PROJECT}/serviceAccounts/{email}")
        ]
        assert [b.inputs["member"] for b in bindings] == [f"serviceAccount:{PROJECT}.svc.id.goog[{namespace}/{ksa}]"]
    assert fuse_pods == 1  # the learner
