"""The manifest builder: valid Kubernetes (strict schemas), and the same objects rendered offline and deployed."""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest
import yaml
from infra_testkit import BUNDLED_EXPERIMENTS, PROJECT, RUN_MODES, ZONE, in_mode, k8s_objects, plan_for, stack_config

from infra.manifests import build_manifests, context_for, render, render_stack_file
from infra.plan import SECRET, plan_stack_file
from infra.stack_files import STACKS_DIR
from trainer.kernel.errors import InvalidInput

# The oldest minor GKE's release channels still offer and the newest schemas kubernetes-validate 1.37 ships.
K8S_VERSIONS = ("1.33.0", kubernetes_validate.utils.latest_version())
CASES = [pytest.param(name, mode, id=f"{name}-{mode}") for name in BUNDLED_EXPERIMENTS for mode in RUN_MODES]


def _objects(name: str, mode: str, *, token: Any = "t0ken", suspend: bool = False) -> list[dict[str, Any]]:
    spec = in_mode(name, mode)
    return build_manifests(spec, context_for(spec, project=PROJECT, location=ZONE, suspend=suspend), token=token)


@pytest.mark.parametrize("version", K8S_VERSIONS)
@pytest.mark.parametrize(("name", "mode"), CASES)
def test_every_object_passes_strict_schema_validation(name: str, mode: str, version: str) -> None:
    for obj in _objects(name, mode):
        # strict: unknown fields are errors, so a misspelt key cannot slip through as "ignored".
        kubernetes_validate.validate(obj, version, strict=True)


def test_the_validator_catches_a_misspelt_field() -> None:
    job = _objects("cartpole-ppo", "single")[-1]
    job["spec"]["template"]["spec"]["restartPolicyy"] = "Never"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(job, K8S_VERSIONS[-1], strict=True)


@pytest.mark.parametrize("shared", [False, True], ids=["dedicated", "shared"])
@pytest.mark.parametrize(("name", "mode"), CASES)
def test_the_program_deploys_exactly_what_render_renders(name: str, mode: str, shared: bool) -> None:
    spec = in_mode(name, mode)
    plan = plan_for(stack_config(spec, shared=shared))
    deployed = [r.inputs for r in k8s_objects(plan) if r.type != "pulumi:providers:kubernetes"]
    rendered = _objects(name, mode, token=SECRET)
    for obj in rendered:
        if obj["kind"] == "Secret":
            obj["stringData"] = SECRET  # the program's token is a secret output
    key = lambda obj: (obj["kind"], obj["metadata"]["name"])  # noqa: E731
    assert sorted(deployed, key=key) == sorted(rendered, key=key)


def test_render_writes_kubectl_ready_yaml_with_a_fresh_token() -> None:
    spec = in_mode("space-invaders-dqn", "distributed")
    ctx = context_for(spec, project=PROJECT, location=ZONE)
    documents = list(yaml.safe_load_all(render(spec, ctx)))
    assert [doc["kind"] for doc in documents] == [
        "Namespace",
        "ServiceAccount",
        "ConfigMap",
        "Secret",
        "Service",
        "Job",
        "Job",
    ]
    token = documents[3]["stringData"]["token"]
    assert len(token) >= 40
    again = list(yaml.safe_load_all(render(spec, ctx)))
    assert again[3]["stringData"]["token"] != token  # never a shared, guessable default
    given = list(yaml.safe_load_all(render(spec, ctx, token="mine")))
    assert given == build_manifests(spec, ctx, token="mine")


