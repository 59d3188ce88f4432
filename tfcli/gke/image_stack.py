"""The project's image stack (``image.<gcp project>``, :mod:`infra.image_program`): the Artifact Registry repository
and the trainer built by Cloud Build from this source, made before the first run needs them.

- :func:`ensure_images` is what every GKE run's deploy calls (:func:`tfcli.gke.deploy.deploy`) when its stack pulls
  the built trainer (``tfcli:imageStack``, no ``tfcli:image``): nothing when the stack is deployed and built from
  this source's context (so a second start with the trainer unchanged submits no build and runs no update);
  otherwise an ``up`` of the image stack — on a terminal, a stack that does not exist yet is asked for first (as a
  missing Pulumi CLI is); with no one to ask it is built, since the run cannot start without it.
- :func:`build_images`, :func:`image_state` and :func:`delete_images` back ``tfcli image build|list|delete``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

from infra.image import image_stack_name
from tfcli.gke.events import UpdateObserver
from tfcli.gke.gcp_project import require_gcp
from tfcli.gke.stacks import Stacks
from tfcli.project import ProjectDir
from tfcli.stackfiles.files import StackFile, location_config, stack_path
from trainer.kernel.config_keys import IMAGE_KEY, IMAGE_STACK_KEY, IMAGES_KEY, PROJECT_KEY, REGION_KEY
from trainer.kernel.errors import TfcliError

BuildPrompt = Callable[[str], bool]  # asked (with the stack's name) before a project's first image build


def wanted_image_stack(config: dict[str, Any]) -> str | None:
    """The image stack a run's stack config pulls from, or None (a named image, or none asked for)."""
    if config.get(IMAGE_KEY):
        return None
    stack = config.get(IMAGE_STACK_KEY)
    return str(stack) if stack else None


def current_context() -> str:
    """The short digest of this source's build context (:mod:`infra.image_context`)."""
    from infra.image_choice import current_context as context

    return context()


def requirements_file(project: ProjectDir) -> str | None:
    """tfcli.yaml's ``image: {requirements: FILE}`` (relative to the project's root), else None."""
    layer = project.settings.image
    return None if layer is None or isinstance(layer, str) else layer.requirements


def current_layer(project: ProjectDir) -> str:
    """The short digest of the project's package layer ("" without one), as the image stack's ``layer`` output."""
    requirements = requirements_file(project)
    if requirements is None:
        return ""
    from infra.image_layer import layer_context

    return layer_context(project.root / requirements, where="tfcli.yaml: image.requirements").short


def image_stack_file(project: ProjectDir) -> StackFile:
    """``stacks/Pulumi.image.<project>.yaml``: ``tfcli:images`` (kept as the user left it) and the location."""
    name = image_stack_name(require_gcp(project))
    path = stack_path(project, name)
    stack_file = StackFile.read(path) or StackFile(path, ["# The trainer image of this GCP project (tfcli image)."])
    config = stack_file.config
    images = dict(config.get(IMAGES_KEY) or {"variants": ["cpu", "gpu"]})
    if (requirements := requirements_file(project)) is not None:  # tfcli.yaml's image: {requirements: FILE}
        images["requirements"] = requirements
    else:
        images.pop("requirements", None)
    config[IMAGES_KEY] = images
    config[PROJECT_KEY] = project.settings.gcp_project
    config[REGION_KEY] = location_config(project.settings.location)[REGION_KEY]
    return stack_file


@dataclass(frozen=True)
class ImageState:
    """What the image stack holds: its outputs, and whether they are this source's build."""

    stack: str
    outputs: dict[str, Any]
    context: str  # this source's

    @property
    def built(self) -> bool:
        return bool(self.outputs)

    @property
    def current(self) -> bool:
        return self.outputs.get("context") == self.context

    def rows(self) -> list[dict[str, str]]:
        """One row per built variant: variant, tag, pinned digest, build id."""
        images, tags, builds = (dict(self.outputs.get(key) or {}) for key in ("images", "tags", "builds"))
        return [
            {
                "variant": variant,
                "tag": str(tags.get(variant, "")),
                "image": str(images[variant]),
                "build": str(builds.get(variant, "")),
            }
            for variant in sorted(images)
            if variant != "context"
        ]


