"""How big everything is, in one place: what a GKE node offers pods, the learner's and the env-workers' requests and
limits, the node pools a run needs, and how many of a sweep's trials its learner pool holds at a time.

Both the manifests (:mod:`infra.manifests`) and the stack program (:mod:`infra.program`, :mod:`infra.sweep_program`)
size from here, and so does a run's hourly price (:mod:`infra.run_price`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

from infra.shapes import Shape, machine_shape
from trainer.kernel.spec import Cluster, Experiment


@dataclass(frozen=True)
class PoolShape:
    """One pool: the total node counts (initial, min, max) are over all its zones."""

    machine_type: str
    disk_size_gb: int = 100
    spot: bool = False
    gpus_per_node: int = 0
    gpu_type: str | None = None
    nodes: int = 1
    min_nodes: int = 0
    max_nodes: int = 1
    # GKE GPU sharing: (strategy as the API spells it, pods per GPU); None: a pod per GPU.
    gpu_sharing: tuple[str, int] | None = None
    flex_start: bool = False  # Dynamic Workload Scheduler flex-start nodes (not spot)


CPU_POOL_MACHINE = "e2-standard-4"


GPU_RESOURCE = "nvidia.com/gpu"
SHARED_CPU_POOL_MAX = 8
# The shape the learner is sized for when the experiment names no cluster (a shared cluster's pool).
FALLBACK_SHAPE = Shape("e2", 4, 16)
# Requests and limits of the GCS FUSE sidecar GKE injects (it writes checkpoints; staging needs local disk).
FUSE_SIDECAR_REQUESTS = (250, 256)  # (millicores, MiB): the sidecar's requests below, counted against the node


def learner_gpus(experiment: Experiment) -> int:
    """GPUs the learner asks for: one when its cluster has GPUs (TensorForce 0.6 trains one model on one GPU)."""
    cluster = experiment.cluster
    return 1 if cluster is not None and (cluster.gpus_per_node or 0) > 0 else 0


def gpu_shares(experiment: Experiment) -> int:
    """Learners one GPU of the cluster holds: its ``gpu_sharing.clients_per_gpu``, else one."""
    cluster = experiment.cluster
    sharing = cluster.gpu_sharing if cluster is not None else None
    return sharing.clients_per_gpu if sharing is not None and learner_gpus(experiment) else 1


def cpu_quantity(cores: float) -> str:
    return f"{round(cores * 1000)}m"


def memory_quantity(gib: float) -> str:
    return f"{math.floor(gib * 1024)}Mi"


# What GKE keeps of a Standard node for the OS, the kubelet and the container runtime (the rest is the node's
# *allocatable*), https://cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes: CPU 6 % of the first
# core, 1 % of the second, 0.5 % of the next two, 0.25 % of the rest; memory 25 % of the first 4 GiB, 20 % of the
# next 4, 10 % of the next 8, 6 % of the next 112, 2 % of the rest (255 MiB on machines under 1 GiB), plus the
# kubelet's 100 MiB hard-eviction threshold.
_CPU_RESERVED = ((1.0, 0.06), (1.0, 0.01), (2.0, 0.005), (math.inf, 0.0025))  # (cores, fraction)
_MEMORY_RESERVED = ((4.0, 0.25), (4.0, 0.20), (8.0, 0.10), (112.0, 0.06), (math.inf, 0.02))  # (GiB, fraction)
EVICTION_THRESHOLD_MIB = 100
# Margins for GKE's own pods, (millicores, MiB). DaemonSets run on every node: kube-proxy, fluentbit-gke,
# gke-metrics-agent, the PD and GCS FUSE CSI node plugins, netd (and the NVIDIA device plugin on GPU nodes).
# kube-system Deployments (kube-dns and its autoscaler, konnectivity-agent, metrics-server, event-exporter, the
# default HTTP backend) may land on any node without a taint.
DAEMONSETS = (400, 640)
SYSTEM_DEPLOYMENTS = (500, 640)


def _tiered(amount: float, tiers: tuple[tuple[float, float], ...]) -> float:
    reserved, left = 0.0, amount
    for size, fraction in tiers:
        reserved += min(left, size) * fraction
        left -= min(left, size)
        if left <= 0:
            break
    return reserved


def node_allocatable(shape: Shape) -> tuple[int, int]:
    """(millicores, MiB) a node of this shape offers pods: its capacity less GKE's reservations."""
    cpu = shape.vcpus * 1000 - _tiered(shape.vcpus, _CPU_RESERVED) * 1000
    memory_mib = shape.memory_gib * 1024
    reserved = 255.0 if shape.memory_gib < 1 else _tiered(shape.memory_gib, _MEMORY_RESERVED) * 1024
    return math.floor(cpu), math.floor(memory_mib - reserved - EVICTION_THRESHOLD_MIB)


