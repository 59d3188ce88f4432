"""TrainerImages: what a GCP project needs to run the trainer without anyone building an image by hand — the
Artifact Registry repository (Docker format, with cleanup policies), the bucket that stages build contexts and keeps
build logs, and one :class:`infra.image_build.TrainerBuild` per variant.

Cleanup policies (Artifact Registry, "Configure cleanup policies"): a version is deleted when a DELETE policy
matches and no KEEP policy does — KEEP wins. So: KEEP the versions tagged with the current context (in use by every
run deployed from this source), KEEP the newest ``keep_newest`` versions (older runs still deployed pull by
digest), DELETE what is older than ``DELETE_AFTER``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

from infra import image
from infra.image_build import TrainerBuild, TrainerBuildArgs
from infra.naming import region_of

DELETE_AFTER = f"{30 * 24 * 3600}s"  # 30 days
BUILD_FILES_DAYS = 7  # staged contexts and build logs


@dataclass(frozen=True)
class TrainerImagesArgs:
    project: str
    location: str  # a zone or a region: the repository is in its region
    context: str  # the build context's short digest
    source: str  # the folder the context is read from
    variants: Sequence[str] = image.VARIANTS
    keep_newest: int = 5
    requirements: str | None = None  # the project's packages, a layer on each variant (infra/image_layer.py)
    layer: str | None = None  # that layer's context digest
    labels: Mapping[str, str] = field(default_factory=dict)


def cleanup_policies(context: str, keep_newest: int) -> list[gcp.artifactregistry.RepositoryCleanupPolicyArgsDict]:
    return [
        {"id": "keep-in-use", "action": "KEEP", "condition": {"tag_state": "TAGGED", "tag_prefixes": [context]}},
        {"id": "keep-newest", "action": "KEEP", "most_recent_versions": {"keep_count": keep_newest}},
        {"id": "delete-old", "action": "DELETE", "condition": {"tag_state": "ANY", "older_than": DELETE_AFTER}},
    ]


class TrainerImages(pulumi.ComponentResource):
    repository: gcp.artifactregistry.Repository
    bucket: gcp.storage.Bucket
    builds: dict[str, TrainerBuild]
    pulled: dict[str, TrainerBuild]  # what runs pull per variant: the layer when there is one, else the trainer

    def __init__(self, name: str, args: TrainerImagesArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("tfcli:infra:TrainerImages", name, {}, opts)
        region = region_of(args.location)
        labels = {"managed-by": "tfcli", **args.labels}
        self.repository = gcp.artifactregistry.Repository(
            f"{name}-repository",
            project=args.project,
            location=region,
            repository_id=image.REPOSITORY,
            format="DOCKER",
            description="tfcli trainer images, built by Cloud Build from the trainer's source",
            cleanup_policies=cleanup_policies(args.context, args.keep_newest),
            cleanup_policy_dry_run=False,
            labels=labels,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.bucket = gcp.storage.Bucket(
            f"{name}-builds",
            name=image.build_bucket(args.project),
            project=args.project,
            location=region,
            uniform_bucket_level_access=True,
            public_access_prevention="enforced",
            force_destroy=True,
            lifecycle_rules=[{"action": {"type": "Delete"}, "condition": {"age": BUILD_FILES_DAYS}}],
            labels=labels,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.builds = {
            variant: TrainerBuild(
                f"{name}-{variant}",
                TrainerBuildArgs(
                    project=args.project,
                    bucket=self.bucket.name,
                    image=image.built_image(
                        project=args.project, location=args.location, context=args.context, variant=variant
                    ),
                    variant=variant,
                    context=args.context,
                    source=args.source,
                ),
                pulumi.ResourceOptions(parent=self, depends_on=[self.repository, self.bucket]),
            )
            for variant in args.variants
        }
        self.pulled = dict(self.builds)
        if args.requirements and args.layer:
            self.pulled = {variant: self._layer(name, args, variant) for variant in args.variants}
        self.register_outputs({"repository": self.repository.name, "bucket": self.bucket.name})

    def _layer(self, name: str, args: TrainerImagesArgs, variant: str) -> TrainerBuild:
        assert args.requirements and args.layer
        return TrainerBuild(
            f"{name}-{variant}-layer",
            TrainerBuildArgs(
                project=args.project,
                bucket=self.bucket.name,
                image=image.layer_image(
                    project=args.project,
                    location=args.location,
                    context=args.context,
                    layer=args.layer,
                    variant=variant,
                ),
                variant=variant,
                context=args.layer,
                base=self.builds[variant].pinned,
                requirements=args.requirements,
            ),
            pulumi.ResourceOptions(parent=self, depends_on=[self.repository, self.bucket]),
        )
