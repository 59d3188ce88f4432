"""Typed, validated experiment and cluster specs: the only code that reads spec dicts (docs/design.md §4).

Names are exported lazily (PEP 562): importing a light submodule such as ``trainer.kernel.spec.library`` must not build
every pydantic model, or ``tfcli experiment list`` would pay for validation it does not do.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "RUN_MODES": "trainer.kernel.spec.experiment",
    "Experiment": "trainer.kernel.spec.experiment",
    "Cluster": "trainer.kernel.spec.cluster",
    "Frequency": "trainer.kernel.spec.frequency",
    "ConfigLibrary": "trainer.kernel.spec.library",
    "Loaded": "trainer.kernel.spec.loader",
    "load_any": "trainer.kernel.spec.loader",
    "load_cluster": "trainer.kernel.spec.loader",
    "load_experiment": "trainer.kernel.spec.loader",
    "resolve_cluster": "trainer.kernel.spec.loader",
    "resolve_experiment": "trainer.kernel.spec.loader",
    "to_data": "trainer.kernel.spec.loader",
    "to_yaml": "trainer.kernel.spec.loader",
}

if TYPE_CHECKING:
    from trainer.kernel.spec.cluster import Cluster
    from trainer.kernel.spec.experiment import RUN_MODES, Experiment
    from trainer.kernel.spec.frequency import Frequency
    from trainer.kernel.spec.library import ConfigLibrary
    from trainer.kernel.spec.loader import (
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
        raise AttributeError(f"module 'trainer.kernel.spec' has no attribute {name!r}")
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
