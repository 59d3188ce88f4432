"""The stack program under Pulumi's mocks: what each kind of stack declares and how the pieces are linked, how
bad stack config is reported, and the entry point Pulumi runs. The node pools and Jobs it declares, pod by pod, are
tested in ``test_program_workloads``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from infra_testkit import (
    PROJECT,
    RUN_MODES,
    SHARED_STACK,
    ZONE,
    experiment,
    in_mode,
    jobs,
    k8s_objects,
    plan_for,
    stack_config,
)

import infra
from infra.plan import plan_stack, plan_stack_file
from infra.plan_mocks import FAKE_CA, FAKE_ENDPOINT
from infra.stack_files import STACKS_DIR
from trainer.kernel.errors import InvalidInput

COMPONENTS = {
    "tfcli:infra:GkeCluster",
    "tfcli:infra:NodePools",
    "tfcli:infra:ResultsBucket",
    "tfcli:infra:Workloads",
}


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
