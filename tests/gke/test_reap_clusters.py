"""``tfcli experiment reap`` destroys an idle shared cluster past its ``ttl`` (the scheduled CI job runs it): one
with an experiment deployed on it is kept whatever its age, one within its ttl or without one is kept, and the
destroy is ``cluster delete``'s. The stacks are played by the fake ``pulumi``, whose history gives each update's end
time as Pulumi's ``stack history`` does."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml
from gke_testkit import FakePulumi, stack_config
from test_clusters import create_shared, invoke

from tfcli.backends import Backends
from tfcli.experiments.store import ExperimentStore
from tfcli.project import open_project

pytestmark = pytest.mark.slow  # fake-pulumi journeys

LATER = timedelta(hours=2)  # past the cluster's 1 h ttl


def reap(after: timedelta) -> list[str]:
    """``experiment reap`` as if run ``after`` from now: what it said of each run and cluster."""
    reaped = Backends().reap(ExperimentStore(open_project()), now=datetime.now(UTC) + after)
    return [one.summary() for one in reaped]


def with_ttl(project: Path, ttl: str | None) -> None:
    spec = {"name": "t4", "machine_type": "n1-standard-8", "gpus_per_node": 1, "gpu_type": "nvidia-tesla-t4"}
    (project / "configs" / "clusters" / "t4.yaml").write_text(yaml.safe_dump({**spec, **({"ttl": ttl} if ttl else {})}))


def test_an_idle_shared_cluster_is_destroyed_once_past_its_ttl(gke_project: Path, fake_pulumi: FakePulumi) -> None:
    with_ttl(gke_project, "1h")
    code, stdout, stderr = invoke("cluster", "create", "-f", "t4", "-c", "shared-t4")
    assert code == 0, stdout + stderr
    assert stack_config(gke_project, "shared-t4")["tfcli:cluster"]["ttl"] == "1h"
    fake_pulumi.clear()
    assert reap(timedelta(minutes=30)) == [] and "destroy" not in fake_pulumi.verbs()  # within its ttl

    (said,) = reap(LATER)
    assert said.startswith("shared-t4: idle shared cluster, up 2.0 h since its last update, past its ttl"), said
    assert "destroy" in fake_pulumi.verbs() and "shared-t4" not in fake_pulumi.stacks()  # destroyed, removed
    assert not (gke_project / "stacks" / "Pulumi.shared-t4.yaml").exists()  # as `cluster delete` leaves it


def test_a_cluster_an_experiment_runs_on_or_without_a_ttl_is_kept(gke_project: Path, fake_pulumi: FakePulumi) -> None:
    with_ttl(gke_project, "1h")
    assert invoke("cluster", "create", "-f", "t4", "-c", "shared-t4")[0] == 0
    assert invoke("experiment", "new", "-f", "cartpole-ppo", "-n", "si1")[0] == 0
    code, stdout, stderr = invoke("experiment", "start", "-e", "si1", "-c", "shared-t4")
    assert code == 0, stdout + stderr
    fake_pulumi.clear()
    assert all(not line.startswith("shared-t4") for line in reap(LATER))
    assert fake_pulumi.stacks()["shared-t4"]["resources"]  # still up

    create_shared("plain")  # the bundled single-node-gpu: no ttl
    fake_pulumi.clear()
    assert all(not line.startswith("plain") for line in reap(timedelta(days=30)))


def test_idle_shared_clusters_are_reaped_whatever_the_projects_default_backend(
    gke_project: Path, fake_pulumi: FakePulumi
) -> None:
    """Reaping asks which backends run on shared clusters (the registry), not what this project trains on."""
    with_ttl(gke_project, "1h")
    assert invoke("cluster", "create", "-f", "t4", "-c", "shared-t4")[0] == 0
    with (gke_project / "tfcli.yaml").open("a") as settings:
        settings.write("backend: local\n")  # its runs train here; its cluster still costs
    fake_pulumi.clear()
    (said,) = reap(LATER)
    assert said.startswith("shared-t4: idle shared cluster"), said
    assert "shared-t4" not in fake_pulumi.stacks()
