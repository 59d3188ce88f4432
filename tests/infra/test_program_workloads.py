"""The stack program under Pulumi's mocks: the node pools and the Jobs it declares (see ``test_program`` for what
each kind of stack declares and how the pieces are linked). Only the learner gets a GPU, and a GPU pool upgrades
without a surge node; a run's own learner pool starts with one node and a shared cluster's at its minimum; the
env workers are reachable where the learner dials them, with the transport token; images, suspend and regional
locations follow the stack config."""

from __future__ import annotations

import math
import re

import pytest
from infra_testkit import (
    PROJECT,
    RUN_MODES,
    ZONE,
    containers,
    experiment,
    in_mode,
    jobs,
    plan_for,
    stack_config,
)

from infra import naming
from infra.plan import SECRET
from infra.stack_files import cluster_stack_config
from trainer.kernel.spec.library import BUNDLED_CONFIGS

GPU = "nvidia.com/gpu"


def test_gpu_pools_upgrade_without_a_surge_node() -> None:
    """GKE's default surge upgrade adds a node first, which a GPU pool's quota often has no room for (the upgrade then
    fails and is retried for ever); the GPU pool upgrades in place instead, one node at a time. The CPU pool keeps
    GKE's default. The keys are checked against pulumi-gcp's own input types by the plan's mocks."""
    plan = plan_for(stack_config(in_mode("space-invaders-dqn", "distributed")))
    learner = plan.named("space-invaders-dqn-learner-pool").inputs
    assert learner["nodeConfig"]["guestAccelerators"]
    assert learner["upgradeSettings"] == {"strategy": "SURGE", "maxSurge": 0, "maxUnavailable": 1}
    assert "upgradeSettings" not in plan.named("space-invaders-dqn-cpu-pool").inputs
    assert (
        "upgradeSettings"
        not in plan_for(stack_config(in_mode("cartpole-ppo", "single"))).named("cartpole-ppo-learner-pool").inputs
    )  # no GPU: the default surge


def test_a_regional_location_spreads_node_pools_over_three_zones() -> None:
    spec = experiment("space-invaders-dqn")  # 2 nodes
    config = {k: v for k, v in stack_config(spec).items() if k != "gcp:zone"}
    plan = plan_for(config)
    pool = plan.named(f"{spec.name}-learner-pool").inputs
    assert pool["location"] == "us-central1"
    assert pool["initialNodeCount"] == math.ceil(1 / 3)  # per zone: the one learner's node, at least one per zone
    assert pool["autoscaling"]["totalMaxNodeCount"] == 2  # totals are over all zones
    (note,) = [note for note in plan.cost.notes if note.startswith("regional cluster")]
    assert "nodes x 3" in note and "no free-tier credit" in note
    assert plan.named(f"{spec.name}-bucket").inputs["location"] == "US-CENTRAL1"


@pytest.mark.parametrize("cluster", sorted(p.stem for p in (BUNDLED_CONFIGS / "clusters").iterdir()))
def test_every_bundled_cluster_makes_a_learner_pool_of_its_shape(cluster: str) -> None:
    spec = experiment("cartpole-ppo", cluster=cluster, run_mode="distributed", num_workers=2)
    assert spec.cluster is not None
    plan = plan_for(stack_config(spec))
    pool = plan.named("cartpole-ppo-learner-pool").inputs
    config = pool["nodeConfig"]
    assert config["machineType"] == spec.cluster.machine_type  # predefined or custom-C-MB, as GKE takes it
    assert config["spot"] is spec.cluster.spot and config["diskSizeGb"] == spec.cluster.disk_size
    assert pool["autoscaling"]["totalMinNodeCount"] == spec.cluster.min_nodes
    assert pool["autoscaling"]["totalMaxNodeCount"] == spec.cluster.max_nodes
    assert pool["initialNodeCount"] == 1  # a zone: exact; the one learner's node, the rest is autoscaling room
    (learner,) = containers(jobs(plan)["learner"])
    gpus = spec.cluster.gpus_per_node or 0
    assert config.get("guestAccelerators", [{}])[0].get("count", 0) == gpus
    assert learner["resources"]["limits"].get(GPU) == ("1" if gpus else None)  # one GPU even on a 2-GPU node
    assert not [note for note in plan.cost.notes if "not in the price table" in note]


