"""The stack program: stack config (read once, by :mod:`infra.stack_config`) -> components.

- A shared cluster stack (``tfcli:cluster``): GkeCluster + NodePools; exports what experiment stacks need.
- An experiment stack (``tfcli:experiment``): its own GkeCluster + NodePools (named after the experiment), or —
  with ``tfcli:sharedClusterStack`` — the outputs of that stack through a StackReference; then ResultsBucket and
  ExperimentWorkloads.
"""

from __future__ import annotations

import math
from typing import Any

import pulumi

from infra.cluster import ClusterConnection, GkeCluster, GkeClusterArgs
from infra.manifests import WORKER_RESOURCES, context_for, new_token, pods_per_node
from infra.node_pools import CPU_POOL_MACHINE, NodePools, NodePoolsArgs, PoolShape
from infra.results_bucket import ResultsBucket, ResultsBucketArgs
from infra.shapes import machine_shape
from infra.stack_config import StackSettings, read_stack_config
from infra.workloads import ExperimentWorkloads, ExperimentWorkloadsArgs
from tfcli.spec import Cluster, Experiment

SHARED_CPU_POOL_MAX = 8


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
    )


def cpu_pool(experiment: Experiment | None) -> PoolShape:
    """The CPU pool: one node for GKE's system pods, plus room for a distributed experiment's env workers."""
    if experiment is None:  # a shared cluster: whatever experiments come
        return PoolShape(CPU_POOL_MACHINE, disk_size_gb=50, nodes=1, min_nodes=1, max_nodes=SHARED_CPU_POOL_MAX)
    workers = experiment.num_workers if experiment.run_mode == "distributed" else 0
    nodes = max(1, math.ceil(workers / workers_per_cpu_node()))
    return PoolShape(CPU_POOL_MACHINE, disk_size_gb=50, nodes=nodes, min_nodes=1, max_nodes=nodes + 1)


def _cluster(name: str, spec: Cluster, settings: StackSettings, cpu: PoolShape) -> tuple[GkeCluster, NodePools]:
    labels = {"tfcli-stack": settings.stack}
    gke = GkeCluster(
        name,
        GkeClusterArgs(cluster_name=name, project=settings.project, location=settings.location, labels=labels),
    )
    pools = NodePools(
        name,
        NodePoolsArgs(
            cluster=gke.cluster.name,
            project=settings.project,
            location=settings.location,
            service_account=gke.node_service_account.email,
            learner=learner_pool(spec),
            cpu=cpu,
            labels=labels,
            after=gke.node_roles,
        ),
    )
    return gke, pools


def _shared_cluster(settings: StackSettings, spec: Cluster) -> None:
    gke, pools = _cluster(spec.name, spec, settings, cpu_pool(None))
    pulumi.export("clusterName", gke.cluster.name)
    pulumi.export("endpoint", gke.cluster.endpoint)
    pulumi.export("clusterCaCertificate", gke.connection.ca_certificate)
    pulumi.export("kubeconfig", gke.connection.kubeconfig())
    pulumi.export("project", settings.project)
    pulumi.export("location", settings.location)
    pulumi.export("nodeServiceAccount", gke.node_service_account.email)
    pulumi.export("nodePools", {"learner": pools.learner.name, "cpu": pools.cpu.name})
    pulumi.export("gpuType", spec.gpu_type or "")
    pulumi.export("gpusPerNode", spec.gpus_per_node or 0)


def shared_connection(name: str, stack: str) -> ClusterConnection:
    """The shared cluster of stack ``stack``, read through a StackReference (its outputs, see ``_shared_cluster``)."""
    shared = pulumi.StackReference(f"{name}-cluster-stack", stack_name=stack)
    return ClusterConnection(
        name=shared.require_output("clusterName"),
        endpoint=shared.require_output("endpoint"),
        ca_certificate=shared.require_output("clusterCaCertificate"),
        project=shared.require_output("project"),
        location=shared.require_output("location"),
    )


def _experiment(settings: StackSettings, experiment: Experiment) -> None:
    after: list[pulumi.Resource] = []
    identity_pool: list[pulumi.Resource] = []
    if settings.shared_cluster_stack:
        connection = shared_connection(experiment.name, settings.shared_cluster_stack)
    else:
        assert experiment.cluster is not None  # stack_config checked it
        gke, pools = _cluster(experiment.name, experiment.cluster, settings, cpu_pool(experiment))
        connection = gke.connection
        after.append(pools)
        identity_pool.append(gke.cluster)
    results = ResultsBucket(
        experiment.name,
        ResultsBucketArgs(
            experiment=experiment.name,
            project=settings.project,
            location=settings.location,
            retention_days=settings.retention_days,
            labels={"tfcli-stack": settings.stack},
        ),
    )
    from infra.run_price import run_hourly_price

    context = context_for(
        experiment,
        project=settings.project,
        location=settings.location,
        image=settings.image,
        suspend=settings.suspend,
        hourly_price=run_hourly_price(experiment, shared_cluster=settings.shared_cluster_stack is not None),
    )
    generated = settings.transport_token is None
    token = pulumi.Output.secret(new_token()) if settings.transport_token is None else settings.transport_token
    workloads = ExperimentWorkloads(
        experiment.name,
        ExperimentWorkloadsArgs(
            experiment=experiment,
            context=context,
            project=settings.project,
            cluster=connection,
            writer_account=results.writer.name,
            token=token,
            keep_deployed_token=generated,
            after=[*after, results.writer_access],
            storage=[results.bucket, results.writer_access],
            identity_pool=identity_pool,
        ),
    )
    pulumi.export("experiment", experiment.name)
    pulumi.export("runMode", experiment.run_mode)
    pulumi.export("workerImage", context.worker_image)
    export_run_outputs(
        experiment.name, connection=connection, settings=settings, context=context, workloads=workloads, results=results
    )


def export_run_outputs(
    name: str, *, connection: Any, settings: Any, context: Any, workloads: Any, results: Any
) -> None:
    """The outputs an experiment's stack and a sweep's stack share, which tfcli reads back: where the cluster is and
    how to reach it, the namespace and Jobs, the results bucket, the image and whether the run is suspended."""
    pulumi.export("clusterName", connection.name)
    pulumi.export("clusterLocation", connection.location)
    pulumi.export("kubeconfig", connection.kubeconfig())
    if settings.shared_cluster_stack:
        pulumi.export("sharedClusterStack", settings.shared_cluster_stack)
    pulumi.export("namespace", context.namespace)
    pulumi.export("jobs", workloads.jobs)
    pulumi.export("bucket", results.bucket.name)
    pulumi.export("resultsUrl", results.bucket.name.apply(lambda bucket: f"gs://{bucket}/{name}/"))
    pulumi.export("writerServiceAccount", results.writer.email)
    pulumi.export("image", context.image)
    pulumi.export("suspended", settings.suspend)


def run() -> None:
    """Declare this stack's resources from its config."""
    from infra.stack_config import sweep_stack_requested

    if sweep_stack_requested():  # a sweep stack (tfcli:sweep): infra.sweep_program
        from infra.sweep_program import run_sweep

        run_sweep()
        return
    settings = read_stack_config()
    if settings.cluster is not None:
        _shared_cluster(settings, settings.cluster)
    else:
        assert settings.experiment is not None
        _experiment(settings, settings.experiment)
