"""A dated table of Google Cloud list prices (us-central1, USD per hour) and the hourly estimate built on it.

Source: Google's public price pages — Compute Engine VM instance pricing
(https://cloud.google.com/compute/vm-instance-pricing), Spot VM pricing (https://cloud.google.com/spot-vms/pricing),
GPU pricing (https://cloud.google.com/compute/gpus-pricing), disk pricing
(https://cloud.google.com/compute/disks-image-pricing) and GKE pricing
(https://cloud.google.com/kubernetes-engine/pricing). Compiled on the date in ``AS_OF`` from those pages' us-central1
rows, rounded; spot prices move (up to once a day), and other regions cost more or less. The figures are an estimate
for budgeting — the bill is the truth. Update ``AS_OF`` with the table.

Flex-start (GKE's Dynamic Workload Scheduler, https://cloud.google.com/kubernetes-engine/docs/concepts/dws and
https://cloud.google.com/products/dws/pricing): no preemption, at most seven days a node, vCPUs and GPUs discounted
"up to 53 %" against on-demand, memory and disk at on-demand rates. ``FLEX_START_DISCOUNT`` holds that documented
discount as of ``AS_OF``; the real SKU price may be less of a discount for some families, so a flex-start estimate is
the cheapest it can bill.

The model: a node costs vCPUs x the family's vCPU rate + GiB x its memory rate (custom shapes have their own rates)
+ GPUs x the GPU's rate + boot disk GB x the pd-balanced rate; a cluster adds GKE's management fee (the free tier's
monthly credit for one zonal cluster is not counted).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

from infra.shapes import machine_shape

AS_OF = "2026-11-21"
REGION = "us-central1"
HOURS_PER_MONTH = 730


@dataclass(frozen=True)
class Rates:
    """USD per vCPU-hour and per GiB-hour of memory."""

    vcpu: float
    memory_gib: float


# (family, custom shape) -> (on-demand, spot)
MACHINE_RATES: dict[tuple[str, bool], tuple[Rates, Rates]] = {
    ("n1", False): (Rates(0.031611, 0.004237), Rates(0.006655, 0.000892)),
    ("n1", True): (Rates(0.033174, 0.004446), Rates(0.006984, 0.000936)),
    ("e2", False): (Rates(0.021811, 0.002923), Rates(0.008720, 0.001169)),
    ("e2", True): (Rates(0.022890, 0.003067), Rates(0.009160, 0.001227)),
    ("n2", False): (Rates(0.031611, 0.004237), Rates(0.007660, 0.001027)),
    ("n2", True): (Rates(0.033174, 0.004446), Rates(0.008040, 0.001078)),
    ("n2d", False): (Rates(0.027502, 0.003686), Rates(0.006170, 0.000827)),
    ("c2", False): (Rates(0.033982, 0.004555), Rates(0.005000, 0.000667)),
    ("c3", False): (Rates(0.034650, 0.003938), Rates(0.005750, 0.000770)),
    ("g2", False): (Rates(0.022930, 0.002687), Rates(0.009160, 0.001074)),
    ("a2", False): (Rates(0.031611, 0.004237), Rates(0.012640, 0.001695)),
    ("a3", False): (Rates(0.034200, 0.004580), Rates(0.010200, 0.000888)),
}

# GKE accelerator name -> (on-demand, spot) USD per GPU-hour.
GPU_RATES: dict[str, tuple[float, float]] = {
    "nvidia-tesla-t4": (0.35, 0.14),
    "nvidia-tesla-p4": (0.60, 0.24),
    "nvidia-tesla-v100": (2.48, 0.992),
    "nvidia-tesla-p100": (1.46, 0.584),
    "nvidia-l4": (0.56, 0.224),
    "nvidia-tesla-a100": (2.933908, 1.172),
    "nvidia-a100-80gb": (3.92, 1.568),
    "nvidia-h100-80gb": (9.07, 2.253),
    "nvidia-h100-mega-80gb": (9.80, 2.45),
    "nvidia-h200-141gb": (10.60, 3.72),
}

# Flex-start's documented discount on vCPUs and GPUs against on-demand (memory and disk are not discounted).
FLEX_START_DISCOUNT = 0.53

PD_BALANCED_GB_MONTH = 0.10
GKE_CLUSTER_FEE_HOUR = 0.10
STALE_AFTER_DAYS = 30  # the bundled table is old news after this: `plan` says so
BUNDLED_SOURCE = "the bundled table (infra/prices.py)"


@dataclass(frozen=True)
class PriceBook:
    """The rates an estimate uses, where they come from and as of when: the bundled table, or the Cloud Billing
    Catalog's current list prices merged over it (:mod:`infra.billing_catalog`)."""

    as_of: str = AS_OF
    source: str = BUNDLED_SOURCE
    region: str = REGION
    machines: Mapping[tuple[str, bool], tuple[Rates, Rates]] = field(default_factory=lambda: dict(MACHINE_RATES))
    gpus: Mapping[str, tuple[float, float]] = field(default_factory=lambda: dict(GPU_RATES))

    def staleness_note(self, today: date) -> str | None:
        """A warning when this is the bundled table and it is older than ``STALE_AFTER_DAYS``."""
        age = (today - date.fromisoformat(self.as_of)).days
        if self.source != BUNDLED_SOURCE or age <= STALE_AFTER_DAYS:
            return None
        return (
            f"the bundled prices are {age} days old (of {self.as_of}): spot prices move daily; with GCP credentials "
            "`plan` reads current ones from the Cloud Billing Catalog"
        )


