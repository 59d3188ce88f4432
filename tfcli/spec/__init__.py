"""Typed, validated experiment and cluster specs: the only code that reads spec dicts (DESIGN.md §2)."""

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
