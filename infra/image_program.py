"""The image stack's program (``image.<project>``, :func:`infra.image.image_stack_name`): config ``tfcli:images``
-> :class:`infra.trainer_images.TrainerImages`, and the outputs run stacks read through a StackReference.

``tfcli:images`` is ``{variants: [cpu, gpu], keep_newest: 5, requirements: PATH}`` (all optional; ``requirements``:
the project's packages, a layer on each variant, :mod:`infra.image_layer`). Outputs: ``repository`` (the trainer
package's address), ``context`` (the short digest the trainer was built from), ``layer`` (the layer's, or ""),
``images`` (``{variant: <repository>@sha256:...}`` — the layer's when there is one — plus ``context``), ``tags``
(``{variant: <repository>:<context>[-<layer>]-<variant>}``) and ``builds`` (``{variant: build id}``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from infra import image
from infra.naming import region_of
from infra.stack_config import config_mapping, config_where
from trainer.kernel.config_keys import IMAGES_KEY, LOCATION_KEY, PROJECT_KEY, REGION_KEY, ZONE_KEY
from trainer.kernel.errors import InvalidInput

DEFAULT_KEEP = 5


@dataclass(frozen=True)
class ImageSettings:
    stack: str
    project: str
    location: str
    variants: tuple[str, ...] = image.VARIANTS
    keep_newest: int = DEFAULT_KEEP
    requirements: str | None = None  # the project's packages (a path under its root), a layer on each variant


def image_settings_from_config(config: Mapping[str, Any], *, stack: str) -> ImageSettings:
    """Validate an image stack's config; every mistake names the stack file and the key."""
    raw = config_mapping(stack, IMAGES_KEY, config.get(IMAGES_KEY)) or {}
    where = config_where(stack, IMAGES_KEY)
    if not isinstance(raw, dict):
        raise InvalidInput(f"{where}: expected a mapping, got {raw!r}")
    unknown = sorted(set(raw) - {"variants", "keep_newest", "requirements"})
    if unknown:
        raise InvalidInput(f"{where}.{unknown[0]}: unknown key (known: keep_newest, requirements, variants)")
    requirements = raw.get("requirements")
    if requirements is not None and (
        not isinstance(requirements, str) or not requirements or requirements.startswith("/")
    ):
        raise InvalidInput(f"{where}.requirements: expected a file's path inside the project, got {requirements!r}")
    variants = raw.get("variants", list(image.VARIANTS))
    if not isinstance(variants, list) or not variants or any(v not in image.VARIANTS for v in variants):
        raise InvalidInput(f"{where}.variants: expected a list of {', '.join(image.VARIANTS)}, got {variants!r}")
    keep = raw.get("keep_newest", DEFAULT_KEEP)
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
        raise InvalidInput(f"{where}.keep_newest: expected a whole number of at least 1, got {keep!r}")
    project = str(config.get(PROJECT_KEY) or "")
    if not project:
        raise InvalidInput(f"Pulumi.{stack}.yaml: gcp:project is not set (pulumi config set gcp:project PROJECT)")
    location = next((str(config[k]) for k in (LOCATION_KEY, ZONE_KEY, REGION_KEY) if config.get(k)), "")
    if not location:
        raise InvalidInput(f"Pulumi.{stack}.yaml: no location: set {LOCATION_KEY}, gcp:zone or gcp:region")
    try:
        region_of(location)
    except ValueError as error:
        raise InvalidInput(f"Pulumi.{stack}.yaml: {error}") from None
    return ImageSettings(stack, project, location, tuple(dict.fromkeys(variants)), keep, requirements)


def layer_of(settings: ImageSettings) -> str | None:
    """The short digest of the project's layer (its requirements file, read now, from the project's root)."""
    if not settings.requirements:
        return None
    from pathlib import Path

    from infra.image_layer import layer_context

    where = f"{config_where(settings.stack, IMAGES_KEY)}.requirements"
    return layer_context(Path(settings.requirements), where=where).short


COMPONENT = "trainer"  # the TrainerImages component's name: its repository is ``trainer-repository``


def component_urn(stack: str, pulumi_project: str) -> str:
    """The engine's URN of the TrainerImages component (a child of the stack: its type is qualified by the stack's,
    ``pulumi:pulumi:Stack$``), what ``pulumi import --parent`` names to adopt a repository under it."""
    return f"urn:pulumi:{stack}::{pulumi_project}::pulumi:pulumi:Stack$tfcli:infra:TrainerImages::{COMPONENT}"


def declare_images(settings: ImageSettings, *, source: str, context: str) -> None:
    import pulumi

    from infra.trainer_images import TrainerImages, TrainerImagesArgs

    images = TrainerImages(
        COMPONENT,
        TrainerImagesArgs(
            project=settings.project,
            location=settings.location,
            context=context,
            source=source,
            variants=settings.variants,
            keep_newest=settings.keep_newest,
            requirements=settings.requirements,
            layer=(layer := layer_of(settings)),
            labels={"tfcli-stack": settings.stack.replace(".", "-")[:63]},
        ),
    )
    pinned = {variant: build.pinned for variant, build in images.pulled.items()}
    pulumi.export("repository", image.repository(project=settings.project, location=settings.location))
    pulumi.export("context", context)
    pulumi.export("layer", layer or "")
    pulumi.export("images", {**pinned, "context": context})
    pulumi.export("tags", {variant: build.image for variant, build in images.pulled.items()})
    pulumi.export("builds", {variant: build.buildId for variant, build in images.pulled.items()})


def run_images() -> None:
    """The program of an image stack: read its config, read the trainer's context, declare."""
    import pulumi

    from infra.image_context import build_context, source_root
    from infra.stack_config import read_config_values

    config = read_config_values((IMAGES_KEY,))
    settings = image_settings_from_config(config, stack=pulumi.get_stack())
    root = source_root()
    declare_images(settings, source=str(root), context=build_context(root).short)