def room_for_workloads(shape: Shape, *, tainted: bool) -> tuple[int, int]:
    """(millicores, MiB) of a node left to our pods: allocatable less the DaemonSets and — on a node without a taint,
    where they may land — kube-system's Deployments."""
    cpu, memory = node_allocatable(shape)
    cpu, memory = cpu - DAEMONSETS[0], memory - DAEMONSETS[1]
    if not tainted:
        cpu, memory = cpu - SYSTEM_DEPLOYMENTS[0], memory - SYSTEM_DEPLOYMENTS[1]
    return cpu, memory


def pods_per_node(shape: Shape, requests: Mapping[str, str], *, tainted: bool = False) -> int:
    """How many pods with these requests (``{"cpu": "1000m", "memory": "1024Mi"}``) fit on one node."""
    cpu, memory = room_for_workloads(shape, tainted=tainted)
    return max(0, min(cpu // millicores(requests["cpu"]), memory // mebibytes(requests["memory"])))


def millicores(quantity: str) -> int:
    return int(quantity[:-1]) if quantity.endswith("m") else round(float(quantity) * 1000)


def mebibytes(quantity: str) -> int:
    units = {"Mi": 1, "Gi": 1024, "Ki": 1 / 1024}
    for unit, factor in units.items():
        if quantity.endswith(unit):
            return math.ceil(float(quantity[: -len(unit)]) * factor)
    return math.ceil(int(quantity) / 2**20)


def learner_shape(experiment: Experiment) -> Shape:
    """The node shape the learner is sized for: its cluster's machine type (on a shared cluster, give the experiment
    that cluster's spec), else a 4-vCPU one."""
    cluster = experiment.cluster
    return (machine_shape(cluster.machine_type) if cluster and cluster.machine_type else None) or FALLBACK_SHAPE


def learner_resources(experiment: Experiment) -> dict[str, dict[str, str]]:
    """Requests and limits of the learner, sized from its node shape and the environments it steps itself.

    Requests: a core for the agent plus one per environment it steps itself (at least one; a distributed learner
    counts one for its transport), and 2 GiB plus 0.5 GiB per such environment — capped by the room its node leaves:
    the node's allocatable (GKE's reservations) less margins for GKE's DaemonSets, for kube-system's Deployments on a
    node without the GPU taint, and the requests of the GCS FUSE sidecar injected into the pod. Limits: that room
    (Burstable, so it may use the node).
    """
    local_envs = 0 if experiment.run_mode == "distributed" else experiment.num_environments
    room_cpu, room_memory = room_for_workloads(learner_shape(experiment), tainted=learner_gpus(experiment) > 0)
    # On a shared GPU, the node's room is split among the learners its GPUs hold (each one a share).
    room_cpu, room_memory = room_cpu // _learners_per_node(experiment), room_memory // _learners_per_node(experiment)
    usable_cpu = max(0.5, (room_cpu - FUSE_SIDECAR_REQUESTS[0]) / 1000)
    usable_memory = max(1.0, (room_memory - FUSE_SIDECAR_REQUESTS[1]) / 1024)
    cpu = min(1 + max(local_envs, 1), usable_cpu)
    memory = min(2 + 0.5 * max(local_envs, 1), usable_memory)
    resources = {
        "requests": {"cpu": cpu_quantity(math.floor(cpu * 1000) / 1000), "memory": memory_quantity(memory)},
        "limits": {"cpu": cpu_quantity(math.floor(usable_cpu * 1000) / 1000), "memory": memory_quantity(usable_memory)},
    }
    if gpus := learner_gpus(experiment):
        resources["requests"][GPU_RESOURCE] = str(gpus)
        resources["limits"][GPU_RESOURCE] = str(gpus)
    return resources


def _learners_per_node(experiment: Experiment) -> int:
    """The learners a node's shared GPUs hold (GPUs x shares); 1 without sharing (a learner may use the node)."""
    shares = gpu_shares(experiment)
    cluster = experiment.cluster
    return (cluster.gpus_per_node or 1) * shares if cluster is not None and shares > 1 else 1


WORKER_RESOURCES = {"requests": {"cpu": "1000m", "memory": "1024Mi"}, "limits": {"cpu": "1000m", "memory": "2048Mi"}}


def workers_per_cpu_node() -> int:
    """Env workers one CPU-pool node holds: its allocatable less GKE's own pods, over a worker's requests."""
    shape = machine_shape(CPU_POOL_MACHINE)
    assert shape is not None
    return max(1, pods_per_node(shape, WORKER_RESOURCES["requests"]))


def learner_pool(cluster: Cluster) -> PoolShape:
    """The pool the Cluster spec describes (the learner's)."""
    assert cluster.machine_type is not None  # the spec model always sets it
    return PoolShape(
        machine_type=cluster.machine_type,
        disk_size_gb=cluster.disk_size,
        spot=cluster.spot,
        gpus_per_node=cluster.gpus_per_node or 0,
        gpu_type=cluster.gpu_type,
        nodes=cluster.num_nodes,
        min_nodes=cluster.min_nodes if cluster.min_nodes is not None else 0,
        max_nodes=cluster.max_nodes if cluster.max_nodes is not None else cluster.num_nodes,
        gpu_sharing=(cluster.gpu_sharing.gke_strategy, cluster.gpu_sharing.clients_per_gpu)
        if cluster.gpu_sharing
        else None,
        flex_start=cluster.provisioning_model == "flex-start",
    )


def starting_at(pool: PoolShape, learners: int | None) -> PoolShape:
    """The learner pool starting with the nodes its run uses: ``learners`` nodes (within its autoscaling range), or its
    ``min_nodes`` (zero by default) for a shared cluster, whose autoscaler adds nodes as experiments come.

    The spec's ``num_nodes`` is the pool's room (its autoscaling maximum), not what a run starts: a 2-node GPU
    cluster under a single learner used to start, and bill, 2 GPU nodes."""
    wanted = pool.min_nodes if learners is None else learners
    return replace(pool, nodes=min(max(wanted, pool.min_nodes), pool.max_nodes))


def sweep_learner_nodes(trials: list[Experiment], parallelism: int) -> int:
    """Learner nodes a sweep uses at a time: its trials at a time over the learner pods a node holds."""
    return math.ceil(min(parallelism, len(trials)) / learner_pods_per_node(widest(trials)))


def cpu_pool(experiment: Experiment | None) -> PoolShape:
    """The CPU pool: one node for GKE's system pods, plus room for a distributed experiment's env workers."""
    if experiment is None:  # a shared cluster: whatever experiments come
        return PoolShape(CPU_POOL_MACHINE, disk_size_gb=50, nodes=1, min_nodes=1, max_nodes=SHARED_CPU_POOL_MAX)
    workers = experiment.num_workers if experiment.run_mode == "distributed" else 0
    nodes = max(1, math.ceil(workers / workers_per_cpu_node()))
    return PoolShape(CPU_POOL_MACHINE, disk_size_gb=50, nodes=nodes, min_nodes=1, max_nodes=nodes + 1)


def widest(trials: list[Experiment]) -> Experiment:
    """The trial whose learner needs the most (pods share one template)."""
    return max(trials, key=lambda trial: (learner_gpus(trial), trial.num_environments))


def learner_pods_per_node(experiment: Experiment) -> int:
    """Learner pods one node of its pool holds: the fewer of its GPUs over the GPUs a learner asks for and the pods its
    CPU and memory fit — each pod's requests being the learner's plus the GCS FUSE sidecar's, against the room a node
    leaves (without kube-system's Deployments on a GPU node, which carries the GPU taint). At least one."""
    requests = learner_resources(experiment)["requests"]
    pod = {
        "cpu": f"{millicores(requests['cpu']) + FUSE_SIDECAR_REQUESTS[0]}m",
        "memory": f"{mebibytes(requests['memory']) + FUSE_SIDECAR_REQUESTS[1]}Mi",
    }
    gpus = learner_gpus(experiment)
    fits = pods_per_node(learner_shape(experiment), pod, tainted=gpus > 0)
    if gpus:
        cluster = experiment.cluster
        fits = min(fits, ((cluster.gpus_per_node if cluster else None) or gpus) * gpu_shares(experiment) // gpus)
    return max(1, fits)


def default_parallelism(trials: list[Experiment]) -> int:
    """Trials at a time when the sweep names none: what the learner pool holds at its largest — its nodes times the
    pods a node fits (GPUs, CPU and memory; :func:`learner_pods_per_node`) — at most all trials. Counting GPUs alone
    left pods Pending on a node whose GPUs were free but whose cores were not."""
    trial = widest(trials)
    cluster = trial.cluster
    nodes = (cluster.max_nodes or cluster.num_nodes) if cluster is not None else 1
    return max(1, min(len(trials), nodes * learner_pods_per_node(trial)))
