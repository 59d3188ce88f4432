"""What an experiment's stack and a sweep's stack declare alike: the cluster the run goes on (its own, or a shared
cluster's through a StackReference), its results bucket, its :class:`infra.workloads.Workloads` and the outputs tfcli
reads back. The two programs (:mod:`infra.program`, :mod:`infra.sweep_program`) differ only in the manifests they
hand over and the outputs they add."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi

from infra.cluster import ClusterConnection, GkeCluster, GkeClusterArgs
from infra.image_choice import image_pins
from infra.node_pools import NodePools, NodePoolsArgs
from infra.pod_parts import ManifestContext
from infra.results_bucket import ResultsBucket, ResultsBucketArgs
from infra.sizing import PoolShape, learner_pool, starting_at
from infra.stack_config import StackSettings
from infra.workloads import Workloads, WorkloadsArgs
from trainer.kernel.spec import Cluster

# The Workloads component's types before it served both kinds of run. A stack deployed with one of them keeps its
# resources (its Jobs, its namespace) through the rename: the component declares its old type as an alias, and its
# children, whose URNs name their parent's type, inherit that alias.
OLD_WORKLOADS_TYPES = {"experiment": "tfcli:infra:ExperimentWorkloads", "sweep": "tfcli:infra:SweepWorkloads"}


def declare_cluster(
    name: str, spec: Cluster, settings: StackSettings, cpu: PoolShape, *, learners: int | None = None
) -> tuple[GkeCluster, NodePools]:
    """A GKE cluster and its two node pools: the learner pool the Cluster spec describes, starting with ``learners``
    nodes (None, a shared cluster: at its minimum; :func:`infra.sizing.starting_at`), and ``cpu``."""
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
            learner=starting_at(learner_pool(spec), learners),
            cpu=cpu,
            labels=labels,
            after=gke.node_roles,
        ),
    )
    return gke, pools


def shared_connection(name: str, stack: str) -> ClusterConnection:
    """The shared cluster of stack ``stack``, read through a StackReference (the outputs a cluster stack exports)."""
    shared = pulumi.StackReference(f"{name}-cluster-stack", stack_name=stack)
    return ClusterConnection(
        name=shared.require_output("clusterName"),
        endpoint=shared.require_output("endpoint"),
        ca_certificate=shared.require_output("clusterCaCertificate"),
        project=shared.require_output("project"),
        location=shared.require_output("location"),
    )


@dataclass(frozen=True)
class RunStack:
    """What a run's stack declares: its cluster (own or shared), its results bucket, and its workloads."""

    name: str
    settings: StackSettings
    cluster: Cluster | None  # the run's own cluster's spec (None on a shared cluster)
    cpu: PoolShape  # its own cluster's CPU pool
    learners: int = 1  # the learner nodes it uses at a time (its own cluster's learner pool starts with them)


def declare_run(
    run: RunStack,
    context: ManifestContext,
    objects: list[dict[str, Any]],
    *,
    kind: str,
    keep_deployed_token: bool = False,
) -> Workloads:
    """The run's cluster, bucket and workloads (``objects``: its Kubernetes manifests), then the outputs tfcli reads
    back: where the cluster is and how to reach it, the namespace and Jobs, the bucket, the image, ``suspended``."""
    name, settings = run.name, run.settings
    after: list[pulumi.Resource] = []
    identity_pool: list[pulumi.Resource] = []
    if settings.shared_cluster_stack:
        connection = shared_connection(name, settings.shared_cluster_stack)
    else:
        assert run.cluster is not None  # the stack config was checked for it
        gke, pools = declare_cluster(name, run.cluster, settings, run.cpu, learners=run.learners)
        connection = gke.connection
        after.append(pools)
        identity_pool.append(gke.cluster)
    results = ResultsBucket(
        name,
        ResultsBucketArgs(
            experiment=name,
            project=settings.project,
            location=settings.location,
            retention_days=settings.retention_days,
            labels={"tfcli-stack": settings.stack},
        ),
    )
    workloads = Workloads(
        name,
        WorkloadsArgs(
            objects=objects,
            namespace=context.namespace,
            project=settings.project,
            cluster=connection,
            writer_account=results.writer.name,
            keep_deployed_token=keep_deployed_token,
            after=[*after, results.writer_access],
            storage=[results.bucket, results.writer_access],
            identity_pool=identity_pool,
            pins=image_pins(name, settings.image_stack, {context.image, context.worker_image}),
        ),
        pulumi.ResourceOptions(aliases=[pulumi.Alias(type_=OLD_WORKLOADS_TYPES[kind])]),
    )
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
    return workloads
