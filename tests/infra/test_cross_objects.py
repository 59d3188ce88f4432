"""What no schema can see: the planned objects agree with each other, as the cluster needs them to.

For every bundled experiment x run mode, on a dedicated and on a shared cluster: the env-worker DNS names the learner
dials exist (indexed Job + headless Service), every Secret / ConfigMap / ServiceAccount a pod names exists with the
keys it reads, the results bucket's FUSE volume works under Workload Identity (those checks live in ``infra_testkit``),
the GPU learner lands on the GPU pool and env workers never do, and everything fits on the nodes as shipped: the nodes
as the scheduler sees them and the scheduling checks are here. The review findings on how the objects are ordered,
replaced and reached are in ``test_cross_objects_review``.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest
from infra_testkit import (
    BUNDLED_EXPERIMENTS,
    PROJECT,
    RUN_MODES,
    ZONE,
    check_references,
    check_results_bucket,
    check_worker_dns,
    experiment,
    in_mode,
    objects_of,
    plan_for,
    stack_config,
)

from infra import naming
from infra.plan import Plan
from infra.shapes import machine_shape
from infra.sizing import DAEMONSETS, SYSTEM_DEPLOYMENTS
from infra.stack_files import cluster_stack_config
from trainer.kernel.spec import Experiment
from trainer.kernel.spec.library import BUNDLED_CONFIGS

GPU = "nvidia.com/gpu"
SHARING_STRATEGY = "cloud.google.com/gke-gpu-sharing-strategy"
SHARED_CLIENTS = "cloud.google.com/gke-max-shared-clients-per-gpu"
GPU_TAINT = {"key": GPU, "value": "present", "effect": "NoSchedule"}  # what GKE puts on GPU nodes beside a CPU pool
CASES = [
    pytest.param(name, mode, shared, id=f"{name}-{mode}-{'shared' if shared else 'dedicated'}")
    for name in BUNDLED_EXPERIMENTS
    for mode in RUN_MODES
    for shared in (False, True)
]


# --- the nodes and the pools ------------------------------------------------------------------------------------------


def pool_plan(plan: Plan, spec: Experiment, shared: bool) -> Plan:
    """The plan that declares the experiment's node pools: its own, or its shared cluster stack's (same cluster)."""
    if not shared:
        return plan
    assert spec.cluster is not None
    return plan_for(cluster_stack_config(spec.cluster, project=PROJECT, zone=ZONE), stack="shared")


def nodes(plan: Plan) -> list[dict[str, Any]]:
    """Every node the pools start with (a pool at zero: the nodes its autoscaler may add), as the scheduler sees it:
    labels (ours + GKE's), taints, capacity."""
    pools = plan.of_type("gcp:container/nodePool:NodePool")
    has_cpu_pool = any(not p.inputs["nodeConfig"].get("guestAccelerators") for p in pools)
    found = []
    for pool in pools:
        config = pool.inputs["nodeConfig"]
        accelerators = config.get("guestAccelerators") or []
        labels = {**config.get("labels", {}), "cloud.google.com/gke-nodepool": pool.inputs["name"]}
        taints = list(config.get("taints", []))
        shares = 1
        if accelerators:
            labels["cloud.google.com/gke-accelerator"] = accelerators[0]["type"]
            if has_cpu_pool:
                taints.append(GPU_TAINT)
            if sharing := accelerators[0].get("gpuSharingConfig"):
                labels.update(sharing_labels(sharing))
                shares = sharing["maxSharedClientsPerGpu"]
        shape = machine_shape(config["machineType"])
        assert shape is not None
        count = pool.inputs["initialNodeCount"] * naming.zones_of(pool.inputs["location"])
        if count == 0:  # a pool at zero (a shared cluster's learner pool): the autoscaler adds nodes for pending pods
            count = pool.inputs["autoscaling"]["totalMaxNodeCount"]
        for index in range(count):
            found.append(
                {
                    "name": f"{pool.inputs['name']}-{index}",
                    "pool": pool.inputs["name"],
                    "labels": labels,
                    "taints": taints,
                    # A shared GPU is advertised as that many nvidia.com/gpu, one per client (GKE docs).
                    "gpus": accelerators[0]["count"] * shares if accelerators else 0,
                    "allocatable": gke_allocatable(shape.vcpus, shape.memory_gib),
                }
            )
    return found


def sharing_labels(sharing: dict[str, Any]) -> dict[str, str]:
    """The labels GKE puts on the nodes of a pool whose GPUs are shared ("About GPU sharing strategies in GKE":
    ``cloud.google.com/gke-gpu-sharing-strategy`` ``time-sharing`` / ``mps``, and the clients per GPU)."""
    return {
        SHARING_STRATEGY: sharing["gpuSharingStrategy"].lower().replace("_", "-"),
        SHARED_CLIENTS: str(sharing["maxSharedClientsPerGpu"]),
    }


def check_gpu_sharing(objects: dict[tuple[str, str, str], dict[str, Any]], node_list: list[dict[str, Any]]) -> None:
    """A pod that selects a GPU share asks for exactly one (``nvidia.com/gpu: 1``, as GKE requires of shared GPUs)
    and has a pool that shares GPUs that way; a pod on a sharing pool selects the share it is priced at."""
    sharing_nodes = [n for n in node_list if SHARING_STRATEGY in n["labels"]]
    for (kind, _, name), job in objects.items():
        if kind != "Job":
            continue
        pod = job["spec"]["template"]["spec"]
        selector = pod.get("nodeSelector", {})
        _, _, gpus = pod_requests(job["spec"]["template"])
        if SHARING_STRATEGY in selector or SHARED_CLIENTS in selector:
            assert gpus == 1, f"{name}: a GPU share is nvidia.com/gpu: 1, not {gpus}"
            assert any(schedulable(pod, n) for n in sharing_nodes), f"{name}: selects a GPU share no pool offers"
        elif gpus:
            assert not any(schedulable(pod, n) for n in sharing_nodes), f"{name}: on a shared GPU without a share"


def gke_allocatable(vcpus: float, memory_gib: float) -> tuple[float, float]:
    """(millicores, MiB): GKE Standard's reservations, https://cloud.google.com/kubernetes-engine/docs/concepts/
    plan-node-sizes — CPU 6 % / 1 % / 0.5 % x 2 / 0.25 % of the rest; memory 25 % of 4 GiB, 20 % of 4, 10 % of 8,
    6 % of 112, 2 % of the rest; a 100 MiB eviction threshold."""
    cpu_reserved = 0.06 * min(vcpus, 1) + 0.01 * min(max(vcpus - 1, 0), 1) + 0.005 * min(max(vcpus - 2, 0), 2)
    cpu_reserved += 0.0025 * max(vcpus - 4, 0)
    steps = [(4, 0.25), (4, 0.20), (8, 0.10), (112, 0.06), (math.inf, 0.02)]
    memory_reserved, left = 0.0, memory_gib
    for size, fraction in steps:
        memory_reserved += min(left, size) * fraction
        left = max(left - size, 0)
    return (vcpus - cpu_reserved) * 1000, (memory_gib - memory_reserved) * 1024 - 100


def schedulable(pod: dict[str, Any], node: dict[str, Any]) -> bool:
    """Kubernetes' predicates for a pod on a node: nodeSelector, required node affinity, taints/tolerations."""
    labels = node["labels"]
    if any(labels.get(key) != value for key, value in pod.get("nodeSelector", {}).items()):
        return False
    required = pod.get("affinity", {}).get("nodeAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    if required and not any(_term_matches(term, labels) for term in required["nodeSelectorTerms"]):
        return False
    for taint in node["taints"]:
        if taint["effect"] in ("NoSchedule", "NoExecute") and not any(
            _tolerates(toleration, taint) for toleration in pod.get("tolerations", [])
        ):
            return False
    return True


def _term_matches(term: dict[str, Any], labels: dict[str, str]) -> bool:
    for expression in term.get("matchExpressions", []):
        value, operator = labels.get(expression["key"]), expression["operator"]
        if operator == "In" and value not in expression["values"]:
            return False
        if operator == "NotIn" and value in expression["values"]:
            return False
        if operator == "Exists" and value is None:
            return False
        if operator == "DoesNotExist" and value is not None:
            return False
    return True


def _tolerates(toleration: dict[str, Any], taint: dict[str, Any]) -> bool:
    if toleration.get("effect") not in (None, "", taint["effect"]):
        return False
    if toleration.get("operator", "Equal") == "Exists":
        return toleration.get("key") in (None, "", taint["key"])
    return toleration.get("key") == taint["key"] and toleration.get("value") == taint.get("value")


def _quantity(value: str, unit: str) -> float:
    if unit == "cpu":
        return float(value[:-1]) if value.endswith("m") else float(value) * 1000
    factors = {"Ki": 1 / 1024, "Mi": 1, "Gi": 1024}
    for suffix, factor in factors.items():
        if value.endswith(suffix):
            return float(value[: -len(suffix)]) * factor
    return float(value) / 2**20


def pod_requests(template: dict[str, Any]) -> tuple[float, float, int]:
    """(millicores, MiB, GPUs) a pod asks for: its containers' and the GCS FUSE sidecar's GKE injects."""
    cpu = memory = 0.0
    gpus = 0
    for container in template["spec"]["containers"]:
        requests = container["resources"]["requests"]
        cpu += _quantity(requests["cpu"], "cpu")
        memory += _quantity(requests["memory"], "memory")
        gpus += int(requests.get(GPU, 0))
    annotations = template["metadata"].get("annotations", {})
    if annotations.get("gke-gcsfuse/volumes") == "true":
        cpu += _quantity(annotations["gke-gcsfuse/cpu-request"], "cpu")
        memory += _quantity(annotations["gke-gcsfuse/memory-request"], "memory")
    return cpu, memory, gpus


# --- the scheduling checks --------------------------------------------------------------------------------------------


def check_scheduling(objects: dict[tuple[str, str, str], dict[str, Any]], node_list: list[dict[str, Any]]) -> None:
    """The GPU learner lands on the GPU pool only; env workers never can; every pod has somewhere to go."""
    gpu_nodes = [n for n in node_list if n["gpus"]]
    for (kind, _, name), job in objects.items():
        if kind != "Job":
            continue
        template = job["spec"]["template"]
        _, _, gpus = pod_requests(template)
        (container, *_) = template["spec"]["containers"]
        allowed = [n for n in node_list if schedulable(template["spec"], n)]
        assert allowed, f"{name}: no node it can be scheduled on"
        if gpus:
            assert gpus == 1 and container["resources"]["limits"][GPU] == "1"
            assert {n["pool"] for n in allowed} == {naming.LEARNER_POOL} and all(n["gpus"] for n in allowed)
        if "env-worker" in container["args"][:1]:
            assert not set(map(id, allowed)) & set(map(id, gpu_nodes)), f"{name} could land on a GPU node"


def check_fit(objects: dict[tuple[str, str, str], dict[str, Any]], node_list: list[dict[str, Any]]) -> None:
    """Learner (+ FUSE sidecar) and env workers fit on the nodes as shipped, after GKE's own pods."""
    free = {}
    for node in node_list:
        cpu, memory = node["allocatable"]
        cpu, memory = cpu - DAEMONSETS[0], memory - DAEMONSETS[1]
        if not node["taints"]:  # kube-system's Deployments may land on any untainted node
            cpu, memory = cpu - SYSTEM_DEPLOYMENTS[0], memory - SYSTEM_DEPLOYMENTS[1]
        free[node["name"]] = [cpu, memory, node["gpus"]]
    pods = []
    for (kind, _, name), job in objects.items():
        if kind == "Job":
            pods += [(name, job["spec"]["template"])] * job["spec"].get("parallelism", 1)
    pods.sort(key=lambda pod: -pod_requests(pod[1])[0])
    for name, template in pods:
        cpu, memory, gpus = pod_requests(template)
        preferred = _preferred_pools(template["spec"])
        candidates = sorted(
            (n for n in node_list if schedulable(template["spec"], n)), key=lambda n: n["pool"] not in preferred
        )
        for node in candidates:
            room = free[node["name"]]
            if room[0] >= cpu and room[1] >= memory and room[2] >= gpus:
                room[0], room[1], room[2] = room[0] - cpu, room[1] - memory, room[2] - gpus
                break
        else:
            pytest.fail(f"{name} ({cpu:.0f}m, {memory:.0f}Mi, {gpus} GPU) fits on no node: {free}")


def _preferred_pools(pod: dict[str, Any]) -> set[str]:
    preferred = pod.get("affinity", {}).get("nodeAffinity", {}).get("preferredDuringSchedulingIgnoredDuringExecution")
    pools: set[str] = set()
    for term in preferred or []:
        for expression in term["preference"]["matchExpressions"]:
            if expression["key"] == naming.POOL_LABEL:
                pools |= set(expression["values"])
    return pools


@pytest.mark.parametrize(("name", "mode", "shared"), CASES)
def test_the_planned_objects_agree_with_each_other(name: str, mode: str, shared: bool) -> None:
    spec = in_mode(name, mode)
    plan = plan_for(stack_config(spec, shared=shared))
    objects = objects_of(plan, spec)
    assert check_worker_dns(objects) == (spec.num_workers if mode == "distributed" else 0)
    check_references(objects)
    check_results_bucket(plan, objects)
    node_list = nodes(pool_plan(plan, spec, shared))
    check_scheduling(objects, node_list)
    check_gpu_sharing(objects, node_list)
    check_fit(objects, node_list)


@pytest.mark.parametrize("name", BUNDLED_EXPERIMENTS)
def test_every_bundled_experiment_fits_its_cluster_as_shipped(name: str) -> None:
    spec = experiment(name)  # its own run mode and num_workers: cartpole-ppo's 16 environments, SI's 4 workers
    plan = plan_for(stack_config(spec))
    check_fit(objects_of(plan, spec), nodes(plan))


@pytest.mark.parametrize("cluster", sorted(p.stem for p in (BUNDLED_CONFIGS / "clusters").iterdir()))
def test_a_distributed_run_fits_every_bundled_cluster(cluster: str) -> None:
    spec = experiment("cartpole-ppo", cluster=cluster, run_mode="distributed", num_workers=7)
    plan = plan_for(stack_config(spec))
    objects = objects_of(plan, spec)
    check_scheduling(objects, nodes(plan))
    check_fit(objects, nodes(plan))


def test_the_checks_catch_what_they_check() -> None:
    spec = in_mode("space-invaders-dqn", "distributed")
    plan = plan_for(stack_config(spec))

    def broken(change: Any) -> dict[tuple[str, str, str], dict[str, Any]]:
        objects = copy.deepcopy(objects_of(plan, spec))
        change(objects)
        return objects

    def job(objects: dict[Any, Any], role: str) -> dict[str, Any]:
        return next(o for (k, _, n), o in objects.items() if k == "Job" and n.startswith(role + "-"))

    def no_subdomain(objects: dict[Any, Any]) -> None:
        job(objects, "env-workers")["spec"]["template"]["spec"]["subdomain"] = "workers"

    with pytest.raises(AssertionError):
        check_worker_dns(broken(no_subdomain))

    def wrong_key(objects: dict[Any, Any]) -> None:
        (container,) = job(objects, "learner")["spec"]["template"]["spec"]["containers"]
        container["env"][-1]["valueFrom"]["secretKeyRef"]["key"] = "tokn"

    with pytest.raises(AssertionError):
        check_references(broken(wrong_key))

    def no_annotation(objects: dict[Any, Any]) -> None:
        del job(objects, "learner")["spec"]["template"]["metadata"]["annotations"]["gke-gcsfuse/volumes"]

    with pytest.raises(KeyError):
        check_results_bucket(plan, broken(no_annotation))

    def no_toleration(objects: dict[Any, Any]) -> None:
        del job(objects, "learner")["spec"]["template"]["spec"]["tolerations"]

    with pytest.raises(AssertionError, match="no node"):
        check_scheduling(broken(no_toleration), nodes(plan))

    def tolerant_workers(objects: dict[Any, Any]) -> None:
        pod = job(objects, "env-workers")["spec"]["template"]["spec"]
        pod["tolerations"] = [{"operator": "Exists"}]
        del pod["nodeSelector"]

    with pytest.raises(AssertionError, match="GPU node"):
        check_scheduling(broken(tolerant_workers), nodes(plan))

    # cartpole-ppo (16 environments on one e2-standard-8) as it was sized before: vCPUs - 1, the sidecar not counted.
    cartpole = experiment("cartpole-ppo")
    cartpole_plan = plan_for(stack_config(cartpole))
    objects = copy.deepcopy(objects_of(cartpole_plan, cartpole))
    (container,) = job(objects, "learner")["spec"]["template"]["spec"]["containers"]
    assert container["resources"]["requests"]["cpu"] == "6760m"
    container["resources"]["requests"]["cpu"] = "7000m"
    with pytest.raises(pytest.fail.Exception, match="fits on no node"):
        check_fit(objects, nodes(cartpole_plan))
