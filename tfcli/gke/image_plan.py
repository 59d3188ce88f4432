"""What ``experiment plan`` adds for a run that pulls the built trainer: the image stack's resources (the
repository, the bucket, a build per variant) and what building and keeping the image costs — built by the first
``start`` and again only when the trainer changes (:mod:`tfcli.gke.image_stack`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tfcli.gke.image_stack import wanted_image_stack

if TYPE_CHECKING:
    from infra.plan import Plan
    from infra.prices import ImageBuildEstimate


@dataclass(frozen=True)
class ImagePlan:
    plan: Plan
    estimate: ImageBuildEstimate

    def to_data(self) -> dict[str, Any]:
        import dataclasses

        return {"stack": self.plan.stack, "resources": self.plan.summary(), "cost": dataclasses.asdict(self.estimate)}


def image_plan(config: dict[str, Any]) -> ImagePlan | None:
    """The image stack a run's config pulls from, planned offline; None when the run names a ready image."""
    stack = wanted_image_stack(config)
    if stack is None:
        return None
    from infra.plan import plan_stack
    from infra.prices import image_build_estimate
    from trainer.kernel.config_keys import IMAGES_KEY, PROJECT_KEY, REGION_KEY, ZONE_KEY

    variants = ["cpu", "gpu"]
    location = {key: config[key] for key in (REGION_KEY, ZONE_KEY) if config.get(key)}
    images = {IMAGES_KEY: {"variants": variants}, PROJECT_KEY: config.get(PROJECT_KEY), **location}
    return ImagePlan(plan_stack(images, stack=stack), image_build_estimate(variants))
