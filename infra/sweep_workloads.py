"""SweepWorkloads: a sweep's Kubernetes objects (:func:`infra.sweep_manifests.build_sweep_manifests`, one Pulumi
resource each), the Kubernetes provider built from the cluster's outputs, and the Workload Identity binding that lets
the sweep's Kubernetes service account write its bucket — as :class:`infra.workloads.ExperimentWorkloads` does for
one experiment, with the same helpers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from infra.cluster import ClusterConnection
from infra.manifests import ManifestContext
from infra.sweep_manifests import build_sweep_manifests
from infra.workloads import cluster_access, declare_objects
from tfcli.spec import Experiment


@dataclass(frozen=True)
class SweepWorkloadsArgs:
    sweep: str
    trials: list[Experiment]
    parallelism: int
    context: ManifestContext
    project: str
    cluster: ClusterConnection
    writer_account: pulumi.Input[str]
    after: Sequence[pulumi.Resource] = ()
    storage: Sequence[pulumi.Resource] = ()
    identity_pool: Sequence[pulumi.Resource] = ()


class SweepWorkloads(pulumi.ComponentResource):
    provider: k8s.Provider
    workload_identity: gcp.serviceaccount.IAMMember
    objects: dict[str, pulumi.CustomResource]

    def __init__(self, name: str, args: SweepWorkloadsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("tfcli:infra:SweepWorkloads", name, {}, opts)
        ctx = args.context
        self.provider, self.workload_identity = cluster_access(self, name, args, ctx.namespace)
        self.objects, self.jobs = declare_objects(
            self,
            name,
            build_sweep_manifests(args.sweep, args.trials, ctx, parallelism=args.parallelism),
            args,
            provider=self.provider,
            workload_identity=self.workload_identity,
        )
        self.register_outputs({"namespace": ctx.namespace, "jobs": self.jobs})
