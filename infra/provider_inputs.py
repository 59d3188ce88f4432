"""The providers' input schemas, read from the installed SDKs, and the check of a declared resource's inputs
against them: what a real provider would reject or silently drop fails the offline plan instead.
"""

from __future__ import annotations

import collections.abc
import difflib
import functools
import importlib
import inspect
import re
import typing
from collections.abc import Mapping
from typing import Any

import pulumi
from pulumi.runtime import rpc

# # A real provider rejects an argument it does not know (pulumi-gcp) or drops it without a word (pulumi-kubernetes
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
