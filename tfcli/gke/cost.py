"""What a GKE experiment has cost so far: node-hours of its cluster's pools by machine, GPU and spot/on-demand,
priced from the dated table in :mod:`infra.prices`, plus GKE's cluster fee.

Node-hours come from the Kubernetes Node objects (machine type, GPU type and count, spot, and their creation time)
and the fee's hours from the cluster's age (its ``kube-system`` namespace is made with it). Only the nodes that exist
now are counted: a node the autoscaler removed is gone from the API with its hours, so after a scale-down the figure
is a floor. Boot disks are left out (about 2 % of a GPU node's price). An experiment on a shared cluster is billed
through that cluster's stack, so this is for an experiment with a cluster of its own.

:func:`billing_now` is what the cluster bills per hour at this moment (fee and nodes up): after a run ends (completed,
paused at ``max_cost``) a cluster of its own keeps billing that until ``stop`` destroys it, and ``status``/``list``
say so loudly.

That is the cluster's bill so far, not what ``max_cost`` limits: the trainer counts the run's hourly price
(``TFCLI_HOURLY_PRICE``, computed once by :func:`infra.run_price.run_hourly_price` and handed to the learner) times
its training wall time plus the node time allowed per start (``TFCLI_START_ALLOWANCE_SECONDS``). ``status`` reads
both back from the learner pod (:func:`handed_price`, :func:`handed_allowance`) and warns about ``max_cost`` from the
same figure (:class:`Counted`), so its warning and the trainer's pause agree; it never prices the run a second way.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from infra import prices
from infra.pod_parts import HOURLY_PRICE_ENV, START_ALLOWANCE_ENV
from tfcli.gke.pod_states import ROLE_LABEL

INSTANCE_TYPE = "node.kubernetes.io/instance-type"
SPOT_LABELS = ("cloud.google.com/gke-spot", "cloud.google.com/gke-preemptible")
ACCELERATOR = "cloud.google.com/gke-accelerator"
POOL = "cloud.google.com/gke-nodepool"
GPU_RESOURCE = "nvidia.com/gpu"
WARN_FRACTION = 0.8  # `status` warns from 80 % of max_cost


@dataclass(frozen=True)
class CostItem:
    item: str
    hours: float  # node-hours, GPU-hours or cluster-hours
    usd: float


@dataclass(frozen=True)
class AccruedCost:
    usd: float
    items: tuple[CostItem, ...]
    as_of: str = prices.AS_OF
    unpriced: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {
            "usd": round(self.usd, 4),
            "items": [vars(item) for item in self.items],
            "prices_as_of": self.as_of,
            "unpriced": list(self.unpriced),
        }


def parse_time(text: str) -> datetime:
    """An API timestamp (``2026-11-24T10:00:00Z``) as an aware datetime."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _hours(created: str, now: datetime) -> float:
    return max(0.0, (now - parse_time(created)).total_seconds() / 3600)


def node_facts(node: dict[str, Any]) -> tuple[str, str, bool, int, str | None]:
    """(pool, machine type, spot, GPU count, GPU type or None) of a Kubernetes Node, from GKE's labels and capacity."""
    labels = node["metadata"].get("labels") or {}
    spot = any(labels.get(label) == "true" for label in SPOT_LABELS)
    gpus = int(((node.get("status") or {}).get("capacity") or {}).get(GPU_RESOURCE, 0) or 0)
    gpu = labels.get(ACCELERATOR) if gpus else None
    return labels.get(POOL, "?"), labels.get(INSTANCE_TYPE, "?"), spot, gpus, gpu


def accrued_cost(nodes: list[dict[str, Any]], *, cluster_created: str | None, now: datetime) -> AccruedCost:
    """The cost of these nodes since each was created, and of the cluster fee since ``cluster_created`` (None: the
    cluster is not the experiment's own)."""
    machine_hours: dict[tuple[str, str, bool], float] = defaultdict(float)
    gpu_hours: dict[tuple[str, bool], float] = defaultdict(float)
    for node in nodes:
        pool, machine, spot, gpus, gpu = node_facts(node)
        hours = _hours(node["metadata"]["creationTimestamp"], now)
        machine_hours[(pool, machine, spot)] += hours
        if gpu:
            gpu_hours[(gpu, spot)] += hours * gpus
    items: list[CostItem] = []
    unpriced: list[str] = []
    for (pool, machine, spot), hours in sorted(machine_hours.items()):
        rate = prices.machine_hourly(machine, spot=spot)
        label = f"{pool}: {machine} ({'spot' if spot else 'on-demand'}) node-hours"
        if rate is None:
            unpriced.append(machine)
        items.append(CostItem(label, hours, hours * (rate or 0.0)))
    for (gpu, spot), hours in sorted(gpu_hours.items()):
        rate = prices.gpu_hourly(gpu, spot=spot)
        if rate is None:
            unpriced.append(gpu)
        items.append(CostItem(f"{gpu} GPU ({'spot' if spot else 'on-demand'}) GPU-hours", hours, hours * (rate or 0.0)))
    if cluster_created is not None:
        hours = _hours(cluster_created, now)
        items.append(CostItem("GKE cluster management fee, hours", hours, hours * prices.GKE_CLUSTER_FEE_HOUR))
    return AccruedCost(sum(item.usd for item in items), tuple(items), unpriced=tuple(unpriced))


