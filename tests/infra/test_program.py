"""The stack program under Pulumi's mocks: what each kind of stack declares and how the pieces are linked."""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import pytest
from infra_testkit import (
    PROJECT,
    RUN_MODES,
    SHARED_STACK,
    ZONE,
    containers,
    experiment,
    in_mode,
    jobs,
    k8s_objects,
    plan_for,
    stack_config,
)

import infra
from infra import naming
from infra.plan import SECRET, plan_stack, plan_stack_file
from infra.plan_mocks import FAKE_CA, FAKE_ENDPOINT
from infra.stack_files import STACKS_DIR, cluster_stack_config
from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec.library import BUNDLED_CONFIGS

COMPONENTS = {
    "tfcli:infra:GkeCluster",
    "tfcli:infra:NodePools",
    "tfcli:infra:ResultsBucket",
    "tfcli:infra:Workloads",
}
GPU = "nvidia.com/gpu"


def _types(plan):
    return [r.type for r in plan.resources]


@pytest.mark.parametrize("shared", [False, True], ids=["dedicated", "shared"])
@pytest.mark.parametrize("mode", RUN_MODES)
def test_experiment_stack_declares_the_cluster_bucket_and_workloads(mode: str, shared: bool) -> None:
    spec = in_mode("space-invaders-dqn", mode)
    plan = plan_for(stack_config(spec, shared=shared))
    types = _types(plan)
    name = spec.name

    components = {r.type for r in plan.resources if not r.custom and r.type.startswith("tfcli:")}
    if shared:
        assert components == {"tfcli:infra:ResultsBucket", "tfcli:infra:Workloads"}
        assert "gcp:container/cluster:Cluster" not in types and "gcp:container/nodePool:NodePool" not in types
        assert types.count("pulumi:pulumi:StackReference") == 1
        assert plan.named(f"{name}-cluster-stack").inputs["name"] == SHARED_STACK
        assert plan.outputs["sharedClusterStack"] == SHARED_STACK
    else:
        assert components == COMPONENTS
        assert types.count("gcp:container/cluster:Cluster") == 1
        assert types.count("gcp:container/nodePool:NodePool") == 2
        assert types.count("gcp:projects/iAMMember:IAMMember") == 5
        assert plan.named(f"{name}-cluster").inputs["name"] == name  # a dedicated cluster is named after its experiment
    assert types.count("gcp:storage/bucket:Bucket") == 1
    assert types.count("pulumi:providers:kubernetes") == 1

    kinds = sorted(r.type.rsplit(":", 1)[-1] for r in k8s_objects(plan) if r.type != "pulumi:providers:kubernetes")
    expected = ["ConfigMap", "Job", "Namespace", "ServiceAccount"]
    if mode == "distributed":
        expected = sorted([*expected, "Job", "Secret", "Service"])
    assert kinds == expected
    roles = ["env-workers", "learner"] if mode == "distributed" else ["learner"]
    assert plan.outputs["jobs"] == [job.inputs["metadata"]["name"] for role, job in sorted(jobs(plan).items())]
    assert [re.sub(r"-[0-9a-f]{8}$", "", job) for job in plan.outputs["jobs"]] == roles  # <role>-<digest>
    assert plan.outputs["namespace"] == f"tfcli-{name}"


@pytest.mark.parametrize("shared", [False, True], ids=["dedicated", "shared"])
def test_every_child_is_parented_and_named_after_its_component(shared: bool) -> None:
    plan = plan_for(stack_config(in_mode("space-invaders-dqn", "distributed"), shared=shared))
    for resource in plan.resources:
        if resource.type.startswith("tfcli:infra:") or resource.type == "pulumi:pulumi:StackReference":
            assert resource.parent is None, resource.name
            continue
        assert resource.parent_type in COMPONENTS, f"{resource.name} has no component parent"
        assert resource.name.startswith(f"{resource.parent}-"), resource.name


