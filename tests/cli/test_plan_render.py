"""Offline commands over an experiment's stack: the stack file ``experiment new`` writes, ``experiment plan`` and
``experiment render`` — no Pulumi CLI, no credentials, no GCP project needed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from cli_kit import invoke, runner

from infra.stack_files import STACKS_DIR
from tfcli.cli.app import app


def test_new_writes_the_stack_file_with_a_placeholder_project_and_local_use_is_unchanged(project: Path) -> None:
    code, stdout, stderr = invoke("experiment", "new", "-f", "cartpole-ppo", "-n", "cp", "--total-timesteps", "500")
    assert code == 0, stderr
    assert "stacks/Pulumi.cp.yaml, with a placeholder GCP project" in stdout
    text = (project / "stacks" / "Pulumi.cp.yaml").read_text()
    assert "gcp:project is a placeholder" in text
    config = yaml.safe_load(text)["config"]
    assert list(config)[:2] == ["gcp:project", "gcp:region"]
    assert (config["gcp:project"], config["gcp:region"], config["tfcli:suspend"]) == (
        "my-gcp-project",
        "us-central1",
        False,
    )
    spec = yaml.safe_load((project / "experiments" / "cp" / "experiment.yaml").read_text())
    assert config["tfcli:experiment"] == spec  # the fully resolved spec, as stored
    listed = json.loads(invoke("experiment", "list", "--json")[1])
    assert (listed[0]["backend"], listed[0]["state"]) == ("local", "new")


def test_new_keeps_what_it_does_not_own_in_an_existing_stack_file(project: Path) -> None:
    # The committed example stays byte for byte what `python -m infra.stack_files` writes, in a project with an
    # envs/ folder as the repository root has (tfcli:code: [envs]).
    (project / "envs").mkdir()
    shutil.copy(STACKS_DIR / "Pulumi.cartpole-ppo.yaml", project / "stacks")
    before = (project / "stacks" / "Pulumi.cartpole-ppo.yaml").read_text()
    assert invoke("experiment", "new", "-f", "cartpole-ppo")[0] == 0
    assert (project / "stacks" / "Pulumi.cartpole-ppo.yaml").read_text() == before

    path = project / "stacks" / "Pulumi.cartpole-ppo.yaml"
    data = yaml.safe_load(before)
    data = {"encryptionsalt": "v1:c2FsdA==:v1:eA==", **data}
    data["config"]["tfcli:image"] = "example.com/mine:1"
    data["config"]["tfcli:transportToken"] = {"secure": "v1:abc"}
    path.write_text("# mine\n" + yaml.safe_dump(data, sort_keys=False))
    assert invoke("experiment", "new", "-f", "cartpole-ppo", "--episodes", "9", "-n", "cartpole-ppo")[0] == 1  # refused
    assert invoke("experiment", "new", "-f", "cartpole-ppo")[0] == 0
    after = yaml.safe_load(path.read_text())
    assert path.read_text().startswith("# mine\n")
    assert after["encryptionsalt"] == "v1:c2FsdA==:v1:eA=="
    assert after["config"]["tfcli:image"] == "example.com/mine:1"
    assert after["config"]["tfcli:transportToken"] == {"secure": "v1:abc"}


def test_plan_lists_resources_and_the_hourly_cost_with_a_placeholder_project(project: Path) -> None:
    assert invoke("experiment", "new", "-f", "cartpole-ppo", "-n", "cp")[0] == 0
    code, stdout, stderr = invoke("experiment", "plan", "-e", "cp")
    assert code == 0, stderr
    assert "Stack cp: 22 resources" in stdout
    assert "placeholder 'my-gcp-project'" in stdout
    for text in (
        "gcp:Cluster cp-cluster",
        "gcp:NodePool cp-learner-pool",
        "machineType=e2-standard-8",
        "Estimated cost",
    ):
        assert text in stdout
    assert "learner nodes are on-demand; as spot: $" in stdout
    # the node time max_cost adds per start, its own line (trainer/kernel/budget.py's allowance at the run's price)
    assert "max_cost also counts node time: 20 min per start of the run (10 min node start-up and image pull, " in (
        " ".join(stdout.split())
    )


def test_plan_json_and_spot_vs_on_demand(project: Path) -> None:
    spot = project / "configs" / "clusters" / "t4-spot.yaml"
    spot.write_text(
        "name: t4-spot\nmachine_type: n1-standard-8\ngpus_per_node: 1\nnum_nodes: 1\nlocation: us-central1-a\n"
        "spot: true\n"
    )
    code, stdout, stderr = invoke("experiment", "new", "-f", "space-invaders-dqn", "-n", "si", "-c", "t4-spot")
    assert code == 0, stderr
    code, stdout, stderr = invoke("experiment", "plan", "-e", "si", "--json")
    assert code == 0, stderr
    data = json.loads(stdout)
    assert data["stack"] == "si" and data["placeholder_project"] is True
    pools = [r for r in data["resources"] if r["type"] == "gcp:container/nodePool:NodePool"]
    learner = next(p for p in pools if p["name"] == "si-learner-pool")
    assert learner["inputs"]["nodeConfig"]["spot"] is True
    cost = data["cost"]
    assert cost["learner_spot"] is True
    assert cost["other_learner_pricing"]["learner_spot"] is False
    assert cost["other_learner_pricing"]["usd_per_hour"] > cost["usd_per_hour"] > 0
    assert any("(spot)" in line["item"] and "nvidia-tesla-t4" in line["item"] for line in cost["lines"])
    # own cluster: the run's price is the plan's running price; a start adds 20 min of it
    allowance = data["start_allowance"]
    assert allowance["seconds"] == 1200 and allowance["usd_per_hour"] == pytest.approx(cost["usd_per_hour"], abs=1e-4)
    assert allowance["usd"] == pytest.approx(cost["usd_per_hour"] / 3, abs=1e-3)


def test_plan_from_a_spec_on_a_shared_cluster(project: Path) -> None:
    shutil.copy(STACKS_DIR / "Pulumi.shared-t4.yaml", project / "stacks")
    code, stdout, stderr = invoke("experiment", "plan", "-f", "cartpole-ppo", "-c", "shared-t4", "--json")
    assert code == 0, stderr
    data = json.loads(stdout)
    types = {r["type"] for r in data["resources"]}
    assert "gcp:container/cluster:Cluster" not in types and "pulumi:pulumi:StackReference" in types
    assert any("shared cluster of stack shared-t4" in note for note in data["cost"]["notes"])
    assert not (project / "experiments" / "cartpole-ppo").exists()  # plan writes nothing


def test_render_prints_the_manifests_and_writes_a_file(project: Path) -> None:
    code, stdout, stderr = invoke("experiment", "render", "-f", "space-invaders-dqn")
    assert code == 0, stderr
    assert "placeholder 'my-gcp-project'" in stderr
    objects = [o for o in yaml.safe_load_all(stdout) if o]
    kinds = [o["kind"] for o in objects]
    assert kinds.count("Job") == 2 and "Service" in kinds and "Namespace" in kinds
    assert {o["metadata"]["namespace"] for o in objects if o["kind"] != "Namespace"} == {"tfcli-space-invaders-dqn"}
    assert stdout.startswith("# GCP project: the placeholder")

    assert invoke("experiment", "new", "-f", "cartpole-ppo", "-n", "cp")[0] == 0
    code, _, stderr = invoke("experiment", "render", "-e", "cp", "-o", "cp.yaml")
    assert code == 0, stderr
    rendered = [o for o in yaml.safe_load_all((project / "cp.yaml").read_text()) if o]
    job = next(o for o in rendered if o["kind"] == "Job")
    # named by a digest of its spec, so a changed spec replaces the Job instead of racing its deletion
    assert job["metadata"]["name"].startswith("learner-") and job["spec"]["suspend"] is False


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["plan"], 2, "give exactly one of -e NAME"),
        (["render", "-e", "cp", "-f", "cartpole-ppo"], 2, "give exactly one of -e NAME"),
        (["plan", "-e", "nope"], 2, "no experiment named 'nope'"),
        (["plan", "-f", "nocluster.yaml"], 2, "cluster: the experiment names no cluster"),
        (["plan", "-f", "cartpole-ppo", "-c", "Bad_Name"], 2, "--cluster: 'Bad_Name' is not a valid name"),
        (["plan", "-f", "cartpole-ppo", "-c", "shared-t4"], 2, "--cluster: no shared cluster named 'shared-t4'"),
        (["render", "-f", "no-such-spec"], 2, "no experiment named 'no-such-spec'"),
    ],
)
def test_plan_and_render_bad_input_exits_2_and_writes_nothing(
    project: Path, args: list[str], code: int, message: str
) -> None:
    (project / "nocluster.yaml").write_text("name: nc\nenvironment: cartpole\nagent: ppo\ntotal_timesteps: 10\n")
    result = runner.invoke(app, ["experiment", *args])
    assert result.exit_code == code, result.output
    assert message in result.stderr and "Traceback" not in result.output
    assert not any((project / "experiments").iterdir()) and not any((project / "stacks").iterdir())


def test_new_with_the_name_of_a_shared_cluster_stack_is_refused(project: Path) -> None:
    shutil.copy(STACKS_DIR / "Pulumi.shared-t4.yaml", project / "stacks")
    code, _, stderr = invoke("experiment", "new", "-f", "cartpole-ppo", "-n", "shared-t4")
    assert code == 2 and "stack of the shared cluster 'shared-t4'" in stderr and "-n" in stderr
    assert not any((project / "experiments").iterdir())


def test_plan_local_shows_the_processes_a_run_starts_here_and_a_sweeps_trials_at_a_time(project: Path) -> None:
    spec = (
        "name: dist\nenvironment: cartpole\nagent: ppo\nrun_mode: distributed\nnum_workers: 3\ntotal_timesteps: 500\n"
    )
    (project / "dist.yaml").write_text(spec)
    assert invoke("experiment", "new", "-f", "dist.yaml")[0] == 0
    code, stdout, stderr = invoke("experiment", "plan", "-e", "dist", "--local", "--json")
    assert code == 0, stderr
    data = json.loads(stdout)
    assert (data["run_mode"], data["env_workers"], data["processes"], data["cores"]) == ("distributed", 3, 5, 4)
    assert data["parallel"] is None
    # A sweep over worker counts is planned at its widest: 1 learner + 4 workers = 5 cores a trial.
    sweep = (
        "name: sw\nbase:\n" + "".join(f"  {line}\n" for line in spec.splitlines()) + "axes:\n  num_workers: [2, 4]\n"
    )
    (project / "sw.yaml").write_text(sweep)
    code, _, stderr = invoke("experiment", "sweep", "-f", "sw.yaml", "--no-build")
    assert code == 0, stderr
    data = json.loads(invoke("experiment", "plan", "-s", "sw", "--local", "--json")[1])
    assert (data["cores"], data["parallel"]) == (5, max(1, (data["machine_cores"]) // 5))
    code, stdout, _ = invoke("experiment", "plan", "-s", "sw", "--local")
    assert code == 0 and "trial(s) at a time" in stdout and "nothing beyond this machine" in stdout
    code, _, stderr = invoke("experiment", "plan", "-e", "dist", "--local", "-c", "shared")
    assert code == 2 and "no meaning with --local" in stderr
