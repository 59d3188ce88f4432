"""The 2018 client's ``cluster create -n NAME -s SIZE -m MACHINE_TYPE -d DISK_SIZE`` (no spec file) and
``cluster delete -A``, over the fake pulumi."""

from __future__ import annotations

from pathlib import Path

import pytest
from gke_testkit import GCP_PROJECT, FakePulumi, stack_config
from typer.testing import CliRunner

from tfcli.cli.app import app

runner = CliRunner()


@pytest.mark.parametrize(
    "flags",
    [
        ["-n", "c2018", "-s", "2", "-m", "n1-standard-4", "-d", "50"],
        ["--name", "c2018", "--size", "2", "--machine-type", "n1-standard-4", "--disk-size", "50"],
    ],
    ids=["short", "long"],
)
def test_create_from_flags_alone_writes_that_cluster_and_ups_it(
    gke_project: Path, fake_pulumi: FakePulumi, flags: list[str]
) -> None:
    result = runner.invoke(app, ["cluster", "create", *flags])
    assert result.exit_code == 0, result.output
    assert "Cluster 'c2018' is up" in result.stdout
    config = stack_config(gke_project, "c2018")
    cluster = config["tfcli:cluster"]
    assert (cluster["name"], cluster["num_nodes"], cluster["machine_type"], cluster["disk_size"]) == (
        "c2018",
        2,
        "n1-standard-4",
        50,
    )
    assert (cluster["gpus_per_node"], cluster["spot"]) == (0, False) and config["gcp:project"] == GCP_PROJECT
    assert "up" in fake_pulumi.verbs()


def test_create_from_flags_takes_the_original_defaults(gke_project: Path, fake_pulumi: FakePulumi) -> None:
    result = runner.invoke(app, ["cluster", "create", "-n", "c3", "-m", "e2-standard-2"])
    assert result.exit_code == 0, result.output
    cluster = stack_config(gke_project, "c3")["tfcli:cluster"]
    assert (cluster["num_nodes"], cluster["disk_size"]) == (3, 100)  # the 2018 client's defaults too


def test_create_from_incomplete_flags_names_them_and_writes_nothing(gke_project: Path, fake_pulumi: FakePulumi) -> None:
    result = runner.invoke(app, ["cluster", "create", "-s", "2"])
    assert result.exit_code == 2, result.output
    assert "--name (-n): required" in result.stderr and "--machine-type (-m): required" in result.stderr
    assert not list((gke_project / "stacks").glob("Pulumi.*.yaml")) and fake_pulumi.verbs() == []


def test_delete_A_deletes_every_shared_cluster(gke_project: Path, fake_pulumi: FakePulumi) -> None:
    for name in ("c1", "c2"):
        assert runner.invoke(app, ["cluster", "create", "-n", name, "-m", "e2-standard-2"]).exit_code == 0
    result = runner.invoke(app, ["cluster", "delete", "-A"])
    assert result.exit_code == 0, result.output
    assert "Deleted c1, c2." in result.stdout
    assert not list((gke_project / "stacks").glob("Pulumi.c*.yaml"))
