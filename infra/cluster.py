"""GkeCluster: a GKE Standard cluster without its default node pool, with Workload Identity, the GCS FUSE CSI
driver and a least-privilege service account for the nodes (the pools themselves are :mod:`infra.node_pools`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp
import yaml

from infra import naming

# What a node needs and nothing more: write logs and metrics, read monitoring metadata, pull images.
NODE_ROLES = (
    "roles/logging.logWriter",
    "roles/monitoring.metricWriter",
    "roles/monitoring.viewer",
    "roles/stackdriver.resourceMetadata.writer",
    "roles/artifactregistry.reader",
)
CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
# gke-gcloud-auth-plugin takes its token from the gcloud CLI's logged-in account unless told to use Application
# Default Credentials — the credentials tfcli configures (``credentials: application-default`` or a key file through
# GOOGLE_APPLICATION_CREDENTIALS); it is the argument ``gcloud container clusters get-credentials`` itself writes
# when ``container/use_application_default_credentials`` is set.
AUTH_PLUGIN_ARGS = ["--use_application_default_credentials"]
# GKE takes 5-15 minutes to create a cluster and can take longer to update or delete one.
TIMEOUTS = pulumi.CustomTimeouts(create="45m", update="45m", delete="45m")


@dataclass(frozen=True)
class GkeClusterArgs:
    """``cluster_name`` is GKE's name (at most 40 characters); ``location`` a zone (zonal) or region (regional)."""

    cluster_name: str
    project: str
    location: str
    release_channel: str = "REGULAR"
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ClusterConnection:
    """How to reach a cluster: enough for a kubeconfig (from a GkeCluster or from a shared cluster's stack)."""

    name: pulumi.Input[str]
    endpoint: pulumi.Input[str]
    ca_certificate: pulumi.Input[str]
    project: pulumi.Input[str]
    location: pulumi.Input[str]

    def kubeconfig(self) -> pulumi.Output[str]:
        """A kubeconfig that authenticates through ``gke-gcloud-auth-plugin`` with Application Default Credentials
        (no credentials in it)."""
        return pulumi.Output.all(self.name, self.endpoint, self.ca_certificate, self.project, self.location).apply(
            lambda values: kubeconfig_text(*values)
        )


def kubeconfig_text(name: str, endpoint: str, ca_certificate: str, project: str, location: str) -> str:
    context = f"gke_{project}_{location}_{name}"
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": context,
                "cluster": {"server": f"https://{endpoint}", "certificate-authority-data": ca_certificate},
            }
        ],
        "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
        "current-context": context,
        "users": [
            {
                "name": context,
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        "command": "gke-gcloud-auth-plugin",
                        "args": list(AUTH_PLUGIN_ARGS),
                        "installHint": "gcloud components install gke-gcloud-auth-plugin",
                        "provideClusterInfo": True,
                    }
                },
            }
        ],
    }
    return yaml.safe_dump(config, sort_keys=False)


class GkeCluster(pulumi.ComponentResource):
    """The cluster, its node service account and that account's project roles."""

    cluster: gcp.container.Cluster
    node_service_account: gcp.serviceaccount.Account
    node_roles: list[gcp.projects.IAMMember]
    connection: ClusterConnection

    def __init__(self, name: str, args: GkeClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("tfcli:infra:GkeCluster", name, {}, opts)
        child = pulumi.ResourceOptions(parent=self)
        labels = {"managed-by": "tfcli", **args.labels}

        self.node_service_account = gcp.serviceaccount.Account(
            f"{name}-nodes",
            project=args.project,
            account_id=naming.node_account_id(args.cluster_name),
            display_name=f"GKE nodes of {args.cluster_name} (tfcli)",
            opts=child,
        )
        self.node_roles = [
            gcp.projects.IAMMember(
                f"{name}-nodes-{role.removeprefix('roles/').replace('.', '-').lower()}",
                project=args.project,
                role=role,
                member=self.node_service_account.member,
                opts=child,
            )
            for role in NODE_ROLES
        ]
        self.cluster = gcp.container.Cluster(
            f"{name}-cluster",
            name=args.cluster_name,
            project=args.project,
            location=args.location,
            # Node pools are separate resources: GKE needs a default pool to create the cluster, then drops it.
            remove_default_node_pool=True,
            initial_node_count=1,
            # ...and even that short-lived pool runs as the node account, never the default compute one.
            node_config={
                "service_account": self.node_service_account.email,
                "oauth_scopes": [CLOUD_PLATFORM_SCOPE],
                "workload_metadata_config": {"mode": "GKE_METADATA"},
            },
            workload_identity_config={"workload_pool": f"{args.project}.svc.id.goog"},
            release_channel={"channel": args.release_channel},
            addons_config={"gcs_fuse_csi_driver_config": {"enabled": True}},
            # Scale idle GPU nodes away sooner than the default profile does.
            cluster_autoscaling={"autoscaling_profile": "OPTIMIZE_UTILIZATION"},
            resource_labels=labels,
            deletion_protection=False,
            opts=pulumi.ResourceOptions(
                parent=self,
                custom_timeouts=TIMEOUTS,
                # The default pool is gone after creation; its node_config must not cause a replacement later.
                ignore_changes=["nodeConfig"],
            ),
        )
        self.connection = ClusterConnection(
            name=self.cluster.name,
            endpoint=self.cluster.endpoint,
            ca_certificate=self.cluster.master_auth.cluster_ca_certificate.apply(lambda ca: ca or ""),
            project=args.project,
            location=args.location,
        )
        self.register_outputs(
            {
                "name": self.cluster.name,
                "endpoint": self.cluster.endpoint,
                "nodeServiceAccount": self.node_service_account.email,
            }
        )
