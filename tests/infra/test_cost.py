"""The hourly estimate: GPUs, machines and the GKE fee counted; spot cheaper than on-demand; a dated table."""

from __future__ import annotations

import datetime

import pytest
from infra_testkit import BUNDLED_EXPERIMENTS, LIBRARY, experiment, plan_for, stack_config

from infra import prices
from infra.prices import NodeGroup, estimate, gpu_hourly, machine_hourly
from trainer.kernel.spec.library import BUNDLED_CONFIGS
from trainer.kernel.spec.loader import load_cluster
from trainer.kernel.spec.machines import GPU_TYPES


def test_spot_is_cheaper_than_on_demand_for_the_same_cluster() -> None:
    spot = experiment("space-invaders-dqn")  # 2 x n1-standard-8 + T4, spot
    assert spot.cluster is not None and spot.cluster.spot
    on_demand = experiment("space-invaders-dqn", cluster={**spot.cluster.model_dump(exclude_none=True), "spot": False})
    spot_cost = plan_for(stack_config(spot)).cost
    demand_cost = plan_for(stack_config(on_demand)).cost
    assert 0 < spot_cost.usd_per_hour < demand_cost.usd_per_hour
    assert any("(spot)" in line.item for line in spot_cost.lines)
    assert not any("(spot)" in line.item for line in demand_cost.lines)


def test_gpus_machines_disks_and_the_cluster_fee_are_counted() -> None:
    cost = plan_for(stack_config(experiment("space-invaders-dqn"))).cost
    items = {line.item: line for line in cost.lines}
    gpu = items["learner: nvidia-tesla-t4 GPU (spot)"]
    assert gpu.count == 1 and gpu.unit_usd_per_hour == gpu_hourly("nvidia-tesla-t4", spot=True) > 0
    assert items["learner: n1-standard-8 (spot)"].count == 1  # the one learner's node; the pool may grow to 2
    assert items["GKE cluster management fee"].count == 1
    assert items["GKE cluster management fee"].unit_usd_per_hour == prices.GKE_CLUSTER_FEE_HOUR
    assert cost.usd_per_hour == pytest.approx(sum(line.usd_per_hour for line in cost.lines), abs=1e-3)
    assert not [note for note in cost.notes if "not in the price table" in note]  # every machine and GPU priced
    # Idle, the learner pool is at zero (min_nodes 0): no GPU cost; at most it is at max_nodes.
    assert cost.idle_usd_per_hour < cost.usd_per_hour <= cost.max_usd_per_hour
    cpu_only = plan_for(stack_config(experiment("cartpole-ppo"))).cost
    assert cpu_only.usd_per_hour < cost.usd_per_hour


def test_n1_standard_8_and_t4_match_the_published_list_prices() -> None:
    assert machine_hourly("n1-standard-8", spot=False) == pytest.approx(0.38, abs=0.005)
    assert machine_hourly("e2-standard-8", spot=False) == pytest.approx(0.268, abs=0.005)
    assert gpu_hourly("nvidia-tesla-t4", spot=False) == 0.35
    assert machine_hourly("custom-8-32768", spot=False) > machine_hourly("n1-standard-8", spot=False)
    assert machine_hourly("z9-mystery-4", spot=False) is None


def test_an_unpriced_machine_is_reported_not_hidden() -> None:
    group = NodeGroup("learner", "z9-mystery-4", spot=False, disk_size_gb=10, nodes=1, min_nodes=0, max_nodes=1)
    cost = estimate([group], clusters=1)
    assert any("z9-mystery-4" in note for note in cost.notes)


def test_the_table_is_dated_and_covers_every_gpu_and_bundled_cluster() -> None:
    assert datetime.date.fromisoformat(prices.AS_OF) <= datetime.date.today()
    assert prices.REGION == "us-central1"
    for gpu in GPU_TYPES:
        on_demand, spot = prices.GPU_RATES[gpu.name]
        assert 0 < spot < on_demand
    for (family, custom), (on_demand, spot) in prices.MACHINE_RATES.items():
        assert 0 < spot.vcpu < on_demand.vcpu and 0 < spot.memory_gib < on_demand.memory_gib, (family, custom)
    for path in sorted((BUNDLED_CONFIGS / "clusters").iterdir()):
        cluster = load_cluster(path, library=LIBRARY).spec
        assert cluster.machine_type and machine_hourly(cluster.machine_type, spot=False), path.name


@pytest.mark.parametrize("name", BUNDLED_EXPERIMENTS)
def test_every_bundled_experiment_has_a_positive_estimate(name: str) -> None:
    cost = plan_for(stack_config(experiment(name))).cost
    assert cost.usd_per_hour > prices.GKE_CLUSTER_FEE_HOUR and cost.as_of == prices.AS_OF


def test_the_flagships_run_price_is_one_learner_node_its_cpu_nodes_and_the_fee() -> None:
    """From the table, by hand: one spot n1-standard-8 with a T4 (of the learner pool's two), the two on-demand
    e2-standard-4 CPU nodes its 4 env workers fill (3 a node, the first also GKE's system node), their boot disks and
    the cluster fee."""
    from infra.run_price import run_estimate, run_hourly_price

    spec = experiment("space-invaders-dqn", max_cost=50)
    n1_spot = prices.MACHINE_RATES[("n1", False)][1]
    e2 = prices.MACHINE_RATES[("e2", False)][0]
    disk_gb_hour = prices.PD_BALANCED_GB_MONTH / prices.HOURS_PER_MONTH
    t4_spot = prices.GPU_RATES["nvidia-tesla-t4"][1]
    learner_node = 8 * n1_spot.vcpu + 30 * n1_spot.memory_gib + t4_spot + 100 * disk_gb_hour
    cpu_node = 4 * e2.vcpu + 16 * e2.memory_gib + 50 * disk_gb_hour
    expected = learner_node + 2 * cpu_node + prices.GKE_CLUSTER_FEE_HOUR
    assert run_hourly_price(spec, shared_cluster=False) == pytest.approx(expected, abs=1e-4)
    assert run_hourly_price(spec, shared_cluster=True) == pytest.approx(learner_node + 2 * cpu_node, abs=1e-4)
    estimate = run_estimate(spec, shared_cluster=False)
    assert estimate is not None
    counts = {line.item: line.count for line in estimate.lines}
    assert counts["learner: n1-standard-8 (spot)"] == 1 and counts["learner: nvidia-tesla-t4 GPU (spot)"] == 1
    assert counts["cpu: e2-standard-4 (on-demand)"] == 2 and counts["GKE cluster management fee"] == 1
