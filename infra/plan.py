"""The offline plan: run the stack program under Pulumi's mocks (``pulumi.runtime.set_mocks``, Pulumi's own
unit-test method — no CLI, no cloud) and report what it declares, its outputs and an hourly cost estimate.

This backs ``tfcli experiment plan`` and the tests in ``tests/infra``. The mocks stand in for GCP and Kubernetes:
each resource's state is its inputs plus the few computed outputs the program reads (a cluster's endpoint and CA
certificate, a service account's e-mail, a shared cluster stack's outputs). Secret values never appear in a plan:
they read ``[secret]``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime import rpc
from pulumi.runtime.settings import get_root_resource, set_root_resource

from infra import naming, prices
from infra.plan_mocks import CLUSTER_TYPE, FakeCloud, RecordingMonitor
from infra.provider_inputs import UnknownInputs
from infra.stack_files import read_stack_file, stack_name_of
from trainer.kernel.config_keys import LOCATION_KEY, REGION_KEY, ZONE_KEY

PROJECT = "tfcli"
SECRET = "[secret]"

NODE_POOL_TYPE = "gcp:container/nodePool:NodePool"


@dataclass(frozen=True)
class PlannedResource:
    """A declared resource: type token, name, parent/provider/dependency names and its inputs (camelCase).

    ``dependencies`` are all the resources it waits for; ``depends_on`` those it names in ``depends_on`` (the
    dependencies that come from no input).
    """

    type: str
    name: str
    urn: str
    custom: bool
    parent: str | None
    parent_type: str | None
    provider: str | None
    dependencies: tuple[str, ...]
    inputs: dict[str, Any]
    options: dict[str, Any] = field(default_factory=dict)
    depends_on: tuple[str, ...] = ()


def _job_inputs(inputs: dict[str, Any]) -> dict[str, Any]:
    spec = inputs.get("spec", {})
    containers = spec.get("template", {}).get("spec", {}).get("containers", [{}])
    limits = containers[0].get("resources", {}).get("limits", {})
    return {
        "image": containers[0].get("image"),
        "suspend": spec.get("suspend"),
        "pods": spec.get("parallelism", 1),
        "cpu": limits.get("cpu"),
        "memory": limits.get("memory"),
        "gpus": limits.get("nvidia.com/gpu", "0"),
    }


def _pool_inputs(inputs: dict[str, Any]) -> dict[str, Any]:
    config = inputs.get("nodeConfig", {})
    accelerators = config.get("guestAccelerators") or [{}]
    autoscaling = inputs.get("autoscaling", {})
    return {
        "machineType": config.get("machineType"),
        "gpus": f"{accelerators[0].get('count', 0)} x {accelerators[0]['type']}" if accelerators[0] else "0",
        "spot": config.get("spot"),
        "flexStart": config.get("flexStart"),
        "gpuSharing": accelerators[0].get("gpuSharingConfig") if accelerators[0] else None,
        "nodes": f"{autoscaling.get('totalMinNodeCount')}..{autoscaling.get('totalMaxNodeCount')}"
        f" (start {inputs.get('initialNodeCount')} per zone)",
        "location": inputs.get("location"),
    }


# The inputs worth a column in ``tfcli experiment plan``, by resource type.
_KEY_INPUTS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    CLUSTER_TYPE: lambda i: {"name": i.get("name"), "location": i.get("location"), "channel": i.get("releaseChannel")},
    NODE_POOL_TYPE: _pool_inputs,
    "gcp:storage/bucket:Bucket": lambda i: {"name": i.get("name"), "location": i.get("location")},
    "gcp:serviceaccount/account:Account": lambda i: {"accountId": i.get("accountId")},
    "gcp:projects/iAMMember:IAMMember": lambda i: {"role": i.get("role")},
    "gcp:storage/bucketIAMMember:BucketIAMMember": lambda i: {"role": i.get("role"), "member": i.get("member")},
    "gcp:serviceaccount/iAMMember:IAMMember": lambda i: {"role": i.get("role"), "member": i.get("member")},
    "kubernetes:batch/v1:Job": _job_inputs,
    "pulumi:pulumi:StackReference": lambda i: {"stack": i.get("name")},
}


def key_inputs(resource: PlannedResource) -> dict[str, Any]:
    """The few inputs that say what a resource is (its machine type, its image, its role, ...)."""
    if extract := _KEY_INPUTS.get(resource.type):
        return extract(resource.inputs)
    metadata = resource.inputs.get("metadata")
    return {"name": metadata.get("name")} if isinstance(metadata, dict) else {}


@dataclass(frozen=True)
class Plan:
    stack: str
    resources: tuple[PlannedResource, ...]
    outputs: dict[str, Any]
    cost: prices.CostEstimate

    def of_type(self, type_: str) -> list[PlannedResource]:
        return [resource for resource in self.resources if resource.type == type_]

    def named(self, name: str) -> PlannedResource:
        matches = [resource for resource in self.resources if resource.name == name]
        if len(matches) != 1:
            raise KeyError(f"{len(matches)} resources named {name!r}")
        return matches[0]

    def children(self, parent_type: str) -> list[PlannedResource]:
        """The resources whose parent is the (one) component of this type."""
        return [resource for resource in self.resources if resource.parent_type == parent_type]

    def to_data(self) -> dict[str, Any]:
        """The plan as plain data (``--json``): resources with their inputs, outputs, the cost estimate."""
        return {
            "stack": self.stack,
            "resources": [dataclasses.asdict(resource) for resource in self.resources],
            "outputs": self.outputs,
            "cost": {**dataclasses.asdict(self.cost), "usd_per_month": round(self.cost.usd_per_month, 2)},
        }

    def summary(self) -> list[dict[str, Any]]:
        """One row per resource (type, name, parent, key inputs) for tables."""
        return [
            {"type": r.type, "name": r.name, "parent": r.parent, "parentType": r.parent_type, "inputs": key_inputs(r)}
            for r in self.resources
        ]


def _name_of(urn: str) -> str:
    return urn.split("::")[-1]


def _provider_name(reference: str | None, by_urn: Mapping[str, str]) -> str | None:
    """A provider reference is ``<urn>::<id>``."""
    if not reference:
        return None
    urn = reference.rsplit("::", 1)[0]
    return by_urn.get(urn, _name_of(urn))


def _plain(value: Any) -> Any:
    """Mock-monitor inputs as plain data: secrets -> ``[secret]``, integral floats (protobuf numbers) -> int."""
    if isinstance(value, dict):
        if value.get(rpc._special_sig_key) == rpc._special_secret_sig:
            return SECRET
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _config_value(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value)


def _location(config: Mapping[str, Any]) -> str:
    for key in (LOCATION_KEY, ZONE_KEY, REGION_KEY):
        if config.get(key):
            return str(config[key])
    return "us-central1"


def evaluate(
    config: Mapping[str, Any],
    *,
    stack: str = "dev",
    shared_outputs: Mapping[str, Mapping[str, Any]] | None = None,
    entry: Callable[[], object] | None = None,
) -> tuple[list[PlannedResource], dict[str, Any]]:
    """Run the program under mocks with this stack config (``{"tfcli:experiment": {...}, "gcp:project": ...}``).

    Values may be strings or structured (sent as JSON, as Pulumi does); Pulumi's ``{secure: ...}`` ciphertexts are
    left out (they cannot be decrypted here). Raises what the program raises (``InvalidInput`` for bad config).
    ``entry`` replaces :func:`infra.program.run` (``runpy.run_module("infra", run_name="__main__")`` runs the
    program the way Pulumi does).
    """
    if entry is None:
        from infra.program import run  # imported here: importing infra.plan stays cheap

        entry = run

    plain = {key: value for key, value in config.items() if not (isinstance(value, dict) and "secure" in value)}
    mocks = FakeCloud(str(plain.get("gcp:project", "")), _location(plain), shared_outputs)
    monitor = RecordingMonitor(mocks)
    set_root_resource(None)  # type: ignore[arg-type]  # a fresh root stack for every run
    pulumi.runtime.set_mocks(mocks, project=PROJECT, stack=stack, preview=False, monitor=monitor)
    pulumi.runtime.set_all_config({key: _config_value(value) for key, value in plain.items()}, [])
    outputs: dict[str, Any] = {}

    async def collect() -> None:
        root = get_root_resource()
        for name, value in getattr(root, "outputs", {}).items():
            output = pulumi.Output.from_input(value)
            outputs[name] = SECRET if await output.is_secret() else _plain(await output.future())

    def program() -> Any:
        assert entry is not None
        entry()
        return collect()

    pulumi.runtime.test(program)()
    if mocks.problems:
        raise UnknownInputs(sorted(set(mocks.problems)))
    by_urn = {record["urn"]: record["name"] for record in monitor.records}
    types = {record["urn"]: record["type"] for record in monitor.records}
    resources = [
        PlannedResource(
            type=record["type"],
            name=record["name"],
            urn=record["urn"],
            custom=record["custom"],
            parent=by_urn.get(record["parent"]) if record["parent"] else None,
            parent_type=types.get(record["parent"]) if record["parent"] else None,
            provider=_provider_name(record["provider"], by_urn),
            dependencies=tuple(by_urn.get(urn, _name_of(urn)) for urn in record["dependencies"]),
            inputs=_plain(record["inputs"]),
            options=record["options"],
            depends_on=tuple(
                by_urn.get(urn, _name_of(urn))
                for urn in record["dependencies"]
                if urn not in record["propertyDependencies"]
            ),
        )
        for record in monitor.records
    ]
    return resources, outputs


def node_groups(resources: list[PlannedResource]) -> list[prices.NodeGroup]:
    """The node pools a plan declares, as the price model sees them."""
    groups = []
    for pool in (r for r in resources if r.type == NODE_POOL_TYPE):
        config = pool.inputs.get("nodeConfig", {})
        zones = naming.zones_of(pool.inputs["location"])
        autoscaling = pool.inputs.get("autoscaling", {})
        accelerators = config.get("guestAccelerators") or [{}]
        nodes = pool.inputs.get("initialNodeCount", 1) * zones
        groups.append(
            prices.NodeGroup(
                pool=pool.inputs.get("name", pool.name),
                machine_type=config["machineType"],
                spot=bool(config.get("spot")),
                disk_size_gb=config.get("diskSizeGb", 100),
                nodes=nodes,
                min_nodes=autoscaling.get("totalMinNodeCount", nodes),
                max_nodes=max(nodes, autoscaling.get("totalMaxNodeCount", nodes)),
                gpu_type=accelerators[0].get("type"),
                gpus_per_node=accelerators[0].get("count", 0),
                flex_start=bool(config.get("flexStart")),
            )
        )
    return groups


# GKE's free tier: a monthly credit of one zonal (or Autopilot) cluster's management fee per billing account
# (https://cloud.google.com/kubernetes-engine/pricing#cluster_management_fee_and_free_tier); never a regional one.
FREE_TIER_USD_PER_MONTH = 74.40


def location_notes(resources: list[PlannedResource]) -> list[str]:
    """What the cluster's location does to the bill: a region multiplies every pool's nodes by its zones and gets no
    free-tier credit; a zone may get the credit (not counted)."""
    clusters = [r for r in resources if r.type == CLUSTER_TYPE]
    if not clusters:
        return []
    location = str(clusters[0].inputs.get("location", ""))
    if naming.is_zone(location):
        return [
            f"zonal cluster ({location}): GKE's free tier credits one zonal cluster's fee per billing account "
            f"(${FREE_TIER_USD_PER_MONTH:.2f}/month), not counted here"
        ]
    zones = naming.zones_of(location)
    return [
        f"regional cluster ({location}): each pool starts its per-zone count in each of {zones} zones (nodes x "
        f"{zones}, at least {zones} per pool) and the fee gets no free-tier credit; a zone costs less (`tfcli init "
        f"--location ZONE`, or `location:` on the cluster)"
    ]


def cost_of(
    resources: list[PlannedResource],
    outputs: Mapping[str, Any],
    book: prices.PriceBook = prices.BUNDLED,
    notes: Sequence[str] = (),
) -> prices.CostEstimate:
    clusters = sum(1 for r in resources if r.type == CLUSTER_TYPE)
    notes = [*notes, *location_notes(resources)]
    if shared := outputs.get("sharedClusterStack"):
        notes.append(f"runs on the shared cluster of stack {shared}: its nodes and fee are billed to that stack")
    return prices.estimate(node_groups(resources), clusters=clusters, notes=notes, book=book)


def plan_stack(
    config: Mapping[str, Any],
    *,
    stack: str = "dev",
    shared_outputs: Mapping[str, Mapping[str, Any]] | None = None,
    book: prices.PriceBook = prices.BUNDLED,
    price_notes: Sequence[str] = (),
) -> Plan:
    """The resources, outputs and hourly cost (at ``book``'s rates, with ``price_notes``) of the stack with this
    config."""
    resources, outputs = evaluate(config, stack=stack, shared_outputs=shared_outputs)
    # Registration order is asynchronous; a plan lists each component, then its children, by type and name.
    resources.sort(key=lambda r: (r.parent_type or r.type, r.parent is not None, r.type, r.name))
    cost = cost_of(resources, outputs, book, price_notes)
    return Plan(stack=stack, resources=tuple(resources), outputs=outputs, cost=cost)


def plan_stack_file(path: Path, *, shared_outputs: Mapping[str, Mapping[str, Any]] | None = None) -> Plan:
    """:func:`plan_stack` for a committed or generated ``stacks/Pulumi.<stack>.yaml``."""
    return plan_stack(read_stack_file(path), stack=stack_name_of(path), shared_outputs=shared_outputs)


def iter_strings(value: Any) -> Iterator[str]:
    """Every string in a nested value (for scanning plans and stack files for key-looking text)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from iter_strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from iter_strings(item)
