"""Several sweep trials per GPU (GKE GPU sharing): the cluster spec's ``gpu_sharing`` becomes the pool's
``gpu_sharing_config`` (pulumi-gcp's node pool input, checked against the installed SDK by the mocks), the trial pods
select the share (GKE's ``cloud.google.com/gke-gpu-sharing-strategy`` and ``-max-shared-clients-per-gpu`` node labels)
and ask for ``nvidia.com/gpu: 1``, the pool holds ``clients_per_gpu`` of them per GPU, and each trial is priced at its
share: the bundled sweep on a T4 pool at 4 clients per GPU costs at most a third per trial-hour of a whole T4."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from infra_testkit import LIBRARY, plan_for
from test_cross_objects import check_fit, check_gpu_sharing, check_scheduling, nodes
from test_sweep_stack import K8S_VERSIONS, sweep_config

from infra.plan import Plan
from infra.run_price import trial_price
from infra.sweep_config import sweep_settings_from_config
from infra.sweep_manifests import render_sweep
from infra.sweep_program import sweep_context
from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec import load_experiment

T4_POOL = {
    "name": "t4-pool",
    "machine_type": "n1-standard-8",
    "gpus_per_node": 1,
    "gpu_type": "nvidia-tesla-t4",
    "num_nodes": 1,
}
TIME_SHARING_4 = {"strategy": "time-sharing", "clients_per_gpu": 4}


def on_cluster(cluster: dict[str, Any]) -> dict[str, Any]:
    """The bundled sweep's stack config with its trials on ``cluster``."""
    config = copy.deepcopy(sweep_config())
    config["tfcli:sweep"]["base"]["cluster"] = cluster
    return config


def sharing(strategy: str = "time-sharing", clients: int = 4) -> dict[str, Any]:
    return on_cluster({**T4_POOL, "gpu_sharing": {"strategy": strategy, "clients_per_gpu": clients}})


def planned(config: dict[str, Any]) -> Plan:
    return plan_for(config, stack="cartpole-lr")


def sweep_objects(plan: Plan) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {
        (r.inputs["kind"], r.inputs["metadata"].get("namespace", ""), r.inputs["metadata"]["name"]): r.inputs
        for r in plan.resources
        if r.type.startswith("kubernetes:") and "kind" in r.inputs
    }


def trial_pod(plan: Plan) -> dict[str, Any]:
    (job,) = plan.of_type("kubernetes:batch/v1:Job")
    return dict(job.inputs["spec"]["template"]["spec"])


