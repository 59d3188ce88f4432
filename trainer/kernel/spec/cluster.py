"""The Cluster spec: a GKE cluster with an optional GPU pool, in the original client's keywords."""

from __future__ import annotations

import re

from pydantic import Field, field_validator, model_validator

from trainer.kernel.spec.base import DnsName, StrictModel, raise_problems
from trainer.kernel.spec.gpu_pool import GpuSharing, Provisioning
from trainer.kernel.spec.machines import (
    ACCELERATOR_MACHINES,
    CPU_FAMILIES,
    GPU_BY_NAME,
    GPU_TYPES,
    RETIRED_GPUS,
    custom_shape_problem,
    machine_family,
)
from trainer.kernel.spec.ttl import Ttl

DEFAULT_GPU_TYPE = "nvidia-tesla-t4"
_LOCATION = re.compile(r"^[a-z]+-[a-z]+[0-9]+(-[a-z])?$")
Loc = tuple[str | int, ...]


class Cluster(StrictModel):
    """A GKE cluster. ``machine_type`` or ``cpus_per_node`` + ``memory_per_node`` (GB) give the node shape."""

    name: DnsName
    description: str = ""
    machine_type: str | None = None
    cpus_per_node: int | None = Field(default=None, ge=1)
    memory_per_node: float | None = Field(default=None, gt=0, le=12288, allow_inf_nan=False, description="GB per node")
    gpus_per_node: int | None = Field(default=None, ge=0)
    gpu_type: str | None = None
    num_nodes: int = Field(default=3, ge=1, le=1000)
    min_nodes: int | None = Field(default=None, ge=0)
    max_nodes: int | None = Field(default=None, ge=1, le=1000)
    disk_size: int = Field(default=100, ge=10, le=65536, description="GB per node")
    location: str | None = None
    spot: bool = False
    provisioning: Provisioning | None = Field(default=None, description="spot | on-demand | flex-start (from spot)")
    gpu_sharing: GpuSharing | None = None
    image: str | None = Field(default=None, description="the trainer image on this cluster (one built FROM tfcli's)")
    # A shared cluster's time to live: `experiment reap` destroys it once no experiment or sweep is deployed on it
    # and its stack has been up this long since its last update (tfcli/runs/reaping.py).
    ttl: Ttl | None = None

    @field_validator("gpu_type")
    @classmethod
    def _known_gpu(cls, value: str | None) -> str | None:
        if value is None:
            return None
        key = value.strip().lower()
        if key in RETIRED_GPUS:
            raise ValueError(f"'{value}' is retired and GKE no longer offers it; use '{RETIRED_GPUS[key]}' instead")
        if key not in GPU_BY_NAME:
            names = ", ".join(gpu.name for gpu in GPU_TYPES)
            raise ValueError(f"unknown GPU type '{value}'; GKE offers: {names}")
        return GPU_BY_NAME[key].name

    @field_validator("location")
    @classmethod
    def _location_shape(cls, value: str | None) -> str | None:
        if value is not None and not _LOCATION.match(value):
            raise ValueError(f"'{value}' is not a GCP region or zone (e.g. 'us-central1' or 'us-central1-a')")
        return value

    @model_validator(mode="after")
    def _resolve_shape(self) -> Cluster:
        """Derive machine_type, the GPU count and type, and the autoscaling range; report every conflict."""
        problems: list[tuple[Loc, str]] = []
        machine_type = self._machine_type(problems)
        gpus, gpu_type = self._gpus(machine_type, problems)
        min_nodes = 0 if self.min_nodes is None else self.min_nodes
        max_nodes = self.num_nodes if self.max_nodes is None else self.max_nodes
        if not min_nodes <= self.num_nodes <= max_nodes:
            problems.append(
                (
                    ("num_nodes",),
                    f"needs min_nodes <= num_nodes <= max_nodes, got {min_nodes} <= {self.num_nodes} <= {max_nodes}",
                )
            )
        provisioning = self._provisioning(gpus, problems)
        raise_problems("Cluster", problems)
        for key, value in {
            "spot": provisioning == "spot",
            "machine_type": machine_type,
            "gpus_per_node": gpus,
            "gpu_type": gpu_type,
            "min_nodes": min_nodes,
            "max_nodes": max_nodes,
        }.items():
            object.__setattr__(self, key, value)
        return self

    def _provisioning(self, gpus: int, problems: list[tuple[Loc, str]]) -> Provisioning:
        """``provisioning``, else ``spot``'s meaning; flex-start and GPU sharing need the pool's GPUs."""
        implied: Provisioning = "spot" if self.spot else "on-demand"
        provisioning = self.provisioning or implied
        if self.provisioning is not None and self.spot and provisioning != "spot":
            problems.append((("provisioning",), f"'{provisioning}' contradicts spot: true; give one of them"))
        if provisioning == "flex-start" and not gpus:
            problems.append((("provisioning",), "flex-start provisions GPU nodes; set gpus_per_node"))
        if self.gpu_sharing is not None and not gpus:
            problems.append((("gpu_sharing",), "shares the pool's GPUs, but it has none; set gpus_per_node"))
        return provisioning

    def _machine_type(self, problems: list[tuple[Loc, str]]) -> str | None:
        custom = None
        if self.cpus_per_node is not None or self.memory_per_node is not None:
            if self.cpus_per_node is None or self.memory_per_node is None:
                missing = "cpus_per_node" if self.cpus_per_node is None else "memory_per_node"
                problems.append(((missing,), "cpus_per_node and memory_per_node go together (a custom shape)"))
                return self.machine_type
            memory_mb = round(self.memory_per_node * 1024)
            if problem := custom_shape_problem(self.cpus_per_node, memory_mb):
                problems.append((("memory_per_node",), problem))
            custom = f"custom-{self.cpus_per_node}-{memory_mb}"
        if self.machine_type is None:
            if custom is None:
                problems.append((("machine_type",), "set machine_type, or cpus_per_node and memory_per_node"))
            return custom
        if custom is not None and custom != self.machine_type:
            problems.append(
                (
                    ("machine_type",),
                    f"'{self.machine_type}' disagrees with cpus_per_node/memory_per_node ({custom}); give one of them",
                )
            )
        family = machine_family(self.machine_type)
        if family is None:
            problems.append(
                (
                    ("machine_type",),
                    f"'{self.machine_type}' is not a GCE machine type this tool knows (families: "
                    f"{', '.join((*CPU_FAMILIES, 'g2', 'a2', 'a3'))}; or custom-CPUS-MEMORY_MB)",
                )
            )
        return self.machine_type

    def _gpus(self, machine_type: str | None, problems: list[tuple[Loc, str]]) -> tuple[int, str | None]:
        gpu_type = self.gpu_type
        if machine_type in ACCELERATOR_MACHINES:
            built_in, count = ACCELERATOR_MACHINES[machine_type]
            if self.gpus_per_node not in (None, count):
                problems.append(
                    (("gpus_per_node",), f"{machine_type} always carries {count} x {built_in}; set {count} or omit it")
                )
            if gpu_type not in (None, built_in):
                attaches_to = GPU_BY_NAME[gpu_type].family.upper()
                problems.append(
                    (
                        ("gpu_type",),
                        f"{machine_type} carries {built_in}, not {gpu_type} "
                        f"(which attaches to {attaches_to} machine types)",
                    )
                )
            return count, built_in
        gpus = self.gpus_per_node or 0
        if gpus == 0:
            if gpu_type is not None:
                problems.append((("gpu_type",), f"'{gpu_type}' is set but gpus_per_node is 0; set gpus_per_node"))
            return 0, None
        gpu = GPU_BY_NAME[gpu_type or DEFAULT_GPU_TYPE]
        family = machine_family(machine_type) if machine_type else None
        if family is not None and family != gpu.family:
            examples = ", ".join(sorted(m for m, (g, _) in ACCELERATOR_MACHINES.items() if g == gpu.name)[:3])
            where = f"{gpu.family.upper()} machine types" + (f" ({examples}, ...)" if examples else "")
            problems.append(
                (("gpu_type",), f"{gpu.name} attaches to {where}, not to {machine_type} ({family.upper()})")
            )
        if gpus not in gpu.counts:
            problems.append(
                (("gpus_per_node",), f"{gpu.name} comes {', '.join(map(str, gpu.counts))} per node, not {gpus}")
            )
        return gpus, gpu.name

    @property
    def provisioning_model(self) -> Provisioning:
        """How the learner pool's nodes are provisioned: ``provisioning``, else what ``spot`` says. (The resolved spec
        keeps ``provisioning`` unset when it was, so older specs and their Jobs' digests stay as they were.)"""
        return self.provisioning or ("spot" if self.spot else "on-demand")

    @property
    def total_gpus(self) -> int:
        return (self.gpus_per_node or 0) * self.num_nodes
