"""A sweep on GKE is one stack: the program under Pulumi's mocks declares one Indexed Job (one pod per trial,
``parallelism`` at a time) that selects its trial by completion index and writes ``/results/<sweep>/<trial>/``; its
manifests pass strict Kubernetes schemas, and its pods, run as local processes, train the trial of their index."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from infra_testkit import LIBRARY, PROJECT, REGION, SHARED_STACK, ZONE, plan_for

from infra.plan import Plan
from infra.sweep_config import sweep_settings_from_config
from infra.sweep_manifests import INDEX_ANNOTATION, render_sweep
from infra.sweep_program import sweep_context
from tfcli.sweeps.create import SweepOptions, plan_sweep
from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec.early_stop import METADATA_TTL_SECONDS

K8S_VERSIONS = ("1.33.0", kubernetes_validate.utils.latest_version())
JOB = "kubernetes:batch/v1:Job"


def sweep_config(reference: str = "cartpole-lr", options: SweepOptions | None = None, **extra: Any) -> dict[str, Any]:
    planned = plan_sweep(reference, options or SweepOptions(), LIBRARY)
    config = {"gcp:project": PROJECT, "gcp:region": REGION, "gcp:zone": ZONE, "tfcli:suspend": False}
    return {**config, "tfcli:sweep": planned.sweep.model_dump(mode="json"), **extra}


def plan(**extra: Any) -> Plan:
    return plan_for(sweep_config(**extra), stack="cartpole-lr")


def the_job(result: Plan) -> dict[str, Any]:
    (job,) = result.of_type(JOB)
    return dict(job.inputs)


def test_one_indexed_job_runs_every_trial_parallelism_at_a_time() -> None:
    result = plan(**{"tfcli:parallelism": 4})
    job = the_job(result)
    spec = job["spec"]
    assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == ("Indexed", 9, 4)
    assert job["metadata"]["namespace"] == "tfcli-cartpole-lr" and job["metadata"]["name"].startswith("trials-")
    assert result.outputs["trials"] == [f"cartpole-lr-{k}" for k in range(9)]
    assert result.outputs["parallelism"] == 4
    assert str(result.outputs["resultsUrl"]).endswith("/cartpole-lr/")
    assert len(result.of_type("gcp:container/cluster:Cluster")) == 1  # the sweep's own cluster
    assert len(result.of_type("gcp:storage/bucket:Bucket")) == 1
    # Without tfcli:parallelism: what the learner pool holds at its largest (single-node: one e2-standard-8, 7,010m
    # left to pods). A 16-environment learner asks for all of it; a single-mode one for 2 cores (and 2.5 GiB): 3 fit.
    assert the_job(plan())["spec"]["parallelism"] == 1
    single = sweep_config(options=SweepOptions(sets=("run_mode=single",)))
    assert the_job(plan_for(single, stack="cartpole-lr"))["spec"]["parallelism"] == 3


def test_each_pod_selects_its_trial_by_index_and_writes_its_own_results_folder() -> None:
    result = plan()
    pod = the_job(result)["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    index = next(v for v in container["env"] if v["name"] == "TRIAL_INDEX")
    assert index["valueFrom"]["fieldRef"]["fieldPath"] == f"metadata.annotations['{INDEX_ANNOTATION}']"
    assert container["args"] == [
        "run", "--spec", "/etc/tfcli/slot-$(TRIAL_INDEX).yaml", "--output-parent", "/results/cartpole-lr",
    ]  # fmt: skip
    (config_map,) = [r for r in result.of_type("kubernetes:core/v1:ConfigMap")]
    data = config_map.inputs["data"]
    assert sorted(data) == sorted(f"slot-{k}.yaml" for k in range(9))  # a first start: slot k runs trial k
    trial_4 = yaml.safe_load(data["slot-4.yaml"])
    assert (trial_4["name"], trial_4["seed"], trial_4["agent"]["learning_rate"]) == ("cartpole-lr-4", 2, 0.001)
    spec_volume = next(v for v in pod["volumes"] if v["name"] == "spec")
    assert spec_volume["configMap"]["name"] == config_map.inputs["metadata"]["name"]
    assert any(v.get("csi", {}).get("driver") == "gcsfuse.csi.storage.gke.io" for v in pod["volumes"])


def test_the_results_mount_sets_the_metadata_ttl_the_trials_recheck_by() -> None:
    """gcsfuse caches a file's metadata for its TTL (60 s unless set): the trials of an early-stopped sweep read each
    other's rung scores through this mount and recheck no sooner than the TTL, so the mount must say which it is."""
    pod = the_job(plan())["spec"]["template"]["spec"]
    (results,) = [v for v in pod["volumes"] if v["name"] == "results"]
    options = results["csi"]["volumeAttributes"]["mountOptions"].split(",")
    assert f"metadata-cache:ttl-secs:{METADATA_TTL_SECONDS}" in options
    assert {"implicit-dirs", "uid=1000", "gid=1000"} <= set(options)