@pytest.mark.parametrize(("strategy", "api"), [("time-sharing", "TIME_SHARING"), ("mps", "MPS")])
def test_the_pool_shares_its_gpus_and_the_trials_select_a_share(strategy: str, api: str) -> None:
    plan = planned(sharing(strategy))
    (pool,) = [p for p in plan.of_type("gcp:container/nodePool:NodePool") if p.inputs["name"] == "learner"]
    (accelerator,) = pool.inputs["nodeConfig"]["guestAccelerators"]
    assert accelerator["gpuSharingConfig"] == {"gpuSharingStrategy": api, "maxSharedClientsPerGpu": 4}
    pod = trial_pod(plan)
    assert pod["nodeSelector"]["cloud.google.com/gke-gpu-sharing-strategy"] == strategy
    assert pod["nodeSelector"]["cloud.google.com/gke-max-shared-clients-per-gpu"] == "4"
    (container,) = pod["containers"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert plan.outputs["parallelism"] == 4  # one node, one T4, four shares
    objects, node_list = sweep_objects(plan), nodes(plan)
    check_scheduling(objects, node_list)
    check_gpu_sharing(objects, node_list)
    check_fit(objects, node_list)  # four trial pods (and their FUSE sidecars) on the one n1-standard-8


def test_without_sharing_the_trials_select_no_share_and_one_fits_a_node() -> None:
    plan = planned(on_cluster(T4_POOL))
    assert "cloud.google.com/gke-gpu-sharing-strategy" not in trial_pod(plan)["nodeSelector"]
    assert plan.outputs["parallelism"] == 1
    check_gpu_sharing(sweep_objects(plan), nodes(plan))


def test_the_sharing_checks_catch_what_they_check() -> None:
    plan = planned(sharing())
    node_list = nodes(plan)

    def broken(change: Any) -> dict[tuple[str, str, str], dict[str, Any]]:
        objects = copy.deepcopy(sweep_objects(plan))
        (job,) = [o for (kind, _, _), o in objects.items() if kind == "Job"]
        change(job["spec"]["template"]["spec"])
        return objects

    def two_shares(pod: dict[str, Any]) -> None:
        pod["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "2"

    with pytest.raises(AssertionError, match=r"a GPU share is nvidia\.com/gpu: 1"):
        check_gpu_sharing(broken(two_shares), node_list)

    def other_share(pod: dict[str, Any]) -> None:
        pod["nodeSelector"]["cloud.google.com/gke-max-shared-clients-per-gpu"] = "8"

    with pytest.raises(AssertionError, match="selects a GPU share no pool offers"):
        check_gpu_sharing(broken(other_share), node_list)

    def no_share(pod: dict[str, Any]) -> None:
        del pod["nodeSelector"]["cloud.google.com/gke-gpu-sharing-strategy"]
        del pod["nodeSelector"]["cloud.google.com/gke-max-shared-clients-per-gpu"]

    with pytest.raises(AssertionError, match="on a shared GPU without a share"):
        check_gpu_sharing(broken(no_share), node_list)
    unshared = nodes(planned(on_cluster(T4_POOL)))
    with pytest.raises(AssertionError, match="selects a GPU share no pool offers"):
        check_gpu_sharing(sweep_objects(plan), unshared)


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_the_shared_sweep_manifests_pass_strict_schema_validation(version: str) -> None:
    sweep = sweep_settings_from_config(sharing("mps"), stack="cartpole-lr")
    text = render_sweep(sweep.name, sweep.trials, sweep_context(sweep), parallelism=sweep.parallelism)
    for obj in yaml.safe_load_all(text):
        kubernetes_validate.validate(obj, version, strict=True)


def test_a_trial_at_4_clients_per_t4_costs_at_most_a_third_of_a_whole_t4() -> None:
    def per_trial(config: dict[str, Any]) -> float:
        sweep = sweep_settings_from_config(config, stack="cartpole-lr")
        price = trial_price(sweep.trials, shared_cluster=False)
        assert price is not None
        return price

    whole, shared = per_trial(on_cluster(T4_POOL)), per_trial(sharing())
    assert shared <= whole / 3
    assert shared == pytest.approx(whole / 4, rel=0.01)  # a quarter of the node, the CPU node and the fee


def test_plan_s_shows_the_price_per_trial_hour(lab: Path) -> None:
    from cli_kit import invoke

    from trainer.kernel.spec.library import BUNDLED_CONFIGS

    sweep = yaml.safe_load((BUNDLED_CONFIGS / "sweeps" / "cartpole-lr.yaml").read_text())
    sweep["base"]["cluster"] = {**T4_POOL, "gpu_sharing": TIME_SHARING_4}
    (lab / "lr-shared.yaml").write_text(yaml.safe_dump(sweep))
    code, _, stderr = invoke("experiment", "sweep", "-f", "lr-shared.yaml", "--no-build")
    assert code == 0, stderr
    code, stdout, stderr = invoke("experiment", "plan", "-s", "cartpole-lr", "--json")
    assert code == 0, stderr
    data = yaml.safe_load(stdout)
    assert data["parallelism"] == 4
    code, text, _ = invoke("experiment", "plan", "-s", "cartpole-lr")
    assert f"per trial: ${data['trial_usd_per_hour']:,.2f}/h" in text
    # each trial start's node time, at its share of the price (trainer/kernel/budget.py's 20 min)
    allowance = data["start_allowance"]
    assert allowance["usd_per_hour"] == data["trial_usd_per_hour"] and allowance["seconds"] == 1200
    assert "20 min per start of a trial" in text and f"${allowance['usd']:,.2f} a start" in " ".join(text.split())


@pytest.mark.parametrize(
    ("cluster", "message"),
    [
        ({"gpus_per_node": 0, "gpu_type": None}, "gpu_sharing: shares the pool's GPUs, but it has none"),
        ({"gpu_sharing": {"strategy": "mig", "clients_per_gpu": 4}}, "gpu_sharing.strategy"),
        ({"gpu_sharing": {"strategy": "mps", "clients_per_gpu": 49}}, "gpu_sharing.clients_per_gpu"),
    ],
)
def test_bad_sharing_is_refused_naming_the_field(cluster: dict[str, Any], message: str) -> None:
    spec = {**T4_POOL, "gpu_sharing": TIME_SHARING_4, **cluster}
    with pytest.raises(InvalidInput, match=message):
        load_experiment("cartpole-ppo", library=LIBRARY, overrides={"cluster": spec})
