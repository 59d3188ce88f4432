"""ResultsBucket: the experiment's results bucket and the one Google service account that may write it.

The bucket: uniform bucket-level access, public access prevention enforced, no soft-delete retention (the trainer
rewrites checkpoints often; soft-deleted copies would be billed for a week), objects deleted after
``retention_days`` (0 keeps them). ``force_destroy``: ``pulumi destroy`` (``tfcli experiment stop``) deletes the
bucket with its contents — ``stop`` downloads the results first; download them yourself before a plain
``pulumi destroy``.

The writer account gets ``roles/storage.objectAdmin`` on this bucket only (no project-level storage role), and the
experiment's Kubernetes service account acts as it through Workload Identity (:mod:`infra.workloads`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

from infra import naming


@dataclass(frozen=True)
class ResultsBucketArgs:
    experiment: str
    project: str
    location: str  # a region or a zone; the bucket lives in the region
    retention_days: int = 90
    labels: Mapping[str, str] = field(default_factory=dict)


class ResultsBucket(pulumi.ComponentResource):
    bucket: gcp.storage.Bucket
    writer: gcp.serviceaccount.Account
    writer_access: gcp.storage.BucketIAMMember

    def __init__(self, name: str, args: ResultsBucketArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("tfcli:infra:ResultsBucket", name, {}, opts)
        child = pulumi.ResourceOptions(parent=self)
        lifecycle: list[gcp.storage.BucketLifecycleRuleArgsDict] = (
            [{"action": {"type": "Delete"}, "condition": {"age": args.retention_days}}] if args.retention_days else []
        )
        self.bucket = gcp.storage.Bucket(
            f"{name}-bucket",
            name=naming.bucket_name(args.experiment, args.project),
            project=args.project,
            location=naming.region_of(args.location).upper(),
            storage_class="STANDARD",
            uniform_bucket_level_access=True,
            public_access_prevention="enforced",
            soft_delete_policy={"retention_duration_seconds": 0},
            lifecycle_rules=lifecycle,
            force_destroy=True,
            labels={"managed-by": "tfcli", "tfcli-experiment": args.experiment, **args.labels},
            opts=child,
        )
        self.writer = gcp.serviceaccount.Account(
            f"{name}-writer",
            project=args.project,
            account_id=naming.writer_account_id(args.experiment),
            display_name=f"tfcli experiment {args.experiment}: writes its results bucket",
            opts=child,
        )
        self.writer_access = gcp.storage.BucketIAMMember(
            f"{name}-writer-access",
            bucket=self.bucket.name,
            role="roles/storage.objectAdmin",
            member=self.writer.member,
            opts=child,
        )
        self.register_outputs({"bucket": self.bucket.name, "writer": self.writer.email})