def image_state(stacks: Stacks) -> ImageState:
    name = image_stack_name(require_gcp(stacks.project))
    return ImageState(name, stacks.state(name).outputs, current_context())


def build_images(stacks: Stacks, *, observer: UpdateObserver | None = None) -> dict[str, Any]:
    """Write the image stack's file and ``pulumi up`` it: the repository, the bucket, a build per variant of this
    source's context (none when they are built already: the engine sees no change)."""
    stack_file = image_stack_file(stacks.project)
    stack_file.write()
    stack = stacks.stack(stack_file.stack, create=True)
    stacks.set_config(stack, {}, secrets=stacks.credentials())
    total = 2 + 3 + len(stack_file.config[IMAGES_KEY].get("variants", [0, 0]))
    try:
        return stacks.up(stack, observer=observer, total=total)
    except TfcliError as error:
        if _REPOSITORY_EXISTS.search(str(error)):
            raise existing_repository(stacks.project, stack_file) from None
        raise


_REPOSITORY_EXISTS = re.compile(r"Error creating Repository: googleapi: Error 409")  # pulumi-gcp's words


def existing_repository(project: ProjectDir, stack_file: StackFile) -> TfcliError:
    """The repository ``tfcli`` exists already, made outside this stack (by hand, or by the older docs' steps): the
    ``pulumi import`` that adopts it into the stack, under the component the failed update left in the state (the
    next update then sets what the program declares, the cleanup policies, in place). Not adopted silently: the
    repository may hold images someone else relies on, and the stack's cleanup policies would delete them."""
    from infra.image import REPOSITORY
    from infra.image_program import COMPONENT, component_urn
    from infra.naming import region_of

    gcp = str(stack_file.config[PROJECT_KEY])
    region = region_of(str(stack_file.config[REGION_KEY]))
    pulumi_project = str(yaml.safe_load((project.root / "Pulumi.yaml").read_text())["name"])
    parent = component_urn(stack_file.stack, pulumi_project)
    repository_id = f"projects/{gcp}/locations/{region}/repositories/{REPOSITORY}"
    command = (
        f"pulumi import gcp:artifactregistry/repository:Repository {COMPONENT}-repository {repository_id} "
        f"--parent '{COMPONENT}={parent}' --protect=false --generate-code=false --yes -s {stack_file.stack}"
    )
    return TfcliError(
        f"the Artifact Registry repository '{REPOSITORY}' already exists in GCP project {gcp} ({region}), made "
        f"outside the image stack {stack_file.stack}",
        hint=f"adopt it into the stack, then run this command again: {command} (the stack's cleanup policies then "
        "apply to the images in it); or name a ready image with `image:` in tfcli.yaml",
    )


def ensure_images(
    stacks: Stacks,
    name: str,
    *,
    observer: UpdateObserver | None = None,
    prompt: BuildPrompt | None = None,
) -> dict[str, Any]:
    """The image stack ``name`` built from this source, building it when it is missing or older."""
    expected = image_stack_name(require_gcp(stacks.project))
    if name != expected:
        raise TfcliError(
            f"the stack file asks for the image stack '{name}', but this project's GCP project has '{expected}'",
            hint=f"set {IMAGE_STACK_KEY} to {expected} (or remove it: tfcli writes it), or name an image in tfcli.yaml",
        )
    state = stacks.state(name)
    current = state.outputs.get("context") == current_context()
    if state.deployed and current and (state.outputs.get("layer") or "") == current_layer(stacks.project):
        return state.outputs
    if not state.exists and prompt is not None and not prompt(name):
        raise TfcliError(
            "the trainer image is not built in this GCP project, and the run cannot start without it",
            hint="build it with `tfcli image build`, or name a ready image with `image:` in tfcli.yaml",
        )
    return build_images(stacks, observer=observer)


def delete_images(stacks: Stacks, *, observer: UpdateObserver | None = None) -> bool:
    """Destroy the image stack (the repository and every image in it) and remove it; False when there was none."""
    name = image_stack_name(require_gcp(stacks.project))
    state = stacks.state(name)
    if not state.exists:
        return False
    stack = stacks.stack(name)
    if state.may_have_resources:
        stacks.destroy(stack, observer=observer)
    stacks.remove(stack)
    return True
