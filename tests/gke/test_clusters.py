"""``tfcli cluster create/list/delete`` and experiments on a shared cluster (``start -c``), over the fake pulumi."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_kit import invoke
from gke_testkit import GCP_PROJECT, ZONE, FakePulumi, stack_config


def create_shared(name: str = "shared-t4", *flags: str) -> str:
    code, stdout, stderr = invoke("cluster", "create", "-f", "single-node-gpu", "-c", name, *flags)
    assert code == 0, stdout + stderr
    return stdout


def test_create_writes_the_cluster_stack_with_flags_over_the_file_then_ups_it(
    gke_project: Path, fake_pulumi: FakePulumi
) -> None:
    stdout = create_shared("shared-t4", "--num-nodes", "2", "--spot", "--disk-size", "200")
    assert "Cluster 'shared-t4' is up (about $" in stdout and "pulumi up shared-t4" in stdout
    config = stack_config(gke_project, "shared-t4")
    assert (config["gcp:project"], config["gcp:zone"]) == (GCP_PROJECT, ZONE)
    cluster = config["tfcli:cluster"]
    assert (cluster["name"], cluster["num_nodes"], cluster["spot"], cluster["disk_size"]) == ("shared-t4", 2, True, 200)
    assert (cluster["machine_type"], cluster["gpu_type"], cluster["gpus_per_node"]) == (
        "n1-standard-8",
        "nvidia-tesla-t4",
        1,
    )
    assert "tfcli:experiment" not in config
    assert fake_pulumi.verbs()[:3] == ["stack select", "stack init", "up"]  # no secrets to set: no config call
    up = next(argv for argv in fake_pulumi.commands() if argv[0] == "up")
    assert up[up.index("--stack") + 1] == "shared-t4"


def test_list_shows_shape_status_cost_and_users(gke_project: Path, fake_pulumi: FakePulumi) -> None:
    create_shared("shared-t4", "--spot")
    code, stdout, stderr = invoke("cluster", "list", "--json")
    assert code == 0, stderr
    (row,) = json.loads(stdout)
    assert (row["name"], row["location"], row["nodes"], row["gpus"], row["spot"], row["status"]) == (
        "shared-t4", ZONE, "1 (0..1)", "1 x nvidia-tesla-t4", True, "up",
    )  # fmt: skip
    assert 0 < row["usd_per_hour"] < 2 and row["experiments"] == []
    table = invoke("cluster", "list")[1]
    assert "shared-t4" in table and "1 x tesla-t4" in table and " up " in table


def test_experiment_on_a_shared_cluster_and_delete_refused_while_it_runs(
    gke_project: Path, fake_pulumi: FakePulumi
) -> None:
    assert invoke("experiment", "new", "-f", "cartpole-ppo", "-n", "si1")[0] == 0
    code, _, stderr = invoke("experiment", "start", "-e", "si1", "-c", "shared-t4")
    assert code == 2 and "--cluster: no shared cluster named 'shared-t4'" in stderr

    create_shared()
    fake_pulumi.clear()
    code, stdout, stderr = invoke("experiment", "start", "-e", "si1", "-c", "shared-t4")
    assert code == 0, stdout + stderr
    assert "shared cluster shared-t4" in stdout and "14 created" in stdout  # no cluster or pools of its own
    config = stack_config(gke_project, "si1")
    assert config["tfcli:sharedClusterStack"] == "shared-t4"
    # The learner is sized for the shared cluster's nodes: its spec is the experiment's cluster.
    assert config["tfcli:experiment"]["cluster"]["name"] == "shared-t4"
    assert config["tfcli:experiment"]["cluster"]["gpu_type"] == "nvidia-tesla-t4"
    record = json.loads((gke_project / "experiments" / "si1" / "run.json").read_text())
    assert record["gke"]["shared_cluster"] == "shared-t4"
    assert json.loads(invoke("cluster", "list", "--json")[1])[0]["experiments"] == ["si1"]

    code, _, stderr = invoke("experiment", "start", "-e", "si1", "-c", "other")
    assert code == 2 and "no shared cluster named 'other'" in stderr

    fake_pulumi.clear()
    code, _, stderr = invoke("cluster", "delete", "-c", "shared-t4")
    assert code == 1 and "'shared-t4' runs si1" in stderr and "tfcli experiment stop -e si1" in stderr
    assert "destroy" not in fake_pulumi.verbs()
    assert (gke_project / "stacks" / "Pulumi.shared-t4.yaml").exists()


def test_delete_destroys_and_removes_the_stack(gke_project: Path, fake_pulumi: FakePulumi) -> None:
    create_shared("shared-t4")
    create_shared("big", "--num-nodes", "1")
    fake_pulumi.clear()
    code, stdout, stderr = invoke("cluster", "delete", "-c", "big")
    assert code == 0, stderr
    assert "Deleted big." in stdout
    assert fake_pulumi.verbs().count("destroy") == 1 and "stack rm" in fake_pulumi.verbs()
    rm = next(argv for argv in fake_pulumi.commands() if argv[:2] == ["stack", "rm"])
    assert rm[-1] == "big"
    assert not (gke_project / "stacks" / "Pulumi.big.yaml").exists()
    assert set(fake_pulumi.stacks()) == {"shared-t4"}

    code, stdout, stderr = invoke("cluster", "delete", "--all")
    assert code == 0, stderr
    assert fake_pulumi.stacks() == {} and "Deleted shared-t4." in stdout
    assert invoke("cluster", "list")[1].startswith("No shared clusters")


def test_a_second_create_with_another_spec_is_refused_while_up(gke_project: Path, fake_pulumi: FakePulumi) -> None:
    create_shared("shared-t4")
    code, _, stderr = invoke("cluster", "create", "-f", "single-node-gpu", "-c", "shared-t4", "--num-nodes", "3")
    assert code == 1 and "exists with a different spec" in stderr
    assert stack_config(gke_project, "shared-t4")["tfcli:cluster"]["num_nodes"] == 1
    assert invoke("cluster", "create", "-f", "single-node-gpu", "-c", "shared-t4")[0] == 0  # the same: repairs


def test_names_are_shared_between_experiments_and_clusters(gke_project: Path, fake_pulumi: FakePulumi) -> None:
    create_shared("shared-t4")
    code, _, stderr = invoke("experiment", "new", "-f", "cartpole-ppo", "-n", "shared-t4")
    assert code == 2 and "is the stack of the shared cluster 'shared-t4'" in stderr
    assert not (gke_project / "experiments" / "shared-t4").exists()
    assert invoke("experiment", "new", "-f", "cartpole-ppo", "-n", "si1")[0] == 0
    code, _, stderr = invoke("cluster", "create", "-f", "single-node-gpu", "-c", "si1")
    assert code == 2 and "'si1' is the name of an experiment" in stderr


def test_one_command_per_cluster_at_a_time(gke_project: Path, fake_pulumi: FakePulumi) -> None:
    import subprocess
    import sys

    create_shared("shared-t4")
    # Another tfcli process holds the cluster's lock (tfcli's locks are re-entrant within one process).
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time\nfrom tfcli.gke.deploy import cluster_lock\nfrom tfcli.project import open_project\n"
            "with cluster_lock(open_project(), 'shared-t4'):\n    print('held', flush=True)\n    time.sleep(120)\n",
        ],
        cwd=gke_project,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        code, _, stderr = invoke("cluster", "delete", "-c", "shared-t4")
        assert code == 1 and "cluster 'shared-t4' is busy" in stderr
    finally:
        holder.kill()
        holder.wait()
    assert invoke("cluster", "delete", "-c", "shared-t4")[0] == 0


def test_list_without_a_readable_stack_shows_unknown(
    gke_project: Path, fake_pulumi: FakePulumi, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_shared("shared-t4")
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "not the one it was created with")
    code, stdout, stderr = invoke("cluster", "list")
    assert code == 0
    assert "unknown" in stdout and "wrong passphrase" in stderr