def test_on_a_shared_cluster_the_sweep_declares_no_cluster() -> None:
    result = plan(**{"tfcli:sharedClusterStack": SHARED_STACK})
    assert not result.of_type("gcp:container/cluster:Cluster") and len(result.of_type(JOB)) == 1


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_the_sweep_manifests_pass_strict_schema_validation(version: str) -> None:
    sweep = sweep_settings_from_config(sweep_config(), stack="cartpole-lr")
    text = render_sweep(sweep.name, sweep.trials, sweep_context(sweep), parallelism=sweep.parallelism)
    for obj in yaml.safe_load_all(text):
        kubernetes_validate.validate(obj, version, strict=True)


def test_bad_sweep_stacks_are_refused_naming_the_file_and_key() -> None:
    with pytest.raises(InvalidInput, match=r"Pulumi.other.yaml: tfcli:sweep: name: 'cartpole-lr' differs"):
        sweep_settings_from_config(sweep_config(), stack="other")
    distributed = sweep_config(options=SweepOptions(sets=("run_mode=distributed",)))
    with pytest.raises(InvalidInput, match="a sweep on GKE runs single or multi-threaded trials"):
        sweep_settings_from_config(distributed, stack="cartpole-lr")
    with pytest.raises(InvalidInput, match="tfcli:parallelism: at least 1"):
        sweep_settings_from_config(sweep_config(**{"tfcli:parallelism": 0}), stack="cartpole-lr")
    config = sweep_config()
    config["tfcli:sweep"]["parallel"] = 0
    with pytest.raises(InvalidInput, match=r"Pulumi.cartpole-lr.yaml: tfcli:sweep: parallel: at least 1, got 0"):
        sweep_settings_from_config(config, stack="cartpole-lr")


def test_pulumi_up_alone_takes_the_sweeps_parallel_under_the_stack_key() -> None:
    # trainer/kernel/spec/parallel.py's rule, as `start -s` follows it: tfcli:parallelism (the flag's stand-in) over the
    # sweep's own parallel, over the default (1 here: what the learner pool holds, above)
    own = sweep_config(options=SweepOptions(parallel=2))
    assert the_job(plan_for(own, stack="cartpole-lr"))["spec"]["parallelism"] == 2
    assert the_job(plan_for({**own, "tfcli:parallelism": 3}, stack="cartpole-lr"))["spec"]["parallelism"] == 3


TINY = {
    "name": "pods",
    "base": {
        "name": "pods",
        "environment": {"level": "CartPole-v1"},
        "agent": {"agent": "ppo", "batch_size": 2, "network": [{"type": "dense", "size": 8, "activation": "tanh"}]},
        "cluster": "single-node",
        "total_timesteps": 100,
    },
    "axes": {"total_timesteps": [200, 300]},
}


def expand(argument: str, env: dict[str, str]) -> str:
    """Kubernetes' ``$(VAR)`` expansion in args, from the container's env."""
    return re.sub(r"\$\((\w+)\)", lambda match: env[match[1]], argument)


