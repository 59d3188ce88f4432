"""NodePools: the learner pool (the Cluster spec's shape, GPUs, spot, autoscaling) and a small CPU pool for the
environment workers and GKE's system pods (on-demand, never below one node, so the cluster always has a home for
them while the learner pool sits at zero)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

from infra import naming
from infra.cluster import CLOUD_PLATFORM_SCOPE, TIMEOUTS
from infra.sizing import PoolShape

# "DEFAULT": the driver version GKE tests with the node's GKE version (COS); GKE installs it, no DaemonSet needed.
GPU_DRIVER_VERSION = "DEFAULT"
# GKE's default surge upgrade (max_surge 1, max_unavailable 0) first creates one extra node, which for a GPU pool needs
# one node's worth of spare GPU quota in the region: a project whose quota the pool already uses (a T4 or two, often
# all a new project has) never gets that node, and the auto-upgrade stalls and retries. Upgrading in place (no surge
# node, one node at a time down) needs no extra quota; a learner on the drained node checkpoints on SIGTERM and
# resumes once the upgraded node is back, as after a spot reclaim. CPU pools keep the default surge (no GPU quota).
# (GKE docs: "Ensure resources for node upgrades", surge upgrades with no room for the surge node fail and are retried.)
GPU_POOL_UPGRADES: gcp.container.NodePoolUpgradeSettingsArgsDict = {
    "strategy": "SURGE",
    "max_surge": 0,
    "max_unavailable": 1,
}


@dataclass(frozen=True)
class NodePoolsArgs:
    cluster: pulumi.Input[str]
    project: str
    location: str
    service_account: pulumi.Input[str]
    learner: PoolShape
    cpu: PoolShape
    labels: dict[str, str] = field(default_factory=dict)
    # Resources the nodes need before they start (the node account's roles, so the first image pull works).
    after: Sequence[pulumi.Resource] = ()


def gpu_sharing_config(
    shape: PoolShape,
) -> gcp.container.NodePoolNodeConfigGuestAcceleratorGpuSharingConfigArgsDict | None:
    """The accelerator's ``gpu_sharing_config`` (pulumi-gcp 10.2.0: ``gpu_sharing_strategy`` ``TIME_SHARING`` or
    ``MPS``, ``max_shared_clients_per_gpu``) for a pool whose GPUs several learners share; None otherwise."""
    if shape.gpu_sharing is None:
        return None
    strategy, clients = shape.gpu_sharing
    return {"gpu_sharing_strategy": strategy, "max_shared_clients_per_gpu": clients}


def flex_start_node_config(shape: PoolShape) -> gcp.container.NodePoolNodeConfigArgsDict:
    """Flex-start (Dynamic Workload Scheduler) nodes: ``flex_start`` and no reservation, as GKE's docs create such a
    pool (``--flex-start --reservation-affinity=none``, autoscaled from zero, no auto-repair); nothing otherwise."""
    if not shape.flex_start:
        return {}
    return {"flex_start": True, "reservation_affinity": {"consume_reservation_type": "NO_RESERVATION"}}


class NodePools(pulumi.ComponentResource):
    learner: gcp.container.NodePool
    cpu: gcp.container.NodePool

    def __init__(self, name: str, args: NodePoolsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("tfcli:infra:NodePools", name, {}, opts)
        self.learner = self._pool(f"{name}-learner-pool", naming.LEARNER_POOL, args.learner, args)
        self.cpu = self._pool(f"{name}-cpu-pool", naming.CPU_POOL, args.cpu, args)
        self.register_outputs({"learnerPool": self.learner.name, "cpuPool": self.cpu.name})

    def _pool(self, resource_name: str, pool: str, shape: PoolShape, args: NodePoolsArgs) -> gcp.container.NodePool:
        node_config: gcp.container.NodePoolNodeConfigArgsDict = {
            "machine_type": shape.machine_type,
            "disk_size_gb": shape.disk_size_gb,
            "disk_type": "pd-balanced",
            "image_type": "COS_CONTAINERD",
            "spot": shape.spot,
            "service_account": args.service_account,
            "oauth_scopes": [CLOUD_PLATFORM_SCOPE],
            "workload_metadata_config": {"mode": "GKE_METADATA"},
            # Image streaming: a new node (every spot replacement) starts the trainer while its image streams
            # from Artifact Registry instead of after pulling the whole CUDA image.
            "gcfs_config": {"enabled": True},
            "shielded_instance_config": {"enable_integrity_monitoring": True},
            "metadata": {"disable-legacy-endpoints": "true"},
            "labels": {naming.POOL_LABEL: pool},
            "resource_labels": {"managed-by": "tfcli", **args.labels},
        }
        if shape.gpus_per_node and shape.gpu_type:
            # GKE installs the driver and taints the nodes nvidia.com/gpu=present:NoSchedule by itself.
            accelerator: gcp.container.NodePoolNodeConfigGuestAcceleratorArgsDict = {
                "type": shape.gpu_type,
                "count": shape.gpus_per_node,
                "gpu_driver_installation_config": {"gpu_driver_version": GPU_DRIVER_VERSION},
            }
            if (sharing := gpu_sharing_config(shape)) is not None:
                accelerator["gpu_sharing_config"] = sharing
            node_config["guest_accelerators"] = [accelerator]
        node_config.update(flex_start_node_config(shape))
        autoscaling: gcp.container.NodePoolAutoscalingArgsDict = {
            "total_min_node_count": shape.min_nodes,
            "total_max_node_count": shape.max_nodes,
            # Spot capacity comes and goes per zone: let the autoscaler take any zone that has some.
            "location_policy": "ANY" if shape.spot or shape.flex_start else "BALANCED",
        }
        return gcp.container.NodePool(
            resource_name,
            name=pool,
            project=args.project,
            location=args.location,
            cluster=args.cluster,
            initial_node_count=naming.nodes_per_zone(shape.nodes, args.location),
            autoscaling=autoscaling,
            # Flex-start nodes are not repaired (GKE docs: a repair would recreate a node that waited for capacity).
            management={"auto_repair": not shape.flex_start, "auto_upgrade": True},
            upgrade_settings=GPU_POOL_UPGRADES if "guest_accelerators" in node_config else None,
            node_config=node_config,
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=list(args.after),
                custom_timeouts=TIMEOUTS,
                # The GKE pool name is fixed (pods select pools by label), so a replacement deletes first.
                delete_before_replace=True,
                # GKE cannot change a pool's initial count: a new num_nodes would recreate the pool (and stop the
                # nodes under a running learner). The autoscaler owns the size once the pool exists.
                ignore_changes=["initialNodeCount"],
            ),
        )
