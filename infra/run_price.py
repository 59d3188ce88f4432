"""The hourly price of one experiment's run, handed to its learner (``TFCLI_HOURLY_PRICE``) to enforce ``max_cost``.

On a cluster of its own the run keeps up the whole cluster: its learner pool and CPU pool at their initial size
(what ``experiment plan`` calls "running") plus GKE's management fee. On a shared cluster it is billed for what it
occupies: one node of the learner pool and, in distributed mode, the CPU nodes its env workers fill; the cluster's fee
and idle nodes belong to the cluster's stack. Prices come from the dated table in :mod:`infra.prices`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from infra import prices
from tfcli.spec import Experiment

if TYPE_CHECKING:
    from infra.sizing import PoolShape


def _group(pool: str, shape: PoolShape, nodes: int) -> prices.NodeGroup:
    return prices.NodeGroup(
        pool=pool,
        machine_type=shape.machine_type,
        spot=shape.spot,
        disk_size_gb=shape.disk_size_gb,
        nodes=nodes,
        min_nodes=nodes,
        max_nodes=nodes,
        gpu_type=shape.gpu_type if shape.gpus_per_node else None,
        gpus_per_node=shape.gpus_per_node,
    )


def run_estimate(experiment: Experiment, *, shared_cluster: bool) -> prices.CostEstimate | None:
    """What the run costs per hour; None when it names no cluster (a shared one whose shape it does not know).
    Imports the pool shapes (and with them Pulumi): only stacks with ``max_cost`` pay for that."""
    from infra.sizing import cpu_pool, learner_pool, workers_per_cpu_node

    if experiment.cluster is None:
        return None
    learner = learner_pool(experiment.cluster)
    cpu = cpu_pool(experiment)
    if not shared_cluster:
        groups = [_group("learner", learner, learner.nodes), _group("cpu", cpu, cpu.nodes)]
        return prices.estimate(groups, clusters=1)
    workers = experiment.num_workers if experiment.run_mode == "distributed" else 0
    groups = [_group("learner", learner, 1)]
    if workers:
        groups.append(_group("cpu", cpu, math.ceil(workers / workers_per_cpu_node())))
    return prices.estimate(groups, clusters=0)


def run_hourly_price(experiment: Experiment, *, shared_cluster: bool) -> float | None:
    """Dollars per hour for ``TFCLI_HOURLY_PRICE``; None when the experiment sets no ``max_cost`` (the learner then
    gets no price, and a new price table does not change its Job) or its price is unknown."""
    if experiment.max_cost is None:
        return None
    estimate = run_estimate(experiment, shared_cluster=shared_cluster)
    return None if estimate is None else estimate.usd_per_hour
