"""Sweep axes: ``--set DOTTED.KEY=V1,V2`` parsed, and dotted keys set inside a resolved experiment spec.

Values are YAML scalars (``16``, ``true``, ``adam``), with one exception people expect from a command line:
``1e-3`` is a number (YAML 1.1 reads it as text because it has no dot).
"""

from __future__ import annotations

import copy
import re
from typing import Any

import yaml

from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec.documents import load_yaml

_NON_FINITE = {"nan", "inf", "infinity", ".nan", ".inf"}
_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
# Keys a sweep owns: every trial gets its own name, and its seed from --seeds.
OWNED_KEYS = {"name": "each trial is named <sweep>-<k>", "seed": "seeds come from --seeds (1..K)"}


def scalar(text: str) -> Any:
    """One value of ``--set``: a YAML scalar, ``1e-3`` included as a number."""
    text = text.strip()
    if text.lower().lstrip("+-") in _NON_FINITE:  # meant as a number (YAML would keep it text): the spec refuses it
        return float(text.replace(".", ""))
    if _NUMBER.match(text):
        number = float(text)
        return int(text) if re.fullmatch(r"[-+]?\d+", text) else number
    try:
        return load_yaml(text, "--set")
    except (yaml.YAMLError, RecursionError):
        return text


def numbers_as_numbers(value: Any) -> Any:
    """A sweep file's value: text that reads as a number (YAML 1.1 leaves ``1e-3`` as text) becomes one."""
    if isinstance(value, str) and _NUMBER.match(value.strip()):
        return scalar(value)
    return value


def parse_set(option: str) -> tuple[str, list[Any]]:
    """``agent.learning_rate=1e-3,3e-4`` -> (``agent.learning_rate``, [0.001, 0.0003])."""
    key, equals, values = option.partition("=")
    key = key.strip()
    if not equals or not key or not values.strip():
        raise InvalidInput(
            f"--set {option}: expected DOTTED.KEY=VALUE1,VALUE2,... (e.g. agent.learning_rate=1e-3,3e-4)"
        )
    return key, [scalar(value) for value in values.split(",")]


def check_key(key: str, where: str) -> None:
    """A key a sweep may vary: dotted names and list indices, not the keys the sweep owns."""
    parts = key.split(".")
    if not all(parts):
        raise InvalidInput(f"{where}: '{key}' is not a dotted key (e.g. agent.learning_rate)")
    if parts[0] in OWNED_KEYS:
        raise InvalidInput(f"{where}: '{key}' cannot be swept: {OWNED_KEYS[parts[0]]}")


def set_dotted(data: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """A copy of ``data`` with ``key`` (``agent.learning_rate``, ``network.0.size``) set to ``value``.

    Missing mapping keys are created (an agent argument the base spec leaves at TensorForce's default); a part that
    is neither a mapping key nor a list index is an :class:`InvalidInput` naming the key.
    """
    result = copy.deepcopy(data)
    node: Any = result
    parts = key.split(".")
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        shown = ".".join(parts[: depth + 1])
        if isinstance(node, dict):
            if last:
                node[part] = value
            else:
                node = node.setdefault(part, {})
        elif isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise InvalidInput(f"{shown}: the list at {'.'.join(parts[:depth])} has {len(node)} items")
            if last:
                node[int(part)] = value
            else:
                node = node[int(part)]
        else:
            raise InvalidInput(f"{shown}: {'.'.join(parts[:depth])} is {node!r}, not a mapping or a list")
    return result


def get_dotted(data: Any, key: str) -> Any:
    """The value at ``key`` (``agent.learning_rate``, ``network.0.size``) in plain spec data; a ``KeyError`` naming
    the key when a part is missing (a mapping without it, a list too short, or a scalar on the way)."""
    node = data
    for part in key.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise KeyError(key)
    return node


def describe(combination: dict[str, Any]) -> str:
    """``learning_rate=0.001 batch_size=8``: a combination as people read it (the last part of each key, unless two
    keys end alike: ``agent.learning_rate`` and ``agent.baseline_optimizer.learning_rate`` stay whole)."""
    short = [key.rsplit(".", 1)[-1] for key in combination]
    names = short if len(set(short)) == len(short) else list(combination)
    return " ".join(f"{name}={value}" for name, value in zip(names, combination.values(), strict=True)) or "base"
