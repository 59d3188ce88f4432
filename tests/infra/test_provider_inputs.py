"""Every input the program gives a resource is one its installed provider has (pulumi-gcp 10.2.0, pulumi-kubernetes
4.34.2): the plan's mocks check each key, nested ones included, against the SDKs' own input types, so a misspelt
argument fails here as ``pulumi up`` would reject it (GCP) or silently drop it (a Kubernetes object given as a dict).
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import pulumi_gcp as gcp
import pytest
from infra_testkit import (
    BUNDLED_EXPERIMENTS,
    PROJECT,
    RUN_MODES,
    SHARED_STACK,
    ZONE,
    in_mode,
    plan_for,
    stack_config,
)

from infra import program
from infra.plan import SECRET, plan_stack, plan_stack_file
from infra.provider_inputs import UnknownInputs, input_problems, resource_inputs
from infra.stack_files import STACKS_DIR, cluster_stack_config

CASES = [
    pytest.param(name, mode, shared, id=f"{name}-{mode}-{'shared' if shared else 'dedicated'}")
    for name in BUNDLED_EXPERIMENTS
    for mode in RUN_MODES
    for shared in (False, True)
]


def test_the_schemas_come_from_the_installed_providers() -> None:
    assert (version("pulumi-gcp"), version("pulumi-kubernetes")) == ("10.2.0", "4.34.2")
    pool = resource_inputs("gcp:container/nodePool:NodePool")
    assert {"nodeConfig", "autoscaling", "initialNodeCount", "management"} <= pool.keys()
    assert "node_config" not in pool  # camelCase, as the mocks (and the engine) see them
    assert {"apiVersion", "kind", "metadata", "spec"} == resource_inputs("kubernetes:batch/v1:Job").keys()


@pytest.mark.parametrize(("name", "mode", "shared"), CASES)
def test_every_input_of_every_declared_resource_is_a_provider_input(name: str, mode: str, shared: bool) -> None:
    plan = plan_for(stack_config(in_mode(name, mode), shared=shared))  # raises UnknownInputs on any unknown key
    custom = [r for r in plan.resources if r.custom]
    assert {r.type for r in custom} >= {"gcp:storage/bucket:Bucket", "kubernetes:batch/v1:Job"}
    for resource in custom:  # ... and the check ran on each of them: a planted key is found in every one
        inputs = {key: value for key, value in resource.inputs.items() if value != SECRET}  # a plan hides secrets
        assert input_problems(resource.type, resource.name, {**inputs, "zzUnknown": 1}) == [
            f"{resource.name}: zzUnknown: no such argument of {resource.type}"
        ]


def test_the_shared_cluster_stacks_inputs_are_provider_inputs() -> None:
    plan_stack_file(STACKS_DIR / f"Pulumi.{SHARED_STACK}.yaml")
    spec = in_mode("space-invaders-dqn", "distributed")
    assert spec.cluster is not None
    plan_stack(cluster_stack_config(spec.cluster, project=PROJECT, zone=ZONE), stack="shared-si")


def test_a_misspelt_nested_key_fails_the_plan_naming_the_resource_and_the_path(monkeypatch: Any) -> None:
    real_pool = gcp.container.NodePool

    def pool_with_a_typo(resource_name: str, **kwargs: Any) -> Any:
        for accelerator in kwargs["node_config"].get("guest_accelerators", []):
            accelerator["gpuDriverInstalationConfig"] = accelerator.pop("gpu_driver_installation_config")
        return real_pool(resource_name, **kwargs)

    real_build = program.build_manifests

    def manifests_with_typos(*args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        objects = real_build(*args, **kwargs)
        for obj in objects:
            if obj["kind"] == "Job" and obj["metadata"]["name"].startswith("learner-"):
                (container,) = obj["spec"]["template"]["spec"]["containers"]
                container["volumeMount"] = container.pop("volumeMounts")
            if obj["kind"] == "Namespace":  # given to pulumi-kubernetes as a dict, like ConfigMap and Secret
                obj["metadata"]["lables"] = obj["metadata"].pop("labels")
        return objects

    monkeypatch.setattr(gcp.container, "NodePool", pool_with_a_typo)
    monkeypatch.setattr(program, "build_manifests", manifests_with_typos)
    with pytest.raises(UnknownInputs) as caught:
        plan_stack(stack_config(in_mode("space-invaders-dqn", "distributed")), stack="typos")
    assert caught.value.problems == [
        "space-invaders-dqn-job-learner: spec.template.spec.containers[0].volumeMount: no such input"
        " (did you mean volumeMounts?)",
        "space-invaders-dqn-learner-pool: nodeConfig.guestAccelerators[0].gpuDriverInstalationConfig: no such input"
        " (did you mean gpuDriverInstallationConfig?)",
        "space-invaders-dqn-namespace: metadata.lables: no such input (did you mean labels?)",
    ]
    assert "space-invaders-dqn-learner-pool: nodeConfig.guestAccelerators" in str(caught.value)


@pytest.mark.parametrize(
    ("type_", "inputs", "problem"),
    [
        (
            "gcp:container/cluster:Cluster",
            {"workloadIdentityConfig": {"workload_pol": "p.svc.id.goog"}},
            "workloadIdentityConfig.workload_pol: no such input",
        ),
        (
            "gcp:container/nodePool:NodePool",
            {"nodeConfig": {"guestAccelerators": {"count": 1}}},
            "nodeConfig.guestAccelerators: expected a list",
        ),
        ("gcp:storage/bucket:Bucket", {"forceDestroyy": True}, "forceDestroyy: no such argument"),
        (
            "kubernetes:batch/v1:Job",
            {"spec": {"template": {"spec": {"containers": [{"name": "c", "volumeMounts": [{"mountpath": "/x"}]}]}}}},
            "spec.template.spec.containers[0].volumeMounts[0].mountpath: no such input (did you mean mountPath?)",
        ),
        ("pulumi:providers:kubernetes", {"kubeConfig": "..."}, "kubeConfig: no such argument"),
    ],
)
def test_the_check_knows_each_kind_of_mistake(type_: str, inputs: dict[str, Any], problem: str) -> None:
    (found,) = input_problems(type_, "r", inputs)
    assert found.startswith(f"r: {problem}")


def test_free_form_maps_take_any_key() -> None:
    job = {
        "metadata": {"labels": {"any/key": "v"}, "annotations": {"gke-gcsfuse/volumes": "true"}},
        "spec": {"template": {"spec": {"nodeSelector": {"tfcli-pool": "cpu"}, "containers": []}}},
    }
    assert input_problems("kubernetes:batch/v1:Job", "j", job) == []
    assert input_problems("gcp:container/nodePool:NodePool", "p", {"nodeConfig": {"labels": {"a-b/c": "d"}}}) == []
