"""The offline plan: run the stack program under Pulumi's mocks (``pulumi.runtime.set_mocks``, Pulumi's own
unit-test method — no CLI, no cloud) and report what it declares, its outputs and an hourly cost estimate.

This backs ``tfcli experiment plan`` and the tests in ``tests/infra``. The mocks stand in for GCP and Kubernetes:
each resource's state is its inputs plus the few computed outputs the program reads (a cluster's endpoint and CA
certificate, a service account's e-mail, a shared cluster stack's outputs). Secret values never appear in a plan:
they read ``[secret]``.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import difflib
import functools
import importlib
import inspect
import json
import re
import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc
from pulumi.runtime.settings import get_root_resource, set_root_resource

from infra import naming, prices
from infra.stack_files import read_stack_file, stack_name_of

PROJECT = "tfcli"
SECRET = "[secret]"
FAKE_ENDPOINT = "203.0.113.10"  # TEST-NET-3: never a real address
FAKE_CA = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCmZha2UKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="  # a fake PEM, base64

CLUSTER_TYPE = "gcp:container/cluster:Cluster"
NODE_POOL_TYPE = "gcp:container/nodePool:NodePool"


# --- the providers' input schemas, read from the installed SDKs -------------------------------------------------------
#
# A real provider rejects an argument it does not know (pulumi-gcp) or drops it without a word (pulumi-kubernetes
# objects given as dicts): either way the cluster is not what the program says. The mocks check every input key,
# nested ones included, against the input types of the installed pulumi-gcp / pulumi-kubernetes SDKs: a resource's
# top-level arguments are the parameters of its class's ``_internal_init`` (camelCased through its ``*Args`` class),
# and a nested object's keys are the ``pulumi.getter(name=...)`` properties of its ``*Args`` input type.

_PACKAGES = {"gcp": "pulumi_gcp", "kubernetes": "pulumi_kubernetes"}
_PLUMBING = {"__self__", "resource_name", "opts", "__props__"}


class UnknownInputs(Exception):
    """The program gave a resource an argument its provider does not have (``<resource>: <dotted.path>: ...``)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("the providers would reject or drop these inputs:\n" + "\n".join(problems))
        self.problems = problems


def resource_class(type_token: str) -> Any:
    """The SDK class of a resource type token (``gcp:container/nodePool:NodePool`` -> ``pulumi_gcp.container.NodePool``;
    ``kubernetes:batch/v1:Job`` -> ``pulumi_kubernetes.batch.v1.Job``; ``pulumi:providers:kubernetes`` -> its
    ``Provider``)."""
    package, module, name = type_token.split(":")
    if package == "pulumi" and module == "providers":
        return importlib.import_module(_PACKAGES[name]).Provider
    if package not in _PACKAGES:
        raise KeyError(f"no provider SDK for {type_token}")
    parts = module.split("/")
    path = ".".join([_PACKAGES[package], *(parts if package == "kubernetes" else parts[:1])])
    cls = getattr(importlib.import_module(path), name)
    if f"'{type_token}'" not in inspect.getsource(cls._internal_init):
        raise KeyError(f"{path}.{name} does not declare {type_token}")
    return cls


@functools.cache
def resource_inputs(type_token: str) -> dict[str, Any]:
    """The top-level inputs of a resource type: camelCase name -> its input type."""
    cls = resource_class(type_token)
    source = inspect.getsource(cls._internal_init)
    match = re.search(r"__props__ = (\w+)\.__new__\(", source)
    if match is None:
        raise KeyError(f"cannot find the Args class of {type_token}")
    args_cls = vars(importlib.import_module(cls.__module__))[match.group(1)]
    to_pulumi = pulumi._types.input_type_py_to_pulumi_names(args_cls)
    types = pulumi._types.input_type_types(args_cls)
    params = [p for p in inspect.signature(cls._internal_init).parameters if p not in _PLUMBING]
    return {to_pulumi.get(p, p): types.get(to_pulumi.get(p, p), Any) for p in params}


@functools.cache
def _input_type_keys(cls: type) -> dict[str, Any]:
    return dict(pulumi._types.input_type_types(cls))