def test_the_config_map_holds_the_resolved_spec_the_trainer_reads() -> None:
    spec = in_mode("space-invaders-dqn", "distributed")
    config_map = next(obj for obj in _objects("space-invaders-dqn", "distributed") if obj["kind"] == "ConfigMap")
    from trainer.kernel.spec import resolve_experiment, to_data
    from trainer.kernel.spec.library import BUNDLED_CONFIGS, ConfigLibrary

    data = yaml.safe_load(config_map["data"]["experiment.yaml"])
    again = resolve_experiment(data, shown="cm", base=BUNDLED_CONFIGS, library=ConfigLibrary((BUNDLED_CONFIGS,)))
    assert to_data(again) == to_data(spec)
    learner = _objects("space-invaders-dqn", "distributed")[-1]
    pod = learner["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["args"][1:3] == ["--spec", "/etc/tfcli/experiment.yaml"]
    assert {"name": "spec", "mountPath": "/etc/tfcli", "readOnly": True} in container["volumeMounts"]


def test_the_learner_is_sized_for_its_node_and_its_environments() -> None:
    def requests(name: str, mode: str) -> dict[str, str]:
        return _objects(name, mode)[-1]["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]

    # cartpole-ppo's single-node cluster: e2-standard-8 (8 vCPUs, 32 GB)
    assert requests("cartpole-ppo", "single")["cpu"] == "2000m"
    assert requests("cartpole-ppo", "multi-threaded")["cpu"] == "4000m"  # 3 environments + the agent
    assert requests("cartpole-ppo", "multi-threaded")["memory"] == "3584Mi"  # 2 GiB + 0.5 GiB per environment
    limits = _objects("cartpole-ppo", "single")[-1]["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    # What the node leaves: allocatable (7910m, 29022Mi: GKE's reservations and the 100 MiB eviction threshold) less
    # margins for DaemonSets (400m, 640Mi) and kube-system Deployments (500m, 640Mi) and the FUSE sidecar (250m, 256Mi).
    assert limits == {"cpu": "6760m", "memory": "27486Mi"}
    # cartpole-ppo's own 16 environments want 17 cores: the request stops at what the node leaves.
    full = in_mode("cartpole-ppo", "single").model_copy(update={"run_mode": "multi-threaded", "num_workers": 16})
    ctx = context_for(full, project=PROJECT, location=ZONE)
    (container,) = build_manifests(full, ctx, token="t")[-1]["spec"]["template"]["spec"]["containers"]
    assert container["resources"]["requests"]["cpu"] == "6760m"


def test_editing_the_spec_changes_the_pod_templates_and_pausing_does_not() -> None:
    def templates(spec: Any, suspend: bool = False) -> list[Any]:
        ctx = context_for(spec, project=PROJECT, location=ZONE, suspend=suspend)
        return [o["spec"]["template"] for o in build_manifests(spec, ctx, token="t") if o["kind"] == "Job"]

    spec = in_mode("space-invaders-dqn", "distributed")
    longer = spec.model_copy(update={"total_timesteps": 2_000_000})
    assert templates(spec) == templates(spec, suspend=True)  # suspend is Job spec, not template: no restart
    for before, after in zip(templates(spec), templates(longer), strict=True):
        assert (
            before["metadata"]["annotations"]["tfcli/spec-sha256"]
            != after["metadata"]["annotations"]["tfcli/spec-sha256"]
        )


def test_a_stack_file_renders_without_pulumi_to_what_it_deploys() -> None:
    path = STACKS_DIR / "Pulumi.space-invaders-dqn.yaml"
    rendered = list(yaml.safe_load_all(render_stack_file(path, token=SECRET)))
    for obj in rendered:
        if obj["kind"] == "Secret":
            obj["stringData"] = SECRET
    deployed = [r.inputs for r in k8s_objects(plan_stack_file(path)) if r.type != "pulumi:providers:kubernetes"]
    key = lambda obj: (obj["kind"], obj["metadata"]["name"])  # noqa: E731
    assert sorted(rendered, key=key) == sorted(deployed, key=key)
    with pytest.raises(InvalidInput, match="nothing to render"):
        render_stack_file(STACKS_DIR / "Pulumi.shared-t4.yaml")


def test_rendering_imports_no_pulumi() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from infra.manifests import render_stack_file; from infra.stack_files import STACKS_DIR;"
        "render_stack_file(STACKS_DIR / 'Pulumi.cartpole-ppo.yaml');"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pulumi', 'pulumi_gcp', 'pulumi_kubernetes')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