@pytest.mark.parametrize(("num_nodes", "started"), [(1, 1), (2, 1), (4, 1)], ids=["1", "2", "4"])
def test_a_runs_own_learner_pool_starts_with_the_one_node_its_learner_uses(num_nodes: int, started: int) -> None:
    """``num_nodes`` is the pool's room (its autoscaling maximum); the run starts, and pays for, its learner's node."""
    gpu_cluster = {"name": "t4", "machine_type": "n1-standard-8", "gpus_per_node": 1, "num_nodes": num_nodes}
    spec = experiment("space-invaders-dqn", cluster=gpu_cluster)
    plan = plan_for(stack_config(spec))
    pool = plan.named(f"{spec.name}-learner-pool").inputs
    assert (pool["initialNodeCount"], pool["autoscaling"]["totalMaxNodeCount"]) == (started, num_nodes)
    assert any(note.startswith("zonal cluster (us-central1-a)") for note in plan.cost.notes)


def test_a_shared_clusters_learner_pool_starts_at_its_minimum_and_autoscales() -> None:
    """No experiment yet: a GPU pool at zero costs nothing until one comes (the autoscaler adds its node)."""
    spec = experiment("space-invaders-dqn")
    assert spec.cluster is not None
    plan = plan_for(cluster_stack_config(spec.cluster, project=PROJECT, zone=ZONE), stack="shared")
    pool = plan.named(f"{spec.cluster.name}-learner-pool").inputs
    assert pool["initialNodeCount"] == 0 and pool["autoscaling"]["totalMaxNodeCount"] == spec.cluster.num_nodes
    with_minimum = spec.cluster.model_copy(update={"min_nodes": 1})
    plan = plan_for(cluster_stack_config(with_minimum, project=PROJECT, zone=ZONE), stack="shared")
    assert plan.named(f"{spec.cluster.name}-learner-pool").inputs["initialNodeCount"] == 1


@pytest.mark.parametrize("mode", RUN_MODES)
def test_only_the_learner_asks_for_a_gpu(mode: str) -> None:
    plan = plan_for(stack_config(in_mode("space-invaders-dqn", mode)))
    found = jobs(plan)
    (learner,) = containers(found["learner"])
    assert learner["resources"]["limits"][GPU] == "1" and learner["resources"]["requests"][GPU] == "1"
    pod = found["learner"].inputs["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {
        naming.POOL_LABEL: naming.LEARNER_POOL,
        "cloud.google.com/gke-accelerator": "nvidia-tesla-t4",
    }
    assert {"key": GPU, "operator": "Exists", "effect": "NoSchedule"} in pod["tolerations"]
    for name, job in found.items():
        if name != "learner":
            for container in containers(job):
                assert GPU not in container["resources"]["limits"] and GPU not in container["resources"]["requests"]
            assert job.inputs["spec"]["template"]["spec"]["nodeSelector"] == {naming.POOL_LABEL: naming.CPU_POOL}
            assert "tolerations" not in job.inputs["spec"]["template"]["spec"]
    learner_pool = plan.named("space-invaders-dqn-learner-pool").inputs["nodeConfig"]
    assert learner_pool["guestAccelerators"] == [
        {"type": "nvidia-tesla-t4", "count": 1, "gpuDriverInstallationConfig": {"gpuDriverVersion": "DEFAULT"}}
    ]
    assert "guestAccelerators" not in plan.named("space-invaders-dqn-cpu-pool").inputs["nodeConfig"]


def test_a_cpu_cluster_gives_the_learner_no_gpu_and_the_cpu_image() -> None:
    plan = plan_for(stack_config(experiment("cartpole-ppo")))
    (learner,) = containers(jobs(plan)["learner"])
    assert GPU not in learner["resources"]["limits"]
    assert learner["image"].endswith(":0.1.0-cpu")
    pod = jobs(plan)["learner"].inputs["spec"]["template"]["spec"]
    assert "tolerations" not in pod and "nodeSelector" not in pod
    affinity = pod["affinity"]["nodeAffinity"]
    (required,) = affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert required["matchExpressions"] == [{"key": naming.POOL_LABEL, "operator": "In", "values": ["learner", "cpu"]}]
    (preferred,) = affinity["preferredDuringSchedulingIgnoredDuringExecution"]
    assert preferred["preference"]["matchExpressions"][0]["values"] == ["learner"]
    assert "guestAccelerators" not in plan.named("cartpole-ppo-learner-pool").inputs["nodeConfig"]


