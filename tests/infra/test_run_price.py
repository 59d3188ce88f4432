"""``max_cost`` on GKE: the stack hands the learner its run's hourly price (``TFCLI_HOURLY_PRICE``) from the dated
price table — computed here by hand — and a learner that paused itself at the limit ends its Job."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from infra_testkit import containers, experiment, jobs, plan_for, stack_config

from infra.manifests import build_manifests, context_for
from infra.pod_parts import EXIT_COST_LIMIT, HOURLY_PRICE_ENV, START_ALLOWANCE_ENV
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
    assert env[START_ALLOWANCE_ENV] == "1200"  # and the node time per start max_cost counts (trainer/kernel/budget.py)
    assert run_hourly_price(experiment("space-invaders-dqn", max_cost=50), shared_cluster=shared) == pytest.approx(
        price, abs=1e-4
    )


def test_the_price_is_one_learner_node_and_the_plan_starts_only_that_one() -> None:
    """The run holds one learner node of its 2-node pool; the pool starts with that one node (the second is the
    autoscaler's room), so the plan's running price and the learner's price are the same figure."""
    spec = experiment("space-invaders-dqn", max_cost=50)
    assert spec.cluster is not None and spec.cluster.num_nodes == 2
    plan = plan_for(stack_config(spec))
    assert run_hourly_price(spec, shared_cluster=False) == pytest.approx(plan.cost.usd_per_hour, abs=1e-4)
    assert plan.cost.max_usd_per_hour == pytest.approx(plan.cost.usd_per_hour + LEARNER_NODE + CPU_NODE, abs=1e-4)


@pytest.mark.parametrize(("shared", "price"), [(False, LEARNER_NODE + CPU_NODE + 0.10), (True, LEARNER_NODE)])
def test_a_single_mode_run_holds_no_worker_nodes(shared: bool, price: float) -> None:
    """On its own cluster the CPU pool's one (system) node; on a shared one no CPU node at all."""
    spec = experiment("space-invaders-dqn", max_cost=50, run_mode="single", num_workers=None)
    assert run_hourly_price(spec, shared_cluster=shared) == pytest.approx(price, abs=1e-4)


def test_without_max_cost_the_learner_gets_no_price() -> None:
    """A new price table then changes no Job (which would restart a running learner)."""
    assert HOURLY_PRICE_ENV not in learner_env(False) and START_ALLOWANCE_ENV not in learner_env(False)
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


# cartpole-lr's cluster single-node: one on-demand e2-standard-8 (8 vCPU, 32 GiB, 100 GB disk), the learner pool; its
# own cluster adds one e2-standard-4 system node (50 GB disk) and the fee.
E2_8_NODE = 8 * 0.021811 + 32 * 0.002923 + 100 * DISK_HOUR


def sweep_settings(*sets: str, shared: bool = False, max_cost: float | None = None) -> Any:
    """The bundled sweep cartpole-lr in single mode (``max_cost``: the sweep's), as its stack's config validates it."""
    from infra_testkit import LIBRARY, PROJECT, SHARED_STACK, ZONE

    from infra.sweep_config import sweep_settings_from_config
    from tfcli.sweeps.create import SweepOptions, plan_sweep

    planned = plan_sweep("cartpole-lr", SweepOptions(sets=("run_mode=single", *sets)), LIBRARY)
    sweep = planned.sweep.model_copy(update={"max_cost": max_cost})
    config: dict[str, Any] = {"gcp:project": PROJECT, "gcp:zone": ZONE, "tfcli:sweep": sweep.model_dump()}
    if shared:
        config["tfcli:sharedClusterStack"] = SHARED_STACK
    return sweep_settings_from_config(config, stack="cartpole-lr")


def sweep_job(*sets: str, parallelism: int | None = None, shared: bool = False) -> dict[str, Any]:
    import dataclasses

    from infra.sweep_program import sweep_objects

    sweep = sweep_settings(*sets, shared=shared)
    if parallelism:
        sweep = dataclasses.replace(sweep, parallelism=parallelism)
    return next(obj for obj in sweep_objects(sweep) if obj["kind"] == "Job")


def trial_env(job: dict[str, Any]) -> dict[str, Any]:
    (container,) = job["spec"]["template"]["spec"]["containers"]
    return {item["name"]: item.get("value") for item in container["env"]}


@pytest.mark.parametrize("shared", [False, True], ids=["own-cluster", "shared"])
def test_each_trial_of_a_gke_sweep_with_max_cost_gets_its_share_of_the_price(shared: bool) -> None:
    """A trial holds one of the learner pods a node fits and, on the sweep's own cluster, its share of the system
    node and the fee among the trials the pool holds; the same price at any --parallel (a new --parallel is a new Job:
    pulumi-kubernetes replaces a Job whose parallelism changes, so the name carries it, docs/design.md §11)."""
    job = sweep_job("max_cost=0.5", shared=shared)
    per_node = job["spec"]["parallelism"]  # the pool (one node) at its largest: what a node fits
    assert per_node == 3
    price = E2_8_NODE / per_node + (0 if shared else (CPU_NODE + 0.10) / per_node)
    assert float(trial_env(job)[HOURLY_PRICE_ENV]) == pytest.approx(price, abs=1e-4)
    assert trial_env(job)[START_ALLOWANCE_ENV] == "1200"  # each trial start counts its node time too
    other = sweep_job("max_cost=0.5", parallelism=1, shared=shared)
    assert trial_env(other)[HOURLY_PRICE_ENV] == trial_env(job)[HOURLY_PRICE_ENV]
    assert other["metadata"]["name"] != job["metadata"]["name"]
    assert HOURLY_PRICE_ENV not in trial_env(sweep_job(shared=shared))  # no max_cost, no price


def test_a_sweep_with_a_budget_of_its_own_gives_every_trial_the_price_and_the_budget() -> None:
    """The sweep's ``max_cost`` alone (no trial sets one): the trials need the price to count each other's cost, and
    each trial's spec in the ConfigMap carries the sweep's budget."""
    from infra.sweep_program import sweep_objects

    objects = sweep_objects(sweep_settings(max_cost=20.0))
    job = next(obj for obj in objects if obj["kind"] == "Job")
    assert float(trial_env(job)[HOURLY_PRICE_ENV]) > 0
    (config_map,) = (obj for obj in objects if obj["kind"] == "ConfigMap" and obj["metadata"]["name"] == "sweep-trials")
    budgets = [yaml.safe_load(text)["sweep_budget"] for text in config_map["data"].values()]
    assert budgets == [{"sweep": "cartpole-lr", "trials": 9, "max_cost": 20.0}] * 9


@pytest.mark.slow  # a trainer process (README "Development")
def test_a_trial_pod_pauses_itself_at_its_max_cost_with_exit_0(tmp_path: Path) -> None:
    """Trial 0's pod as a process, with the env and args the Job gives it: the trainer counts the price against its
    max_cost (it no longer says "this run has none"), pauses and exits 0 (``--output-parent``: a sweep's slot), which
    completes its index instead of failing it; ``result.json`` says it paused and why."""
    from infra.sweep_program import sweep_objects

    settings = sweep_settings("max_cost=0.00001", "total_timesteps=200000")
    objects = sweep_objects(settings)
    job = next(obj for obj in objects if obj["kind"] == "Job")
    env = {"PATH": os.environ["PATH"], **{k: v for k, v in trial_env(job).items() if v is not None}, "TRIAL_INDEX": "0"}
    spec_dir = tmp_path / "spec"
    spec_dir.mkdir()
    (config_map,) = (obj for obj in objects if obj["kind"] == "ConfigMap" and obj["metadata"]["name"] == "sweep-trials")
    for name, text in config_map["data"].items():
        (spec_dir / name).write_text(text)
    (container,) = job["spec"]["template"]["spec"]["containers"]
    args = [
        arg.replace("$(TRIAL_INDEX)", "0").replace("/etc/tfcli/", f"{spec_dir}/").replace("/results/", f"{tmp_path}/r/")
        for arg in container["args"]
    ]
    assert "--output-parent" in args
    output = tmp_path / "r" / "cartpole-lr" / "cartpole-lr-0"
    command = [sys.executable, "-m", "trainer", *args]
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads((output / "result.json").read_text())
    assert result["status"] == "paused" and result["reason"].startswith("max_cost reached")
    assert "has none" not in done.stderr
    rule = job["spec"]["podFailurePolicy"]["rules"][0]
    assert rule["action"] == "FailIndex" and EXIT_COST_LIMIT in rule["onExitCodes"]["values"]  # an older trainer