@pytest.mark.slow  # trainer processes (README "Development")
def test_the_pods_run_as_local_processes_train_the_trial_of_their_index(tmp_path: Path) -> None:
    config = {"gcp:project": PROJECT, "gcp:zone": ZONE, "tfcli:sweep": TINY}
    sweep = sweep_settings_from_config(config, stack="pods")
    objects = list(yaml.safe_load_all(render_sweep(sweep.name, sweep.trials, sweep_context(sweep), parallelism=2)))
    (job,) = [o for o in objects if o["kind"] == "Job"]
    (config_map,) = [o for o in objects if o["kind"] == "ConfigMap"]
    pod = job["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    processes = []
    for index in range(job["spec"]["completions"]):
        # What the cluster does for indexed pod ``index``: the annotation, the env from it, $(VAR) in args expanded,
        # the ConfigMap's keys as files in the spec volume and an empty bucket folder at /results.
        root = tmp_path / f"pod-{index}"
        folders = {"spec": root / "spec", "results": tmp_path / "bucket"}
        folders["spec"].mkdir(parents=True)
        for key, text in config_map["data"].items():
            (folders["spec"] / key).write_text(text)
        annotations = {INDEX_ANNOTATION: str(index)}
        env = {}
        for variable in container["env"]:
            if "value" in variable:
                env[variable["name"]] = variable["value"]
            else:
                path = variable["valueFrom"]["fieldRef"]["fieldPath"]
                env[variable["name"]] = annotations[re.fullmatch(r"metadata.annotations\['(.+)'\]", path)[1]]  # type: ignore[index]
        args = [expand(argument, env) for argument in container["args"]]
        for name, mount in mounts.items():
            args = [str(folders[name]) + a.removeprefix(mount) if a.startswith(mount + "/") else a for a in args]
        log = (root / "trainer.log").open("w")
        processes.append(
            subprocess.Popen([sys.executable, "-m", "trainer", *args], cwd=root, env=env, stdout=log, stderr=log)
        )
    codes = [process.wait(timeout=300) for process in processes]
    assert codes == [0, 0], [(tmp_path / f"pod-{i}" / "trainer.log").read_text()[-2000:] for i in range(2)]
    for index, budget in enumerate([200, 300]):
        result = yaml.safe_load((tmp_path / "bucket" / "pods" / f"pods-{index}" / "result.json").read_text())
        assert (result["status"], result["timesteps"]) == ("completed", budget)  # trial `index`'s own budget


def test_plan_s_shows_the_sweep_stack_offline_from_its_stack_file(lab: Path) -> None:
    from cli_kit import invoke

    code, _, stderr = invoke("experiment", "sweep", "-f", "cartpole-lr", "--no-build")
    assert code == 0, stderr
    stack_file = yaml.safe_load((lab / "stacks" / "Pulumi.cartpole-lr.yaml").read_text())
    assert stack_file["config"]["tfcli:sweep"]["axes"] == {"agent.learning_rate": [0.003, 0.001, 0.0003]}
    code, stdout, stderr = invoke("experiment", "plan", "-s", "cartpole-lr", "--json")
    assert code == 0, stderr
    data = yaml.safe_load(stdout)
    assert (data["trials"], data["parallelism"], data["placeholder_project"]) == (9, 1, True)
    assert [r["type"] for r in data["resources"]].count(JOB) == 1
    assert data["cost"]["usd_per_hour"] > 0


def test_render_s_prints_what_the_sweep_stack_deploys(lab: Path) -> None:
    from cli_kit import invoke

    from infra.plan import plan_stack
    from infra.stack_files import read_stack_file

    assert invoke("experiment", "sweep", "-f", "cartpole-lr", "--no-build")[0] == 0
    stack_path = lab / "stacks" / "Pulumi.cartpole-lr.yaml"
    before = stack_path.read_text()
    code, stdout, stderr = invoke("experiment", "render", "-s", "cartpole-lr", "--parallel", "4")
    assert code == 0, stderr
    assert "placeholder 'my-gcp-project'" in stderr and stack_path.read_text() == before  # render writes nothing
    rendered = [obj for obj in yaml.safe_load_all(stdout) if obj]
    for version in K8S_VERSIONS:
        for obj in rendered:
            kubernetes_validate.validate(obj, version, strict=True)
    (job,) = [obj for obj in rendered if obj["kind"] == "Job"]
    spec = job["spec"]
    assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == ("Indexed", 9, 4)
    # The same objects as the sweep program declares for this stack file with tfcli:parallelism 4 (start -s -p 4).
    config = {**read_stack_file(stack_path), "tfcli:parallelism": 4}
    deployed = [r.inputs for r in plan_stack(config, stack="cartpole-lr").resources if r.type.startswith("kubernetes:")]
    key = lambda obj: (obj["kind"], obj["metadata"]["name"])  # noqa: E731
    assert sorted(rendered, key=key) == sorted(deployed, key=key)

    # Without --parallel: the parallelism the stack chooses (what the learner pool holds), as `plan -s` shows it.
    code, stdout, stderr = invoke("experiment", "render", "-s", "cartpole-lr")
    assert code == 0, stderr
    (job,) = [obj for obj in yaml.safe_load_all(stdout) if obj and obj["kind"] == "Job"]
    planned = yaml.safe_load(invoke("experiment", "plan", "-s", "cartpole-lr", "--json")[1])
    assert job["spec"]["parallelism"] == planned["parallelism"] == 1 and job["spec"]["completions"] == 9


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-s", "cartpole-lr", "--parallel", "0"], "--parallel: at least 1, got 0"),
        (["-s", "cartpole-lr", "-p", "-3"], "--parallel: at least 1, got -3"),
        (["-f", "cartpole-ppo", "--parallel", "2"], "--parallel: only with -s SWEEP"),
        (["-s", "cartpole-lr", "-e", "cartpole-lr-0"], "give exactly one of -e NAME, -f SPEC or -s SWEEP"),
        (["-s", "nope"], "nope"),
    ],
)
def test_render_s_bad_input_exits_2_naming_the_flag(lab: Path, args: list[str], message: str) -> None:
    from cli_kit import invoke

    assert invoke("experiment", "sweep", "-f", "cartpole-lr", "--no-build")[0] == 0
    code, stdout, stderr = invoke("experiment", "render", *args)
    assert code == 2 and message in stderr and stdout == ""


