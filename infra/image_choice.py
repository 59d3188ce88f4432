"""Which trainer image a run's pods run — decided here once, for experiments and sweeps alike:

1. an image the user named (the cluster spec's ``image``, else ``tfcli:image`` from tfcli.yaml), as named;
2. else, with ``tfcli:imageStack``, the image that stack built from this source: the manifests name it by tag,
   ``<repository>:<context>-<variant>`` (so a changed trainer is a new Job name, as a changed spec is), and the Jobs
   pull it by digest (``<repository>@sha256:...``), read from the image stack's ``images`` output through a
   StackReference: every pod of a run runs the same build, and ``pulumi up -s NAME`` alone resolves the same digest;
3. else the released image of tfcli's version (:func:`infra.image.default_image`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from infra import image
from trainer.kernel.errors import TfcliError

if TYPE_CHECKING:
    import pulumi


@functools.cache
def current_context() -> str:
    """The short digest of the trainer's build context in this source (read once per program run)."""
    from infra.image_context import build_context

    return build_context().short


def run_images(
    *, chosen: str | None, image_stack: str | None, project: str, location: str, gpu: bool
) -> tuple[str, str]:
    """(the learner's image, the env workers'), by the rules above."""
    if chosen:
        return chosen, chosen
    if image_stack:
        context = current_context()
        learner = image.built_image(
            project=project, location=location, context=context, variant=image.variant_of(gpu=gpu)
        )
        worker = image.built_image(project=project, location=location, context=context, variant="cpu")
        return learner, worker
    return (
        image.default_image(project=project, location=location, gpu=gpu),
        image.default_image(project=project, location=location, gpu=False),
    )


def built_tags(images: Iterable[str]) -> set[str]:
    """Those of ``images`` that name a build of this source's context (``...:<context>-<variant>``)."""
    suffixes = tuple(f":{current_context()}-{variant}" for variant in image.VARIANTS)
    return {name for name in images if name.endswith(suffixes)}


def pins_for(outputs: Mapping[str, Any], tags: Iterable[str], stack: str) -> dict[str, str]:
    """``{tag: <repository>@sha256:...}`` from the image stack's ``images`` output; an image stack built from
    another source, or without a variant the run needs, is an error that says how to build it."""
    fix = f"`tfcli image build` (or `pulumi up -s {stack}`)"
    if outputs.get("context") != current_context():
        raise TfcliError(
            f"the image stack '{stack}' holds the trainer built from context {outputs.get('context')}, but this "
            f"source's is {current_context()}: build it with {fix}"
        )
    pins = {}
    for tag in tags:
        variant = tag.rsplit("-", 1)[1]
        if "@sha256:" not in str(outputs.get(variant, "")):
            raise TfcliError(f"the image stack '{stack}' has no {variant} image: build it with {fix}")
        pins[tag] = str(outputs[variant])
    return pins


def image_pins(name: str, image_stack: str | None, images: Iterable[str]) -> pulumi.Output[dict[str, str]] | None:
    """The digests of the built images among ``images``, through a StackReference to ``image_stack`` (None when
    the run pulls no built image)."""
    tags = built_tags(images) if image_stack else set()
    if not image_stack or not tags:
        return None
    import pulumi

    reference = pulumi.StackReference(f"{name}-image-stack", stack_name=image_stack)
    return reference.require_output("images").apply(lambda outputs: pins_for(outputs, tags, image_stack))


def pinned_image(pins: pulumi.Output[dict[str, str]], tag: str) -> pulumi.Output[str]:
    """``tag``'s digest form (``tag`` itself when it is not a built image)."""
    return pins.apply(lambda found: found.get(tag, tag))


def pin_containers(pod_spec: Mapping[str, Any], pins: pulumi.Output[dict[str, str]] | None) -> dict[str, Any]:
    """A Job's pod spec whose containers pull by digest (``pins``); unchanged without pins."""
    if pins is None:
        return dict(pod_spec)
    pinned = dict(pod_spec)
    for key in ("initContainers", "containers"):
        if key in pinned:
            pinned[key] = [{**container, "image": pinned_image(pins, container["image"])} for container in pinned[key]]
    return pinned
