"""vCPUs and memory of GCE machine types, for pod sizing and the cost estimate (no cloud call).

Predefined types follow Compute Engine's per-family ratios (``n1-standard``: 3.75 GB per vCPU, ``e2-standard``
and most others: 4 GB, ``highmem``: 6.5 or 8 GB, ``highcpu``: 0.9 to 2 GB); custom types carry their shape in the
name; accelerator-optimized types (A2, A3) are listed. Unknown types give None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Shape:
    """A machine's family (``n1``, ``e2``, ``g2``, ...), vCPUs and memory in GiB."""

    family: str
    vcpus: float
    memory_gib: float
    custom: bool = False


_PREDEFINED = re.compile(r"^(?P<family>[a-z][a-z0-9]*)-(?P<kind>standard|highmem|highcpu)-(?P<cpus>\d+)$")
_CUSTOM = re.compile(r"^(?:(?P<family>n1|n2|n2d|e2)-)?custom-(?P<cpus>\d+)-(?P<memory>\d+)(?:-ext)?$")

# GB of memory per vCPU, by family and kind; "n1" differs from the rest.
_PER_VCPU = {
    "n1": {"standard": 3.75, "highmem": 6.5, "highcpu": 0.9},
    "c2": {"standard": 4.0},
    "c2d": {"standard": 4.0, "highmem": 8.0, "highcpu": 2.0},
    "n4": {"standard": 4.0, "highmem": 8.0, "highcpu": 2.0},
    "t2d": {"standard": 4.0},
    "t2a": {"standard": 4.0},
    "g2": {"standard": 4.0},
}
_DEFAULT_PER_VCPU = {"standard": 4.0, "highmem": 8.0, "highcpu": 1.0}

# E2 shared-core types and the accelerator-optimized types: (vCPUs, GB).
_LISTED: dict[str, tuple[float, float]] = {
    "e2-micro": (2, 1),
    "e2-small": (2, 2),
    "e2-medium": (2, 4),
    **{f"a2-highgpu-{n}g": (12 * n, 85 * n) for n in (1, 2, 4, 8)},
    "a2-megagpu-16g": (96, 1360),
    **{f"a2-ultragpu-{n}g": (12 * n, 170 * n) for n in (1, 2, 4, 8)},
    **{f"a3-highgpu-{n}g": (26 * n, 234 * n) for n in (1, 2, 4, 8)},
    "a3-megagpu-8g": (208, 1872),
    "a3-ultragpu-8g": (224, 2952),
}


def machine_shape(machine_type: str) -> Shape | None:
    """The shape of ``n1-standard-8``, ``custom-8-32768``, ``g2-standard-8``, ``a2-highgpu-1g``, ...; else None."""
    if machine_type in _LISTED:
        cpus, memory = _LISTED[machine_type]
        return Shape(machine_type.split("-", 1)[0], cpus, memory)
    if match := _CUSTOM.match(machine_type):
        return Shape(match.group("family") or "n1", int(match.group("cpus")), int(match.group("memory")) / 1024, True)
    if match := _PREDEFINED.match(machine_type):
        family, kind, cpus = match.group("family"), match.group("kind"), int(match.group("cpus"))
        per_vcpu = _PER_VCPU.get(family, _DEFAULT_PER_VCPU).get(kind, _DEFAULT_PER_VCPU[kind])
        return Shape(family, cpus, cpus * per_vcpu)
    return None
