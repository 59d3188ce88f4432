"""The mocks the offline plan runs the stack program under (Pulumi's own unit-test method): a fake cloud whose
resources' state is their inputs plus the few computed outputs the program reads, and a monitor that records what the
mocks API leaves out (parent, provider, dependencies, options, aliases)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc

from infra import image, naming
from infra.provider_inputs import input_problems

CLUSTER_TYPE = "gcp:container/cluster:Cluster"
DYNAMIC_TYPE = "pulumi-python:dynamic:Resource"  # infra.image_build.TrainerBuild
FAKE_ENDPOINT = "203.0.113.10"  # TEST-NET-3: never a real address
FAKE_CA = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCmZha2UKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="  # a fake PEM, base64


class FakeCloud(pulumi.runtime.Mocks):
    """Resource state = inputs + the computed outputs the program reads."""

    def __init__(self, project: str, location: str, shared_outputs: Mapping[str, Mapping[str, Any]] | None = None):
        self.project = project
        self.location = location
        self.shared_outputs = dict(shared_outputs or {})
        # Inputs the real providers would reject or drop (checked against the installed SDKs' input types).
        self.problems: list[str] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, dict[str, Any]]:
        if args.custom and args.typ != DYNAMIC_TYPE:  # a dynamic provider's inputs are its own (infra.image_build)
            self.problems += input_problems(args.typ, args.name, args.inputs)
        state = dict(args.inputs)
        if args.typ == CLUSTER_TYPE:
            state.update(endpoint=FAKE_ENDPOINT, masterAuth={"clusterCaCertificate": FAKE_CA})
        elif args.typ == "gcp:serviceaccount/account:Account":
            email = naming.service_account_email(state["accountId"], state.get("project", self.project))
            state.update(
                email=email,
                member=f"serviceAccount:{email}",
                name=f"projects/{state.get('project', self.project)}/serviceAccounts/{email}",
            )
        elif args.typ == "gcp:storage/bucket:Bucket":
            state.update(
                url=f"gs://{state['name']}", selfLink=f"https://www.googleapis.com/storage/v1/b/{state['name']}"
            )
        elif args.typ == DYNAMIC_TYPE and "context" in state:  # a trainer build: what Cloud Build would report
            state.update(fake_build(str(state["image"])))
        elif args.typ == "pulumi:pulumi:StackReference" and image.is_image_stack(str(state["name"])):
            outputs = self.shared_outputs.get(str(state["name"])) or self.image_outputs()
            state.update(outputs=dict(outputs), secretOutputNames=[])
        elif args.typ == "pulumi:pulumi:StackReference":
            stack_name = str(state["name"])
            outputs = self.shared_outputs.get(stack_name) or {
                "clusterName": stack_name.rsplit("/", 1)[-1],
                "endpoint": FAKE_ENDPOINT,
                "clusterCaCertificate": FAKE_CA,
                "project": self.project,
                "location": self.location,
            }
            state.update(outputs=dict(outputs), secretOutputNames=[])
        return f"{args.name}-id", state

    def image_outputs(self) -> dict[str, Any]:
        """An image stack's outputs, built from the context of this source (infra.image_program's)."""
        from infra.image_choice import current_context

        context = current_context()
        tags = {
            variant: image.built_image(project=self.project, location=self.location, context=context, variant=variant)
            for variant in image.VARIANTS
        }
        pinned = {variant: fake_build(tag)["pinned"] for variant, tag in tags.items()}
        return {"context": context, "tags": tags, "images": {"context": context, **pinned}}

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        return {}, None


def fake_build(tag: str) -> dict[str, str]:
    """What a successful build of ``tag`` outputs, with a digest made from the tag (no registry here)."""
    import hashlib

    digest = "sha256:" + hashlib.sha256(tag.encode()).hexdigest()
    return {"digest": digest, "pinned": f"{tag.rsplit(':', 1)[0]}@{digest}", "buildId": digest[7:15]}


class RecordingMonitor(pulumi_mocks.MockMonitor):
    """The mock monitor, also keeping what the mocks API leaves out: parent, provider, dependencies, options."""

    def __init__(self, mocks: pulumi.runtime.Mocks) -> None:
        super().__init__(mocks)
        self.records: list[dict[str, Any]] = []

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)
        if request.type != "pulumi:pulumi:Stack":
            timeouts = request.customTimeouts
            options = {
                "ignoreChanges": list(request.ignoreChanges),
                "deleteBeforeReplace": bool(request.deleteBeforeReplace),
                "customTimeouts": {"create": timeouts.create, "update": timeouts.update, "delete": timeouts.delete}
                if timeouts.create or timeouts.update or timeouts.delete
                else {},
                "aliases": [alias_of(alias) for alias in request.aliases],
            }
            self._record(request, response.urn, request.object, bool(request.custom), options)
        return response

    def ReadResource(self, request: Any) -> Any:
        """Resources a program reads rather than manages (a StackReference)."""
        response = super().ReadResource(request)
        self._record(request, response.urn, request.properties, True, {"read": True})
        return response

    def _record(self, request: Any, urn: str, properties: Any, custom: bool, options: dict[str, Any]) -> None:
        self.records.append(
            {
                "urn": urn,
                "type": request.type,
                "name": request.name,
                "custom": custom,
                "parent": request.parent or None,
                "provider": request.provider or None,
                "dependencies": list(request.dependencies),
                "propertyDependencies": {
                    urn for deps in getattr(request, "propertyDependencies", {}).values() for urn in deps.urns
                },
                "inputs": rpc.deserialize_properties(properties),
                "options": {key: value for key, value in options.items() if value},
            }
        )


def alias_of(alias: Any) -> dict[str, Any]:
    """An alias the program declared: a URN, or the spec fields it sets (``type``, ``name``, ``parentUrn``...)."""
    if alias.urn:
        return {"urn": alias.urn}
    spec = alias.spec
    fields = {"name": spec.name, "type": spec.type, "stack": spec.stack, "project": spec.project}
    fields.update(parentUrn=spec.parentUrn, noParent=spec.noParent)
    return {key: value for key, value in fields.items() if value}
