"""Typed, validated experiment and cluster specs: the only code that reads spec dicts (docs/design.md §4).

Names are exported lazily (PEP 562): importing a light submodule such as ``tfcli.spec.library`` must not build
every pydantic model, or ``tfcli experiment list`` would pay for validation it does not do.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "RUN_MODES": "tfcli.spec.experiment",
    "Experiment": "tfcli.spec.experiment",
    "Cluster": "tfcli.spec.cluster",
    "Frequency": "tfcli.spec.frequency",
    "ConfigLibrary": "tfcli.spec.library",
    "Loaded": "tfcli.spec.loader",
    "load_any": "tfcli.spec.loader",
    "load_cluster": "tfcli.spec.loader",
    "load_experiment": "tfcli.spec.loader",
    "resolve_cluster": "tfcli.spec.loader",
    "resolve_experiment": "tfcli.spec.loader",
    "to_data": "tfcli.spec.loader",
    "to_yaml": "tfcli.spec.loader",
}

if TYPE_CHECKING:
    from tfcli.spec.cluster import Cluster
    from tfcli.spec.experiment import RUN_MODES, Experiment
    from tfcli.spec.frequency import Frequency
    from tfcli.spec.library import ConfigLibrary
    from tfcli.spec.loader import (
        Loaded,
        load_any,
        load_cluster,
        load_experiment,
        resolve_cluster,
        resolve_experiment,
        to_data,
        to_yaml,
    )


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'tfcli.spec' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)


__all__ = [
    "RUN_MODES",
    "Cluster",
    "ConfigLibrary",
    "Experiment",
    "Frequency",
    "Loaded",
    "load_any",
    "load_cluster",
    "load_experiment",
    "resolve_cluster",
    "resolve_experiment",
    "to_data",
    "to_yaml",
]