BUNDLED = PriceBook()


@dataclass(frozen=True)
class NodeGroup:
    """Nodes of one pool: shape, GPUs, spot, boot disk, and how many run (initially, at least, at most)."""

    pool: str
    machine_type: str
    spot: bool
    disk_size_gb: int
    nodes: int
    min_nodes: int
    max_nodes: int
    gpu_type: str | None = None
    gpus_per_node: int = 0
    flex_start: bool = False

    @property
    def provisioning(self) -> str:
        return "flex-start" if self.flex_start else "spot" if self.spot else "on-demand"


@dataclass(frozen=True)
class CostLine:
    """One priced item: ``count`` x ``unit_usd_per_hour``. ``unit_usd_per_hour`` is None when the table lacks it."""

    item: str
    count: float
    unit_usd_per_hour: float | None

    @property
    def usd_per_hour(self) -> float:
        return self.count * (self.unit_usd_per_hour or 0.0)


@dataclass(frozen=True)
class CostEstimate:
    """Hourly cost while running (pools at their initial size), idle (at their minimum) and at most."""

    usd_per_hour: float
    idle_usd_per_hour: float
    max_usd_per_hour: float
    lines: tuple[CostLine, ...]
    as_of: str = AS_OF
    region: str = REGION
    source: str = BUNDLED_SOURCE
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def usd_per_month(self) -> float:
        return self.usd_per_hour * HOURS_PER_MONTH


def machine_hourly(
    machine_type: str, *, spot: bool, flex_start: bool = False, book: PriceBook = BUNDLED
) -> float | None:
    """The machine's vCPU + memory price per hour (GPUs and disk apart); None if the table lacks its family.
    Flex-start: the on-demand rates with the vCPUs discounted."""
    shape = machine_shape(machine_type)
    if shape is None:
        return None
    rates = book.machines.get((shape.family, shape.custom)) or (
        None if shape.custom else book.machines.get((shape.family, False))
    )
    if rates is None:
        return None
    rate = rates[1] if spot and not flex_start else rates[0]
    vcpu = rate.vcpu * (1 - FLEX_START_DISCOUNT) if flex_start else rate.vcpu
    return shape.vcpus * vcpu + shape.memory_gib * rate.memory_gib


def gpu_hourly(gpu_type: str, *, spot: bool, flex_start: bool = False, book: PriceBook = BUNDLED) -> float | None:
    rates = book.gpus.get(gpu_type)
    if rates is None:
        return None
    if flex_start:
        return rates[0] * (1 - FLEX_START_DISCOUNT)
    return rates[1 if spot else 0]


def disk_hourly(size_gb: int) -> float:
    return size_gb * PD_BALANCED_GB_MONTH / HOURS_PER_MONTH