@dataclass(frozen=True)
class Billing:
    """What the cluster bills per hour right now: its fee (a cluster of its own) and every node up, by pool."""

    usd_per_hour: float
    lines: tuple[tuple[str, float], ...]  # (what, dollars per hour)

    def as_json(self) -> dict[str, Any]:
        return {
            "billing_usd_per_hour": round(self.usd_per_hour, 4),
            "billing": [{"item": item, "usd_per_hour": round(usd, 4)} for item, usd in self.lines],
        }

    def described(self) -> str:
        return ", ".join(f"{item} ${usd:,.2f}/h" for item, usd in self.lines)


def billing_now(nodes: list[dict[str, Any]], *, own_cluster: bool) -> Billing:
    """The hourly rate of these nodes (machine and GPUs, from their labels, as :func:`accrued_cost` prices them) plus
    GKE's fee when the cluster is the run's own: what keeps billing after the run ends until its stack is destroyed
    (the CPU pool never goes below one node; a learner node stays until the autoscaler removes it)."""
    counts: dict[str, int] = defaultdict(int)
    rates: dict[str, float] = {}
    for node in nodes:
        pool, machine, spot, gpus, gpu = node_facts(node)
        shown = f"{pool}: {machine}" + (f" + {gpus} x {gpu}" if gpu else "")
        shown += f" ({'spot' if spot else 'on-demand'})"
        counts[shown] += 1
        rate = prices.machine_hourly(machine, spot=spot) or 0.0
        rates[shown] = rate + (gpus * (prices.gpu_hourly(gpu, spot=spot) or 0.0) if gpu else 0.0)
    lines = [("GKE cluster management fee", prices.GKE_CLUSTER_FEE_HOUR)] if own_cluster else []
    lines += [(f"{count} x {shown}", count * rates[shown]) for shown, count in sorted(counts.items())]
    return Billing(sum(usd for _, usd in lines), tuple(lines))


def _learner_variable(pods: list[dict[str, Any]], name: str) -> str | None:
    """The value of the learner container's environment variable ``name`` (None: unset, or no learner pod listed)."""
    for pod in pods:
        if ((pod.get("metadata") or {}).get("labels") or {}).get(ROLE_LABEL) != "learner":
            continue
        for container in (pod.get("spec") or {}).get("containers") or []:
            for variable in container.get("env") or []:
                if variable.get("name") == name and variable.get("value"):
                    return str(variable["value"])
    return None


def handed_price(pods: list[dict[str, Any]]) -> float | None:
    """The hourly price the stack handed the learner (its ``TFCLI_HOURLY_PRICE``); None without one (no ``max_cost``,
    or no learner pod listed)."""
    value = _learner_variable(pods, HOURLY_PRICE_ENV)
    return None if value is None else float(value)


def handed_allowance(pods: list[dict[str, Any]]) -> float:
    """The node seconds per start the stack handed the learner beside its price (``TFCLI_START_ALLOWANCE_SECONDS``);
    0 without (a stack from before it)."""
    return float(_learner_variable(pods, START_ALLOWANCE_ENV) or 0.0)


@dataclass(frozen=True)
class Counted:
    """What the trainer counts against ``max_cost`` (trainer/hooks/cost_limit.py), by the trainer's own function
    (:func:`trainer.kernel.budget.counted_usd`), so ``status``'s warning and the pause never disagree."""

    hourly_price: float
    wall_seconds: float
    starts: int
    allowance_seconds: float

    @property
    def usd(self) -> float:
        from trainer.kernel.budget import counted_usd

        return counted_usd(self.hourly_price, self.wall_seconds, self.starts, self.allowance_seconds)

    @property
    def node_time_usd(self) -> float:
        """The part of :attr:`usd` that is node time around the training (the allowance for each start)."""
        from trainer.kernel.budget import counted_usd

        return counted_usd(self.hourly_price, 0.0, self.starts, self.allowance_seconds)

    def as_json(self) -> dict[str, Any]:
        return {
            "hourly_price": self.hourly_price,
            "counted_usd": round(self.usd, 4),
            "starts": self.starts,
            "start_allowance_seconds": self.allowance_seconds,
            "node_time_usd": round(self.node_time_usd, 4),
        }


def budget_warning(accrued: float, max_cost: float | None) -> str:
    """The warning ``status`` prints from 80 % of ``max_cost`` ("" below it or without one). ``accrued``: the cost the
    trainer counts (:class:`Counted`) where the learner has a price, else the nodes' cost so far."""
    if max_cost is None or accrued < WARN_FRACTION * max_cost:
        return ""
    if accrued >= max_cost:
        return f"cost ${accrued:,.2f} has reached max_cost ${max_cost:,.2f}: the trainer pauses itself"
    return (
        f"cost ${accrued:,.2f} is {accrued / max_cost:.0%} of max_cost ${max_cost:,.2f}; "
        "the trainer pauses itself at the limit"
    )