def _shape(typ: Any) -> tuple[str, Any]:
    """("object", keys) | ("list", element type) | ("map", value type) | ("scalar", None) for an input type."""
    while True:
        origin = typing.get_origin(typ)
        if origin is typing.Union or (origin is None and isinstance(typ, type(int | str))):
            members = [
                a
                for a in typing.get_args(typ)
                if a is not type(None)
                and typing.get_origin(a) not in (collections.abc.Awaitable, typing.Awaitable)
                and typing.get_origin(a) is not pulumi.Output
                and a is not pulumi.Output
            ]
            structured = [a for a in members if pulumi._types.is_input_type(a) or typing.get_origin(a) is not None]
            if not structured:
                return "scalar", None
            typ = structured[0]
            continue
        if origin is pulumi.Output:
            (typ,) = typing.get_args(typ)
            continue
        break
    if isinstance(typ, type) and pulumi._types.is_input_type(typ):
        return "object", _input_type_keys(typ)
    if origin in (collections.abc.Sequence, list, typing.Sequence, typing.List):  # noqa: UP006
        return "list", typing.get_args(typ)[0]
    if origin in (collections.abc.Mapping, dict, typing.Mapping, typing.Dict):  # noqa: UP006
        args = typing.get_args(typ)
        return "map", args[1] if len(args) == 2 else Any
    return "scalar", None


def _unwrap_secret(value: Any) -> Any:
    if isinstance(value, dict) and value.get(rpc._special_sig_key) == rpc._special_secret_sig:
        return value.get("value")
    return value


def _did_you_mean(key: str, known: Mapping[str, Any]) -> str:
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def _check_value(value: Any, typ: Any, path: str, problems: list[str]) -> None:
    value = _unwrap_secret(value)
    if value is None or typ is Any:
        return
    kind, inner = _shape(typ)
    if kind == "object":
        if not isinstance(value, dict):
            problems.append(f"{path}: expected an object, got {type(value).__name__}")
            return
        for key, item in value.items():
            if key not in inner:
                problems.append(f"{path}.{key}: no such input{_did_you_mean(key, inner)}")
            else:
                _check_value(item, inner[key], f"{path}.{key}", problems)
    elif kind == "list":
        if not isinstance(value, list):
            problems.append(f"{path}: expected a list, got {type(value).__name__}")
            return
        for index, item in enumerate(value):
            _check_value(item, inner, f"{path}[{index}]", problems)
    elif kind == "map":
        if not isinstance(value, dict):
            problems.append(f"{path}: expected a mapping, got {type(value).__name__}")
            return
        for key, item in value.items():
            _check_value(item, inner, f"{path}.{key}", problems)


def input_problems(type_token: str, name: str, inputs: Mapping[str, Any]) -> list[str]:
    """``<name>: <dotted.path>: ...`` for every input key the installed provider SDK does not declare."""
    if type_token == "pulumi:pulumi:StackReference":
        allowed: dict[str, Any] = {"name": str}  # pulumi's own resource: its one input
    else:
        allowed = resource_inputs(type_token)
    problems: list[str] = []
    for key, value in inputs.items():
        if key not in allowed:
            problems.append(f"{key}: no such argument of {type_token}{_did_you_mean(key, allowed)}")
        else:
            _check_value(value, allowed[key], key, problems)
    return [f"{name}: {problem}" for problem in problems]


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


class FakeCloud(pulumi.runtime.Mocks):
    """Resource state = inputs + the computed outputs the program reads."""

    def __init__(self, project: str, location: str, shared_outputs: Mapping[str, Mapping[str, Any]] | None = None):
        self.project = project
        self.location = location
        self.shared_outputs = dict(shared_outputs or {})
        # Inputs the real providers would reject or drop (checked against the installed SDKs' input types).
        self.problems: list[str] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, dict[str, Any]]:
        if args.custom:
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

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        return {}, None


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


def _config_value(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value)


def _location(config: Mapping[str, Any]) -> str:
    for key in ("tfcli:location", "gcp:zone", "gcp:region"):
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
            )
        )
    return groups


def cost_of(resources: list[PlannedResource], outputs: Mapping[str, Any]) -> prices.CostEstimate:
    clusters = sum(1 for r in resources if r.type == CLUSTER_TYPE)
    notes = []
    if shared := outputs.get("sharedClusterStack"):
        notes.append(f"runs on the shared cluster of stack {shared}: its nodes and fee are billed to that stack")
    return prices.estimate(node_groups(resources), clusters=clusters, notes=notes)


def plan_stack(
    config: Mapping[str, Any], *, stack: str = "dev", shared_outputs: Mapping[str, Mapping[str, Any]] | None = None
) -> Plan:
    """The resources, outputs and hourly cost of the stack with this config."""
    resources, outputs = evaluate(config, stack=stack, shared_outputs=shared_outputs)
    # Registration order is asynchronous; a plan lists each component, then its children, by type and name.
    resources.sort(key=lambda r: (r.parent_type or r.type, r.parent is not None, r.type, r.name))
    return Plan(stack=stack, resources=tuple(resources), outputs=outputs, cost=cost_of(resources, outputs))


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
