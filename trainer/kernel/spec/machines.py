"""What GKE offers today: GPU types, the machine families they attach to, and GCE custom machine shapes.

Kept as plain data so validation needs no cloud call; the checks mirror Compute Engine's documented rules.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class GpuType:
    """A GPU as GKE names it, the machine family it attaches to and the counts a node may carry."""

    name: str
    family: str
    counts: tuple[int, ...]
    aliases: tuple[str, ...]


GPU_TYPES: tuple[GpuType, ...] = (
    GpuType("nvidia-tesla-t4", "n1", (1, 2, 4), ("t4", "tesla-t4")),
    GpuType("nvidia-tesla-p4", "n1", (1, 2, 4), ("p4", "tesla-p4")),
    GpuType("nvidia-tesla-v100", "n1", (1, 2, 4, 8), ("v100", "tesla-v100")),
    GpuType("nvidia-tesla-p100", "n1", (1, 2, 4), ("p100", "tesla-p100")),
    GpuType("nvidia-l4", "g2", (1, 2, 4, 8), ("l4",)),
    GpuType("nvidia-tesla-a100", "a2", (1, 2, 4, 8, 16), ("a100", "a100-40gb", "nvidia-a100-40gb")),
    GpuType("nvidia-a100-80gb", "a2", (1, 2, 4, 8), ("a100-80gb",)),
    GpuType("nvidia-h100-80gb", "a3", (1, 2, 4, 8), ("h100", "h100-80gb")),
    GpuType("nvidia-h100-mega-80gb", "a3", (8,), ("h100-mega", "h100-mega-80gb")),
    GpuType("nvidia-h200-141gb", "a3", (8,), ("h200", "h200-141gb")),
)
GPU_BY_NAME = {gpu.name: gpu for gpu in GPU_TYPES} | {alias: gpu for gpu in GPU_TYPES for alias in gpu.aliases}

# GPUs GKE no longer offers -> what to use instead.
RETIRED_GPUS = {
    "nvidia-tesla-k80": "nvidia-tesla-t4",
    "k80": "nvidia-tesla-t4",
    "tesla-k80": "nvidia-tesla-t4",
}

# Accelerator-optimized machine types carry a fixed number of one GPU type.
_G2_GPUS = {4: 1, 8: 1, 12: 1, 16: 1, 32: 1, 24: 2, 48: 4, 96: 8}
ACCELERATOR_MACHINES: dict[str, tuple[str, int]] = (
    {f"g2-standard-{cpus}": ("nvidia-l4", gpus) for cpus, gpus in _G2_GPUS.items()}
    | {f"a2-highgpu-{n}g": ("nvidia-tesla-a100", n) for n in (1, 2, 4, 8)}
    | {"a2-megagpu-16g": ("nvidia-tesla-a100", 16)}
    | {f"a2-ultragpu-{n}g": ("nvidia-a100-80gb", n) for n in (1, 2, 4, 8)}
    | {f"a3-highgpu-{n}g": ("nvidia-h100-80gb", n) for n in (1, 2, 4, 8)}
    | {"a3-megagpu-8g": ("nvidia-h100-mega-80gb", 8), "a3-ultragpu-8g": ("nvidia-h200-141gb", 8)}
)

_PREDEFINED = re.compile(
    r"^(?P<family>e2|n1|n2|n2d|n4|c2|c2d|c3|c3d|c4|t2d|t2a|m1|m3|g2|a2|a3)-"
    r"(standard|highmem|highcpu|highgpu|megagpu|ultragpu|ultramem|megamem|micro|small|medium)(-\d+g?)?$"
)
_CUSTOM = re.compile(r"^(?:(?P<family>n1|n2|n2d|e2)-)?custom-(?P<cpus>\d+)-(?P<memory>\d+)(-ext)?$")
CPU_FAMILIES = ("e2", "n1", "n2", "n2d", "n4", "c2", "c2d", "c3", "c3d", "c4", "t2d", "t2a", "m1", "m3")

# N1 custom machine types (``custom-C-M``), the family GPUs T4/P4/V100/P100 attach to.
MAX_CUSTOM_CPUS = 96
MIN_GB_PER_CPU = 0.9
MAX_GB_PER_CPU = 6.5
MEMORY_STEP_MB = 256


def machine_family(machine_type: str) -> str | None:
    """``n1`` for ``n1-standard-8`` and ``custom-8-30720``, ``g2`` for ``g2-standard-8``; None if unknown."""
    if match := _CUSTOM.match(machine_type):
        return match.group("family") or "n1"
    if match := _PREDEFINED.match(machine_type):
        return match.group("family")
    return None


def custom_shape_problem(cpus: int, memory_mb: int) -> str | None:
    """Why an N1 custom shape is invalid, with the nearest valid shape; None when it is valid."""
    valid_cpus = cpus == 1 or (cpus % 2 == 0 and 2 <= cpus <= MAX_CUSTOM_CPUS)
    near_cpus = cpus if valid_cpus else min(MAX_CUSTOM_CPUS, max(2, cpus + cpus % 2))
    low = math.ceil(MIN_GB_PER_CPU * 1024 * near_cpus / MEMORY_STEP_MB) * MEMORY_STEP_MB
    high = math.floor(MAX_GB_PER_CPU * 1024 * near_cpus / MEMORY_STEP_MB) * MEMORY_STEP_MB
    near_memory = min(high, max(low, round(memory_mb / MEMORY_STEP_MB) * MEMORY_STEP_MB))
    reasons = []
    if not valid_cpus:
        reasons.append(f"{cpus} vCPUs is not allowed (1, or an even number up to {MAX_CUSTOM_CPUS})")
    if memory_mb % MEMORY_STEP_MB:
        reasons.append(f"{memory_mb} MB is not a multiple of {MEMORY_STEP_MB} MB")
    if not low <= memory_mb <= high and valid_cpus:
        reasons.append(
            f"{memory_mb} MB is outside {MIN_GB_PER_CPU}-{MAX_GB_PER_CPU} GB per vCPU "
            f"({low}-{high} MB for {cpus} vCPUs)"
        )
    if not reasons:
        return None
    return (
        f"custom-{cpus}-{memory_mb} is not a valid custom machine shape: {'; '.join(reasons)}. Nearest valid shape: "
        f"cpus_per_node: {near_cpus}, memory_per_node: {near_memory / 1024:g} (custom-{near_cpus}-{near_memory})"
    )
