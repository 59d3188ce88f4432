"""The fake ``pulumi``'s image stacks (``tfcli:images``) and the run stacks that pull from one (``tfcli:imageStack``).

An image stack's ``up`` does what the engine does with infra/image_build.py's dynamic provider: it diffs each build's
inputs against the state (the provider's ``diff``: only the image inputs count), and for a new or changed one runs the
provider's real ``create`` in this process — the context uploaded to the GCS emulator, the build submitted to the
Cloud Build stand-in (tests/gke/fake_cloud_build.py, reached through ``TFCLI_CLOUD_BUILD_HOST``) — keeping its
outputs; an exception fails the ``up`` with its message as the resource's diagnostic. The staging bucket resource is
made on the GCS emulator first, as the engine creates it before the builds that depend on it. A run stack's Jobs get the
digests through what a StackReference reads: the image stack's outputs in this state (a missing stack fails the
``up`` as Pulumi does, ``unknown stack``), checked by infra's own :func:`infra.image_choice.pins_for`.
"""

from __future__ import annotations

from typing import Any

DYNAMIC = "pulumi-python:dynamic:Resource"
IMAGE_PARTS = [
    ("tfcli:infra:TrainerImages", "trainer"),
    ("gcp:artifactregistry/repository:Repository", "trainer-repository"),
    ("gcp:storage/bucket:Bucket", "trainer-builds"),
]


class BuildError(Exception):
    """A build resource's create failed: ``urn_name`` and the provider's message."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name


def mapping(value: Any) -> dict[str, Any]:
    import json

    return json.loads(value) if isinstance(value, str) else dict(value or {})


def is_image_stack(config: dict[str, Any]) -> bool:
    return "tfcli:images" in config


def variants(config: dict[str, Any]) -> list[str]:
    return list(mapping(config["tfcli:images"]).get("variants", ["cpu", "gpu"]))


def image_resources(config: dict[str, Any]) -> list[tuple[str, str]]:
    return [*IMAGE_PARTS, *[(DYNAMIC, f"trainer-{variant}") for variant in variants(config)]]


def build_props(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each variant's build inputs, as infra/trainer_images.py declares them (by infra's own naming)."""
    from infra import image
    from infra.image_choice import current_context
    from infra.image_context import source_root

    project = str(config["gcp:project"])
    location = str(config.get("tfcli:location") or config.get("gcp:zone") or config.get("gcp:region"))
    context = current_context()
    return {
        variant: {
            "project": project,
            "bucket": image.build_bucket(project),
            "variant": variant,
            "context": context,
            "image": image.built_image(project=project, location=location, context=context, variant=variant),
            "source": str(source_root()),
        }
        for variant in variants(config)
    }


def make_bucket(name: str) -> None:
    """The staging bucket resource's create, on the GCS emulator the tests run (``STORAGE_EMULATOR_HOST``)."""
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage

    client = storage.Client(project="test", credentials=AnonymousCredentials())
    if client.lookup_bucket(name) is None:
        client.create_bucket(name)


def up_images(record: dict[str, Any], config: dict[str, Any]) -> dict[str, str]:
    """Diff and build; returns each build resource's step (``same``, ``create``, ``replace``) and keeps the builds'
    outputs in ``record["builds"]``. Raises :class:`BuildError` when a create fails (what was built stays built)."""
    from infra.image_build import TrainerBuildProvider, run_build

    provider = TrainerBuildProvider()
    builds = record.setdefault("builds", {})
    make_bucket(next(iter(build_props(config).values()))["bucket"])
    steps = {}
    for variant, props in build_props(config).items():
        old = builds.get(variant)
        if old is not None and not provider.diff(old["buildId"], old, props).changes:
            steps[variant] = "same"
            continue
        try:
            builds[variant] = run_build(props, interval=0)
        except Exception as error:
            raise BuildError(f"trainer-{variant}", str(error)) from None
        steps[variant] = "create" if old is None else "replace"
    return steps


def image_outputs(record: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """infra/image_program.py's outputs from the builds kept."""
    from infra import image
    from infra.image_choice import current_context

    builds = record.get("builds", {})
    context = current_context()
    project = str(config["gcp:project"])
    location = str(config.get("gcp:zone") or config.get("gcp:region"))
    return {
        "repository": image.repository(project=project, location=location),
        "context": context,
        "images": {"context": context, **{v: builds[v]["pinned"] for v in variants(config)}},
        "tags": {v: builds[v]["image"] for v in variants(config)},
        "builds": {v: builds[v]["buildId"] for v in variants(config)},
    }


def pinned(objects: list[dict[str, Any]], config: dict[str, Any], state: dict[str, Any]) -> list[dict[str, Any]]:
    """The Jobs' built images replaced by their digests, as the program's StackReference reads them; a run stack
    without ``tfcli:imageStack`` (or naming an image) is left as it is. Raises ``LookupError`` for a missing stack."""
    from infra.image_choice import built_tags, pins_for

    stack = config.get("tfcli:imageStack")
    if not stack or config.get("tfcli:image"):
        return objects
    jobs = [obj for obj in objects if obj["kind"] == "Job"]
    containers = [c for job in jobs for c in job["spec"]["template"]["spec"]["containers"]]
    tags = built_tags(c["image"] for c in containers)
    if not tags:
        return objects
    outputs = state["stacks"].get(stack, {}).get("outputs") or {}
    if not outputs:
        raise LookupError(f'unknown stack "organization/tfcli/{stack}"')
    pins = pins_for(outputs["images"], tags, stack)
    for container in containers:
        container["image"] = pins.get(container["image"], container["image"])
    return objects