def test_rendering_a_sweep_imports_no_pulumi() -> None:
    code = (
        "import sys, json; from infra.sweep_program import render_sweep_config;"
        f"render_sweep_config(json.loads({json.dumps(sweep_config())!r}), stack='cartpole-lr');"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pulumi', 'pulumi_gcp', 'pulumi_kubernetes')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_resumed_sweeps_job_has_a_slot_only_for_each_trial_not_held() -> None:
    """``tfcli:heldTrials`` (what ``resume -s`` sets): those trials get no pod; slot i runs the i-th trial left, its
    spec under ``slot-<i>.yaml``, and the stack exports the table tfcli reads pods and failed indexes through."""
    result = plan(**{"tfcli:heldTrials": "0,1,4,8", "tfcli:parallelism": 4})
    spec = the_job(result)["spec"]
    assert (spec["completions"], spec["parallelism"], spec["maxFailedIndexes"]) == (5, 4, 4)
    (config_map,) = [r for r in result.of_type("kubernetes:core/v1:ConfigMap")]
    names = {key: yaml.safe_load(text)["name"] for key, text in config_map.inputs["data"].items()}
    assert names == {f"slot-{i}.yaml": f"cartpole-lr-{k}" for i, k in enumerate((2, 3, 5, 6, 7))}
    assert result.outputs["slots"] == [2, 3, 5, 6, 7]


@pytest.mark.parametrize(("parallelism", "nodes"), [(2, 1), (4, 2), (None, 3)], ids=["2", "4", "default"])
def test_the_sweeps_learner_pool_starts_with_the_nodes_its_trials_at_a_time_use(
    parallelism: int | None, nodes: int
) -> None:
    """On 3 x e2-standard-8 a node holds 3 single-mode learners: 2 trials at a time start 1 node and 4 start 2, not the
    3 of ``num_nodes`` (the autoscaler's room); by default the sweep runs as many as the pool holds, on all 3."""
    config = sweep_config(options=SweepOptions(sets=("run_mode=single",)))
    config["tfcli:sweep"]["base"]["cluster"] |= {"num_nodes": 3, "max_nodes": 3}
    if parallelism is not None:
        config["tfcli:parallelism"] = parallelism
    result = plan_for(config, stack="cartpole-lr")
    pool = result.named("cartpole-lr-learner-pool").inputs
    assert (pool["initialNodeCount"], pool["autoscaling"]["totalMaxNodeCount"]) == (nodes, 3)
    assert the_job(result)["spec"]["parallelism"] == (parallelism or 9)
