"""Which settings of several runs differ (``experiment compare``): their resolved specs flattened to dotted keys
(``agent.learning_rate``, ``environment.level``, ``agent.network.0.size``) and only the keys whose values are not the
same in every run kept. Comparing by what differs is the point: two resolved specs share dozens of defaults, and a
table of all of them hides the one setting that changed (MLflow issues 1896, 3763).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# name: every run has its own, it names the row instead; hparams: a sweep trial's axes again (the TensorBoard
# HParams session), already shown by the axes themselves
IGNORED = frozenset({"name", "hparams"})


def flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    """A spec as ``{dotted key: value}``: mappings by key, lists holding mappings by index (a network's layers);
    a list of plain values is one value, and so is an empty mapping or list."""
    if isinstance(data, dict) and data:
        items: Iterable[tuple[str, Any]] = ((str(key), value) for key, value in data.items())
    elif isinstance(data, list) and any(isinstance(item, dict | list) for item in data):
        items = ((str(index), value) for index, value in enumerate(data))
    else:
        return {prefix: data}
    flat: dict[str, Any] = {}
    for key, value in items:
        flat |= flatten(value, f"{prefix}.{key}" if prefix else key)
    return flat


def differing_keys(specs: list[dict[str, Any]], ignore: frozenset[str] = IGNORED) -> list[str]:
    """The flattened keys whose values are not the same in all ``specs`` (a key some spec lacks differs), in the
    order they first appear; ``ignore``: top-level keys left out."""
    flats = [flatten(spec) for spec in specs]
    order: dict[str, None] = {}
    for flat in flats:
        order |= dict.fromkeys(flat)

    def same(key: str) -> bool:
        return all(key in flat and flat[key] == flats[0].get(key) for flat in flats)

    return [key for key in order if key.split(".", 1)[0] not in ignore and not same(key)]


def varying_within(groups: list[list[dict[str, Any]]]) -> set[str]:
    """The keys that differ inside any one group (a sweep combination's seeds): the rows of a group are one
    aggregate, so these keys are no column of it."""
    return {key for group in groups if len(group) > 1 for key in differing_keys(group)}
