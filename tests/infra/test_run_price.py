"""``max_cost`` on GKE: the stack hands the learner its run's hourly price (``TFCLI_HOURLY_PRICE``) from the dated
price table — computed here by hand — and a learner that paused itself at the limit ends its Job."""

from __future__ import annotations

import kubernetes_validate
import pytest
from infra_testkit import containers, experiment, jobs, plan_for, stack_config

from infra.manifests import build_manifests, context_for
from infra.pod_parts import EXIT_COST_LIMIT, HOURLY_PRICE_ENV
from infra.run_price import run_hourly_price

DISK_HOUR = 0.10 / 730  # pd-balanced, $ per GB-hour
# space-invaders-dqn: a pool of 2 x n1-standard-8 (8 vCPU, 30 GiB) spot with one T4 each, 100 GB disks, of which its
# one learner holds one node; 4 env workers need 2 e2-standard-4 (4 vCPU, 16 GiB, on-demand, 50 GB disks) at 3
# workers a node, the first of them also GKE's system node.
LEARNER_NODE = 8 * 0.006655 + 30 * 0.000892 + 0.14 + 100 * DISK_HOUR
CPU_NODE = 4 * 0.021811 + 16 * 0.002923 + 50 * DISK_HOUR
DEDICATED = 1 * LEARNER_NODE + 2 * CPU_NODE + 0.10  # + GKE's cluster fee
SHARED = 1 * LEARNER_NODE + 2 * CPU_NODE  # its learner's node and its workers' nodes; no fee


def learner_env(shared: bool, **spec: object) -> dict[str, str]:
    plan = plan_for(stack_config(experiment("space-invaders-dqn", **spec), shared=shared))
    (learner,) = containers(jobs(plan)["learner"])
    return {item["name"]: item.get("value") for item in learner["env"]}


@pytest.mark.parametrize(("shared", "price"), [(False, DEDICATED), (True, SHARED)], ids=["dedicated", "shared"])
def test_the_learner_gets_its_runs_hourly_price_with_max_cost(shared: bool, price: float) -> None:
    env = learner_env(shared, max_cost=50)
    assert float(env[HOURLY_PRICE_ENV]) == pytest.approx(price, abs=1e-4)
    assert run_hourly_price(experiment("space-invaders-dqn", max_cost=50), shared_cluster=shared) == pytest.approx(
        price, abs=1e-4
    )


def test_the_price_is_one_learner_node_not_the_learner_pool() -> None:
    """The plan prices the cluster (the learner pool's 2 nodes); the run holds one of them, so it is cheaper by one
    learner node — which is what made the trainer pause at 73 % of the budget."""
    spec = experiment("space-invaders-dqn", max_cost=50)
    assert spec.cluster is not None and spec.cluster.num_nodes == 2
    cluster_price = plan_for(stack_config(spec)).cost.usd_per_hour
    assert run_hourly_price(spec, shared_cluster=False) == pytest.approx(cluster_price - LEARNER_NODE, abs=1e-4)


@pytest.mark.parametrize(("shared", "price"), [(False, LEARNER_NODE + CPU_NODE + 0.10), (True, LEARNER_NODE)])
def test_a_single_mode_run_holds_no_worker_nodes(shared: bool, price: float) -> None:
    """On its own cluster the CPU pool's one (system) node; on a shared one no CPU node at all."""
    spec = experiment("space-invaders-dqn", max_cost=50, run_mode="single", num_workers=None)
    assert run_hourly_price(spec, shared_cluster=shared) == pytest.approx(price, abs=1e-4)


def test_without_max_cost_the_learner_gets_no_price() -> None:
    """A new price table then changes no Job (which would restart a running learner)."""
    assert HOURLY_PRICE_ENV not in learner_env(False)
    assert run_hourly_price(experiment("space-invaders-dqn"), shared_cluster=False) is None


@pytest.mark.parametrize("mode", ["single", "distributed"])
def test_a_run_paused_at_its_limit_ends_its_job_and_failed_containers_report_their_last_lines(mode: str) -> None:
    spec = experiment("space-invaders-dqn", max_cost=50, run_mode=mode, num_workers=2)
    ctx = context_for(spec, project="p-1", location="us-central1-a", hourly_price=1.5)
    job_objects = [obj for obj in build_manifests(spec, ctx, token="t") if obj["kind"] == "Job"]
    assert job_objects
    for job in job_objects:
        kubernetes_validate.validate(job, kubernetes_validate.utils.latest_version(), strict=True)
        fail_job = job["spec"]["podFailurePolicy"]["rules"][0]
        assert fail_job["action"] == "FailJob" and EXIT_COST_LIMIT in fail_job["onExitCodes"]["values"]
        for container in job["spec"]["template"]["spec"]["containers"]:
            assert container["terminationMessagePolicy"] == "FallbackToLogsOnError"
