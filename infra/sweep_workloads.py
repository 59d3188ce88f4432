"""SweepWorkloads: a sweep's Kubernetes objects (:func:`infra.sweep_manifests.build_sweep_manifests`, one Pulumi
resource each), the Kubernetes provider built from the cluster's outputs, and the Workload Identity binding that lets
the sweep's Kubernetes service account write its bucket — as :class:`infra.workloads.ExperimentWorkloads` does for
one experiment."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from infra import naming
from infra.cluster import ClusterConnection
from infra.manifests import ManifestContext
from infra.sweep_manifests import build_sweep_manifests
from infra.workloads import _KINDS, _snake, resource_role
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
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=args.cluster.kubeconfig(),
            delete_unreachable=True,
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(args.after)),
        )
        self.workload_identity = gcp.serviceaccount.IAMMember(
            f"{name}-workload-identity",
            service_account_id=args.writer_account,
            role="roles/iam.workloadIdentityUser",
            member=f"serviceAccount:{args.project}.svc.id.goog[{ctx.namespace}/{naming.RUNNER_SERVICE_ACCOUNT}]",
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(args.identity_pool)),
        )
        self.objects = {}
        self.jobs: list[str] = []
        namespace: pulumi.CustomResource | None = None
        support: list[pulumi.Resource] = []
        for obj in build_sweep_manifests(args.sweep, args.trials, ctx, parallelism=args.parallelism):
            depends: list[pulumi.Resource] = [namespace] if namespace is not None else list(args.storage)
            options: dict[str, Any] = {}
            if obj["kind"] == "Job":
                self.jobs.append(obj["metadata"]["name"])
                depends += [*support, self.workload_identity, *args.after]
                options["delete_before_replace"] = True
            factory = _KINDS[(obj["apiVersion"], obj["kind"])]
            fields = {_snake(key): value for key, value in obj.items() if key not in ("apiVersion", "kind")}
            resource = factory(
                f"{name}-{resource_role(obj)}",
                opts=pulumi.ResourceOptions(parent=self, provider=self.provider, depends_on=depends, **options),
                **fields,
            )
            self.objects[resource_role(obj)] = resource
            if obj["kind"] == "Namespace":
                namespace = resource
            elif obj["kind"] != "Job":
                support.append(resource)
        self.register_outputs({"namespace": ctx.namespace, "jobs": self.jobs})
