"""The hourly price of one experiment's run, handed to its learner (``TFCLI_HOURLY_PRICE``) to enforce ``max_cost``;
and of one trial of a GKE sweep (:func:`trial_hourly_price`).

The price is what the run holds while it trains, not what its cluster could hold:

- its learner's node: one node of the learner pool (a learner asks for one GPU, or the node's CPU: one pod a node),
  whatever the pool's ``num_nodes`` — a second node is the pool's room (for a sweep, a restart), not this run's;
- its CPU nodes: on a cluster of its own the CPU pool at its initial size (one node for GKE's system pods, which also
  holds the env workers it fits; more for a distributed run's env workers, see :func:`infra.sizing.cpu_pool`); on a
  shared cluster only the nodes its env workers fill (none outside distributed mode);
- GKE's cluster management fee when the cluster is its own (a shared cluster's fee is its stack's);
- the boot disks of those nodes.

Left out: nodes the autoscaler adds or keeps idle beyond these, network egress, the results bucket and its storage,
other runs on a shared cluster. Prices come from a :class:`infra.prices.PriceBook`: the one ``start`` fixed into the
stack config (``tfcli:prices``, :mod:`infra.price_config`), else the dated table in :mod:`infra.prices`.
``experiment plan`` shows the cluster's price (every pool at its initial size), the same figure for a run on its own
cluster now that its learner pool starts with the run's one learner node (:func:`infra.sizing.starting_at`);
``status`` shows what the nodes now up have cost (:mod:`tfcli.gke.cost`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from infra import prices
from trainer.kernel.spec import Experiment

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
        flex_start=shape.flex_start,
    )


def run_nodes(experiment: Experiment, *, shared_cluster: bool) -> list[prices.NodeGroup] | None:
    """The nodes the run holds (see the module's docstring); None when it names no cluster (a shared one whose shape it
    does not know)."""
    from infra.sizing import cpu_pool, learner_pool, workers_per_cpu_node

    if experiment.cluster is None:
        return None
    groups = [_group("learner", learner_pool(experiment.cluster), 1)]
    cpu = cpu_pool(experiment)
    if not shared_cluster:
        cpu_nodes = cpu.nodes
    else:
        workers = experiment.num_workers if experiment.run_mode == "distributed" else 0
        cpu_nodes = math.ceil(workers / workers_per_cpu_node())
    if cpu_nodes:
        groups.append(_group("cpu", cpu, cpu_nodes))
    return groups


def run_estimate(
    experiment: Experiment, *, shared_cluster: bool, book: prices.PriceBook = prices.BUNDLED
) -> prices.CostEstimate | None:
    """What the run costs per hour: its nodes, and the cluster fee on a cluster of its own; None when its cluster's
    shape is unknown."""
    groups = run_nodes(experiment, shared_cluster=shared_cluster)
    if groups is None:
        return None
    return prices.estimate(groups, clusters=0 if shared_cluster else 1, book=book)


def run_hourly_price(
    experiment: Experiment, *, shared_cluster: bool, book: prices.PriceBook = prices.BUNDLED
) -> float | None:
    """Dollars per hour for ``TFCLI_HOURLY_PRICE``; None when the experiment sets no ``max_cost`` (the learner then
    gets no price, and a new price table does not change its Job) or its price is unknown."""
    if experiment.max_cost is None:
        return None
    estimate = run_estimate(experiment, shared_cluster=shared_cluster, book=book)
    return None if estimate is None else estimate.usd_per_hour


def trial_hourly_price(
    trials: list[Experiment], *, shared_cluster: bool, book: prices.PriceBook = prices.BUNDLED
) -> float | None:
    """Dollars per hour for each trial pod of a GKE sweep (``TFCLI_HOURLY_PRICE``, one value in the pod template the
    trials share); None unless a trial sets ``max_cost`` or the sweep has one (each trial's ``sweep_budget``: the
    trials sum their siblings' cost at this one price, :mod:`trainer.hooks.sweep_spend`), or when the cluster's shape
    is unknown.

    A trial holds its share of a learner node (one of the learner pods a node fits) and, on the sweep's own cluster, a
    share of the CPU node and the fee, split among the trials the learner pool holds at its largest. Not among
    ``--parallel`` trials: the price is part of the pod template, and a new template is a new Job, which would lose the
    trials it completed. A sweep run with fewer trials at a time than its pool holds is charged a little less fee and
    system node per trial than it pays.
    """
    if all(trial.max_cost is None and trial.sweep_budget is None for trial in trials):
        return None
    return trial_price(trials, shared_cluster=shared_cluster, book=book)


def trial_price(
    trials: list[Experiment], *, shared_cluster: bool, book: prices.PriceBook = prices.BUNDLED
) -> float | None:
    """Dollars per trial-hour (see :func:`trial_hourly_price`): its share of a learner node — a GPU share on a pool
    whose GPUs are shared — plus, on its own cluster, its share of the CPU node and the fee; None when the cluster's
    shape is unknown. ``plan -s`` shows it."""
    from infra.sizing import default_parallelism, learner_pods_per_node, widest

    trial = widest(trials)
    groups = run_nodes(trial, shared_cluster=shared_cluster)
    if groups is None:
        return None
    learner, *cpu = groups
    price = prices.estimate([learner], clusters=0, book=book).usd_per_hour / learner_pods_per_node(trial)
    if not shared_cluster:
        price += prices.estimate(cpu, clusters=1, book=book).usd_per_hour / default_parallelism(trials)
    return round(price, 4)