def test_node_pools_hang_off_the_cluster_and_the_workloads_off_the_pools() -> None:
    spec = experiment("space-invaders-dqn")
    plan = plan_for(stack_config(spec))
    name = spec.name
    cluster = plan.named(f"{name}-cluster")
    pools = plan.of_type("gcp:container/nodePool:NodePool")
    roles = {r.name for r in plan.of_type("gcp:projects/iAMMember:IAMMember")}
    for pool in pools:
        assert pool.inputs["cluster"] == cluster.inputs["name"]
        assert cluster.name in pool.dependencies
        assert roles <= set(pool.dependencies), "nodes start only once their service account has its roles"
        assert pool.options["ignoreChanges"] == ["initialNodeCount"] and pool.options["deleteBeforeReplace"]

    provider = plan.named(f"{name}-k8s")
    kubeconfig = provider.inputs["kubeconfig"]
    assert f"server: https://{FAKE_ENDPOINT}" in kubeconfig and FAKE_CA in kubeconfig
    assert "gke-gcloud-auth-plugin" in kubeconfig
    assert cluster.name in provider.dependencies  # built from the cluster's outputs
    assert {pool.name for pool in pools} <= set(provider.dependencies)

    for resource in k8s_objects(plan):
        if resource.type != "pulumi:providers:kubernetes":
            assert resource.provider == provider.name, resource.name
    for job in jobs(plan).values():
        deps = set(job.dependencies)
        assert {pool.name for pool in pools} <= deps
        assert {f"{name}-namespace", f"{name}-writer-access", f"{name}-workload-identity"} <= deps
        assert f"{name}-configmap-experiment-spec" in deps and f"{name}-serviceaccount-trainer" in deps


def test_a_shared_cluster_experiment_reaches_the_cluster_through_the_stack_reference() -> None:
    spec = experiment("space-invaders-dqn")
    outputs = {
        "clusterName": "the-shared-one",
        "endpoint": "198.51.100.7",
        "clusterCaCertificate": "c2hhcmVkLWNh",
        "project": PROJECT,
        "location": ZONE,
    }
    plan = plan_stack(stack_config(spec, shared=True), stack="t", shared_outputs={SHARED_STACK: outputs})
    kubeconfig = plan.named(f"{spec.name}-k8s").inputs["kubeconfig"]
    assert "server: https://198.51.100.7" in kubeconfig and "c2hhcmVkLWNh" in kubeconfig
    assert plan.outputs["clusterName"] == "the-shared-one"
    assert plan.cost.usd_per_hour == 0  # the shared stack pays for nodes and the fee
    assert any(SHARED_STACK in note for note in plan.cost.notes)


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


def test_the_committed_shared_cluster_stack_declares_a_cluster_and_exports_how_to_reach_it() -> None:
    plan = plan_stack_file(STACKS_DIR / f"Pulumi.{SHARED_STACK}.yaml")
    assert {r.type for r in plan.resources if not r.custom} == {"tfcli:infra:GkeCluster", "tfcli:infra:NodePools"}
    assert not plan.of_type("gcp:storage/bucket:Bucket") and not plan.of_type("kubernetes:batch/v1:Job")
    assert plan.outputs["clusterName"] == SHARED_STACK
    assert plan.outputs["endpoint"] == FAKE_ENDPOINT and plan.outputs["clusterCaCertificate"] == FAKE_CA
    assert {"kubeconfig", "project", "location", "nodePools"} <= plan.outputs.keys()
    cpu = plan.named(f"{SHARED_STACK}-cpu-pool").inputs
    assert cpu["autoscaling"]["totalMinNodeCount"] == 1 and cpu["autoscaling"]["totalMaxNodeCount"] == 8


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"tfcli:cluster": {"name": "c", "machine_type": "e2-standard-4"}}, "exactly one of"),
        ({"tfcli:experiment": None}, "exactly one of"),
        ({"gcp:project": None}, "gcp:project is not set"),
        ({"tfcli:suspend": "maybe"}, "tfcli:suspend"),
        ({"tfcli:resultsRetentionDays": -1}, "tfcli:resultsRetentionDays"),
        ({"tfcli:sharedClusterStack": ""}, None),
    ],
)
def test_bad_stack_config_is_invalid_input(change: dict, message: str | None) -> None:
    config = {**stack_config(experiment("cartpole-ppo")), **change}
    config = {key: value for key, value in config.items() if value is not None}
    if message is None:  # an empty value is no value: the experiment's own cluster
        assert plan_stack(config).of_type("gcp:container/cluster:Cluster")
        return
    with pytest.raises(InvalidInput, match=message):
        plan_stack(config, stack="bad")