def _node_lines(group: NodeGroup, nodes: int, book: PriceBook) -> list[CostLine]:
    kind, flex = group.provisioning, group.flex_start
    lines = [
        CostLine(
            f"{group.pool}: {group.machine_type} ({kind})",
            nodes,
            machine_hourly(group.machine_type, spot=group.spot, flex_start=flex, book=book),
        )
    ]
    if group.gpu_type and group.gpus_per_node:
        lines.append(
            CostLine(
                f"{group.pool}: {group.gpu_type} GPU ({kind})",
                nodes * group.gpus_per_node,
                gpu_hourly(group.gpu_type, spot=group.spot, flex_start=flex, book=book),
            )
        )
    lines.append(
        CostLine(f"{group.pool}: {group.disk_size_gb} GB pd-balanced boot disk", nodes, disk_hourly(group.disk_size_gb))
    )
    return lines


def estimate(
    groups: Sequence[NodeGroup], *, clusters: int, notes: Iterable[str] = (), book: PriceBook = BUNDLED
) -> CostEstimate:
    """The hourly estimate for ``clusters`` GKE clusters and these node groups, at ``book``'s rates."""
    fee = [CostLine("GKE cluster management fee", clusters, GKE_CLUSTER_FEE_HOUR)] if clusters else []
    running = fee + [line for group in groups for line in _node_lines(group, group.nodes, book)]
    idle = fee + [line for group in groups for line in _node_lines(group, group.min_nodes, book)]
    most = fee + [line for group in groups for line in _node_lines(group, group.max_nodes, book)]
    missing = sorted({line.item for line in running if line.unit_usd_per_hour is None})
    all_notes = list(notes) + [f"not in the price table (counted as 0): {item}" for item in missing]
    return CostEstimate(
        usd_per_hour=round(sum(line.usd_per_hour for line in running), 4),
        idle_usd_per_hour=round(sum(line.usd_per_hour for line in idle), 4),
        max_usd_per_hour=round(sum(line.usd_per_hour for line in most), 4),
        lines=tuple(running),
        as_of=book.as_of,
        region=book.region,
        source=book.source,
        notes=tuple(all_notes),
    )


# The trainer image (infra/trainer_images.py). Cloud Build, default pool, USD per build-minute by the build's machine
# type (https://cloud.google.com/build/pricing; the first 2,500 minutes a month on e2-standard-2 are free, not
# counted here), and Artifact Registry storage, USD per GB-month past the free 0.5 GB
# (https://cloud.google.com/artifact-registry/pricing); as of AS_OF.
BUILD_MINUTE = {"E2_MEDIUM": 0.003, "E2_STANDARD_2": 0.006, "E2_HIGHCPU_8": 0.016, "E2_HIGHCPU_32": 0.064}
REGISTRY_GB_MONTH = 0.10
# One build of each variant on E2_HIGHCPU_8 and its compressed size in the registry (estimates: the GPU variant adds
# the CUDA 11.8 / cuDNN 8.6 runtime and TensorFlow's GPU wheel).
VARIANT_BUILD_MINUTES = {"cpu": 12.0, "gpu": 18.0}
VARIANT_IMAGE_GB = {"cpu": 1.5, "gpu": 5.5}


@dataclass(frozen=True)
class ImageBuildEstimate:
    """What building the trainer once costs, and keeping it."""

    machine_type: str
    minutes: float
    usd: float  # once per change of the trainer
    storage_gb: float
    usd_per_month: float  # storage of one build; the cleanup policy keeps a few

    def lines(self) -> list[str]:
        return [
            f"build: {self.minutes:g} build-minutes on {self.machine_type} at ${BUILD_MINUTE[self.machine_type]}/min"
            f" = ${self.usd:,.2f}, once per change of the trainer",
            f"registry: {self.storage_gb:g} GB at ${REGISTRY_GB_MONTH}/GB-month = ${self.usd_per_month:,.2f}/month "
            "for each build kept",
        ]


def image_build_estimate(
    variants: Sequence[str] = ("cpu", "gpu"), machine_type: str = "E2_HIGHCPU_8"
) -> ImageBuildEstimate:
    minutes = sum(VARIANT_BUILD_MINUTES[variant] for variant in variants)
    storage = sum(VARIANT_IMAGE_GB[variant] for variant in variants)
    return ImageBuildEstimate(
        machine_type, minutes, minutes * BUILD_MINUTE[machine_type], storage, storage * REGISTRY_GB_MONTH
    )
