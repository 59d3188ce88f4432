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

import contextlib
import io
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fake_pulumi_events import EventLog

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


def requirements(config: dict[str, Any]) -> str | None:
    return mapping(config["tfcli:images"]).get("requirements")


def image_resources(config: dict[str, Any]) -> list[tuple[str, str]]:
    layers = [(DYNAMIC, f"trainer-{v}-layer") for v in variants(config)] if requirements(config) else []
    return [*IMAGE_PARTS, *[(DYNAMIC, f"trainer-{variant}") for variant in variants(config)], *layers]


def build_props(config: dict[str, Any], built: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Each build's inputs by resource name, as infra/trainer_images.py declares them (by infra's own naming): the
    trainer per variant, then (with ``requirements``, once the trainers are ``built``) a layer on each."""
    from pathlib import Path

    from infra import image
    from infra.image_choice import current_context
    from infra.image_context import source_root
    from infra.image_layer import layer_context

    project = str(config["gcp:project"])
    location = str(config.get("tfcli:location") or config.get("gcp:zone") or config.get("gcp:region"))
    context = current_context()
    common = {"project": project, "bucket": image.build_bucket(project), "source": "", "base": None,
              "requirements": ""}  # fmt: skip
    props = {
        f"trainer-{variant}": {
            **common,
            "variant": variant,
            "context": context,
            "source": str(source_root()),
            "image": image.built_image(project=project, location=location, context=context, variant=variant),
        }
        for variant in variants(config)
    }
    if (path := requirements(config)) and built is not None:
        layer = layer_context(Path(path)).short
        for variant in variants(config):
            tag = image.layer_image(project=project, location=location, context=context, layer=layer, variant=variant)
            props[f"trainer-{variant}-layer"] = {**common, "variant": variant, "context": layer, "image": tag,
                                                 "base": built[f"trainer-{variant}"]["pinned"],
                                                 "requirements": path}  # fmt: skip
    return props


def make_bucket(name: str) -> None:
    """The staging bucket resource's create, on the GCS emulator the tests run (``STORAGE_EMULATOR_HOST``)."""
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage

    client = storage.Client(project="test", credentials=AnonymousCredentials())
    if client.lookup_bucket(name) is None:
        client.create_bucket(name)


class ProviderStderr(io.TextIOBase):
    """The build provider's stderr, each line sent on as the engine forwards a dynamic provider's output."""

    def __init__(self, log: EventLog) -> None:
        self.log, self.pending = log, ""

    def write(self, text: str) -> int:
        *lines, self.pending = (self.pending + text).split("\n")
        for line in lines:
            self.log.provider_output(line)
        return len(text)


def up_images(record: dict[str, Any], config: dict[str, Any], log: EventLog, stack: str) -> dict[str, str]:
    """Diff and build; returns each build resource's step (``same``, ``create``, ``replace``) and keeps the builds'
    outputs in ``record["builds"]``. A build's ``resourcePreEvent`` goes out when its create starts and the
    provider's stderr (its progress lines) as it is written. Raises :class:`BuildError` when a create fails (what
    was built stays built)."""
    from infra.image_build import TrainerBuildProvider, run_build

    provider = TrainerBuildProvider()
    builds = record.setdefault("builds", {})
    make_bucket(next(iter(build_props(config).values()))["bucket"])
    steps: dict[str, str] = {}
    for wave in (build_props(config), None):  # the trainers, then the layers FROM them
        wave = wave if wave is not None else build_props(config, builds)
        for name, props in wave.items():
            if name in steps:
                continue
            old = builds.get(name)
            if old is not None and not provider.diff(old["buildId"], old, props).changes:
                steps[name] = "same"
                continue
            steps[name] = "create" if old is None else "replace"
            log.begin(stack, steps[name], DYNAMIC, name)
            try:
                with contextlib.redirect_stderr(ProviderStderr(log)):
                    builds[name] = run_build(props, interval=0)
            except Exception as error:
                raise BuildError(name, str(error)) from None
    return steps


def image_outputs(record: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """infra/image_program.py's outputs from the builds kept."""
    from infra import image
    from infra.image_choice import current_context

    builds = record.get("builds", {})
    context = current_context()
    project = str(config["gcp:project"])
    location = str(config.get("gcp:zone") or config.get("gcp:region"))
    suffix = "-layer" if requirements(config) else ""
    pulled = {v: builds[f"trainer-{v}{suffix}"] for v in variants(config)}
    return {
        "repository": image.repository(project=project, location=location),
        "context": context,
        "layer": pulled[variants(config)[0]]["context"] if suffix else "",
        "images": {"context": context, **{v: build["pinned"] for v, build in pulled.items()}},
        "tags": {v: build["image"] for v, build in pulled.items()},
        "builds": {v: build["buildId"] for v, build in pulled.items()},
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
