"""Flex-start (GKE's Dynamic Workload Scheduler) as a provisioning choice beside spot and on-demand: the cluster spec's
``provisioning: flex-start`` makes a learner pool as GKE's docs create one (``flex_start``, no reservation, autoscaled
with location policy ANY, no auto-repair: pulumi-gcp's node pool inputs, checked against the installed SDK by the
mocks), priced in ``plan`` at the table's flex-start rates; ``spot: true`` keeps its meaning."""

from __future__ import annotations

from typing import Any

import pytest
from infra_testkit import LIBRARY, plan_for, stack_config

from infra import prices
from infra.plan import Plan
from infra.run_price import run_estimate
from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec import Experiment, load_experiment

T4 = {"machine_type": "n1-standard-8", "gpus_per_node": 1, "gpu_type": "nvidia-tesla-t4", "num_nodes": 1}


def flagship(**cluster: Any) -> Experiment:
    """The flagship experiment (distributed DQN on Space Invaders) on one T4 node provisioned as asked."""
    overrides = {"cluster": {"name": "t4", **T4, **cluster}}
    return load_experiment("space-invaders-dqn", library=LIBRARY, overrides=overrides).spec


def learner_pool(plan: Plan) -> dict[str, Any]:
    (pool,) = [p for p in plan.of_type("gcp:container/nodePool:NodePool") if p.inputs["name"] == "learner"]
    return dict(pool.inputs)


def test_a_flex_start_pool_is_made_as_gke_makes_one() -> None:
    pool = learner_pool(plan_for(stack_config(flagship(provisioning="flex-start"))))
    config = pool["nodeConfig"]
    assert config["flexStart"] is True and config["spot"] is False
    assert config["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    assert pool["autoscaling"]["locationPolicy"] == "ANY"
    assert pool["management"]["autoRepair"] is False


@pytest.mark.parametrize(("cluster", "spot"), [({"spot": True}, True), ({"provisioning": "spot"}, True), ({}, False)])
def test_spot_keeps_its_meaning_and_other_pools_get_no_flex_start(cluster: dict[str, Any], spot: bool) -> None:
    pool = learner_pool(plan_for(stack_config(flagship(**cluster))))
    config = pool["nodeConfig"]
    assert config["spot"] is spot
    assert "flexStart" not in config and "reservationAffinity" not in config
    assert pool["management"]["autoRepair"] is True


def test_flex_start_is_priced_between_spot_and_on_demand() -> None:
    def hourly(**cluster: Any) -> float:
        estimate = run_estimate(flagship(**cluster), shared_cluster=False)
        assert estimate is not None
        return estimate.usd_per_hour

    spot, flex, on_demand = hourly(spot=True), hourly(provisioning="flex-start"), hourly()
    assert spot < flex < on_demand
    gpu = prices.gpu_hourly("nvidia-tesla-t4", spot=False, flex_start=True)
    assert gpu == pytest.approx(prices.GPU_RATES["nvidia-tesla-t4"][0] * (1 - prices.FLEX_START_DISCOUNT))


def test_plan_prices_the_flex_start_pool_and_names_it() -> None:
    plan = plan_for(stack_config(flagship(provisioning="flex-start")))
    items = [line.item for line in plan.cost.lines]
    assert "learner: nvidia-tesla-t4 GPU (flex-start)" in items
    (gpu,) = [line for line in plan.cost.lines if line.item == "learner: nvidia-tesla-t4 GPU (flex-start)"]
    assert gpu.unit_usd_per_hour == prices.gpu_hourly("nvidia-tesla-t4", spot=False, flex_start=True)


@pytest.mark.parametrize(
    ("cluster", "message"),
    [
        ({"spot": True, "provisioning": "flex-start"}, "cluster.provisioning: 'flex-start' contradicts spot: true"),
        ({"gpus_per_node": 0, "gpu_type": None, "provisioning": "flex-start"}, "flex-start provisions GPU nodes"),
        ({"provisioning": "preemptible"}, "cluster.provisioning"),
    ],
)
def test_bad_provisioning_is_refused_naming_the_field(cluster: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        flagship(**cluster)