@pytest.mark.parametrize("suspend", [True, False])
def test_suspend_follows_stack_config(suspend: bool) -> None:
    plan = plan_for(stack_config(in_mode("space-invaders-dqn", "distributed"), **{"tfcli:suspend": suspend}))
    assert {name: job.inputs["spec"]["suspend"] for name, job in jobs(plan).items()} == {
        "learner": suspend,
        "env-workers": suspend,
    }
    assert plan.outputs["suspended"] is suspend


def test_distributed_workers_are_reachable_at_the_addresses_the_learner_is_given() -> None:
    spec = experiment("space-invaders-dqn", num_workers=5)
    plan = plan_for(stack_config(spec))
    found = jobs(plan)
    args = containers(found["learner"])[0]["args"]
    assert args[:2] == ["run", "--spec"] and args[args.index("--output") + 1] == f"/results/{spec.name}"
    workers = args[args.index("--workers") + 1].split(",")
    workers_job = found["env-workers"].inputs["metadata"]["name"]
    assert re.fullmatch(r"env-workers-[0-9a-f]{8}", workers_job)
    assert workers == [f"{workers_job}-{i}.env-workers:7000" for i in range(5)]

    worker_spec = found["env-workers"].inputs["spec"]
    assert worker_spec["completionMode"] == "Indexed"
    assert worker_spec["completions"] == worker_spec["parallelism"] == 5
    pod = worker_spec["template"]["spec"]
    assert pod["subdomain"] == "env-workers"
    (worker,) = pod["containers"]
    assert worker["args"] == [
        "env-worker",
        "--spec",
        "/etc/tfcli/experiment.yaml",
        "--port",
        "7000",
        "--host",
        "0.0.0.0",
    ]

    (service,) = plan.of_type("kubernetes:core/v1:Service")
    assert service.inputs["metadata"]["name"] == "env-workers"
    assert service.inputs["spec"]["clusterIP"] == "None"
    assert service.inputs["spec"]["selector"].items() <= worker_spec["template"]["metadata"]["labels"].items()
    for container in (worker, containers(found["learner"])[0]):
        token = next(env for env in container["env"] if env["name"] == "TRAINER_TOKEN")
        assert token["valueFrom"]["secretKeyRef"] == {"name": "transport-token", "key": "token"}
    # Three 1-vCPU workers per CPU node: five workers start two nodes.
    assert plan.named(f"{spec.name}-cpu-pool").inputs["initialNodeCount"] == 2


def test_single_and_multi_threaded_runs_have_no_token_and_no_workers() -> None:
    for mode in ("single", "multi-threaded"):
        plan = plan_for(stack_config(in_mode("cartpole-ppo", mode)))
        (learner,) = containers(jobs(plan)["learner"])
        assert "--workers" not in learner["args"]
        assert all(env["name"] != "TRAINER_TOKEN" for env in learner["env"])
        assert not plan.of_type("kubernetes:core/v1:Secret")


def test_images_default_to_the_projects_registry_and_follow_tfcli_image() -> None:
    spec = experiment("space-invaders-dqn")
    plan = plan_for(stack_config(spec))
    registry = f"us-central1-docker.pkg.dev/{PROJECT}/tfcli/trainer"
    found = jobs(plan)
    assert containers(found["learner"])[0]["image"] == f"{registry}:0.1.0-gpu"
    assert containers(found["env-workers"])[0]["image"] == f"{registry}:0.1.0-cpu"

    custom = plan_for(stack_config(spec, **{"tfcli:image": "ghcr.io/me/trainer:dev"}))
    assert {c["image"] for job in jobs(custom).values() for c in containers(job)} == {"ghcr.io/me/trainer:dev"}


def test_the_generated_transport_token_is_secret_and_kept_across_updates() -> None:
    plan = plan_for(stack_config(experiment("space-invaders-dqn")))
    (secret,) = plan.of_type("kubernetes:core/v1:Secret")
    assert secret.inputs["stringData"] == SECRET  # the whole of stringData is secret in state and in plans
    assert set(secret.options["ignoreChanges"]) == {"stringData", "data"}

    given = plan_for(stack_config(experiment("space-invaders-dqn"), **{"tfcli:transportToken": "s3cr3t-from-config"}))
    (secret,) = given.of_type("kubernetes:core/v1:Secret")
    assert "ignoreChanges" not in secret.options  # a token from config is applied as it changes
    assert "s3cr3t-from-config" not in repr(given)