def test_spec_problems_name_the_stack_file_and_key() -> None:
    config = stack_config(experiment("cartpole-ppo"))
    config["tfcli:experiment"] = {**config["tfcli:experiment"], "episodez": 3}
    with pytest.raises(InvalidInput) as caught:
        plan_stack(config, stack="bad")
    assert caught.value.problems[0].startswith("Pulumi.bad.yaml: tfcli:experiment: episodez")

    config = stack_config(experiment("cartpole-ppo"))
    config["tfcli:experiment"] = {k: v for k, v in config["tfcli:experiment"].items() if k != "cluster"}
    with pytest.raises(InvalidInput, match="names no cluster"):
        plan_stack(config, stack="bad")


def test_components_never_read_stack_config_and_follow_the_component_habits() -> None:
    package = Path(infra.__file__).parent
    components = {"cluster.py": "GkeCluster", "node_pools.py": "NodePools", "results_bucket.py": "ResultsBucket"}
    components["workloads.py"] = "Workloads"
    for path in package.glob("*.py"):
        if path.name != "stack_config.py":
            assert "Config(" not in path.read_text(), f"{path.name} reads stack config"
    for file, cls in components.items():
        tree = ast.parse((package / file).read_text())
        (node,) = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == cls]
        init = next(n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
        first, last = ast.unparse(init.body[0]), ast.unparse(init.body[-1])
        assert first.startswith(f"super().__init__('tfcli:infra:{cls}', name, {{}}, opts)"), file
        assert last.startswith("self.register_outputs("), file


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


def test_the_entry_point_pulumi_runs_declares_the_same_and_reports_mistakes_without_a_traceback() -> None:
    import runpy

    import pulumi

    from infra.plan import evaluate

    def entry() -> None:
        runpy.run_module("infra", run_name="__main__", alter_sys=True)  # what Pulumi and tfcli init's program do

    config = stack_config(experiment("space-invaders-dqn"))
    resources, outputs = evaluate(config, stack="entry", entry=entry)
    plan = plan_stack(config, stack="entry")
    assert sorted(r.name for r in resources) == sorted(r.name for r in plan.resources)
    assert outputs.keys() == plan.outputs.keys()
    with pytest.raises(pulumi.RunError, match=r"^Pulumi\.entry\.yaml: gcp:project is not set"):
        evaluate({k: v for k, v in config.items() if k != "gcp:project"}, stack="entry", entry=entry)


def test_a_plan_reads_as_a_table_and_as_json() -> None:
    import json

    plan = plan_stack_file(STACKS_DIR / "Pulumi.space-invaders-dqn.yaml")
    rows = {row["name"]: row for row in plan.summary()}
    assert rows["space-invaders-dqn-learner-pool"]["inputs"]["gpus"] == "1 x nvidia-tesla-t4"
    assert rows["space-invaders-dqn-job-learner"]["inputs"]["gpus"] == "1"
    assert plan.summary()[0]["type"].startswith("tfcli:infra:")  # components lead their children
    data = json.loads(json.dumps(plan.to_data()))
    assert data["cost"]["usd_per_hour"] == plan.cost.usd_per_hour and data["cost"]["as_of"]
    assert len(data["resources"]) == len(plan.resources)


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
