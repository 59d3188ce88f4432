"""The cluster half of GKE experiments: pod states explained from recorded API responses, the cost so far, and
``experiment logs``/``status`` through the Kubernetes client against a strict fake API server on loopback."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from fake_kube import Cluster, serve
from gke_testkit import AUTH_PLUGIN_FAILURE, FakePulumi, point_kubeconfig_at
from typer.testing import CliRunner

from tfcli.cli.app import app
from tfcli.gke.cost import accrued_cost, budget_warning
from tfcli.gke.pod_states import cluster_view, last_error_line

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "k8s"
runner = CliRunner()


def recorded(name: str) -> dict[str, Any]:
    return dict(json.loads((FIXTURES / f"{name}.json").read_text()))


EXPECTED = {
    "pending-no-gpu-node": ("pending", "waiting for a node with a free GPU (no GPU node yet"),
    "pending-scale-up": ("pending", "the cluster autoscaler is adding one (pod triggered scale-up"),
    "pending-max-nodes": ("pending", "its node pool is at its maximum size (the cluster's max_nodes)"),
    "pending-quota": ("pending", "adding a node failed, the GCP quota is too low (Node scale up in zones"),
    "pending-untolerated-taint": ("pending", "a taint the pod does not tolerate {nvidia.com/gpu: present}"),
    "pending-untolerated-taint-1.34": ("pending", "a taint the pod does not tolerate (0/3 nodes are available: 1 node"),
    "image-pull-backoff": ("image-pull-error", "cannot pull us-central1-docker.pkg.dev/tfcli-test-project/tfcli/"),
    "running": ("running", ""),
    "preempted-and-resumed": ("running", ""),
    "succeeded": ("completed", ""),
    "failed": ("failed", "error: environment ALE/SpaceInvaders-v5: ROM not found"),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_recorded_state_is_explained(name: str) -> None:
    data = recorded(name)
    view = cluster_view(data["pods"], data["events"], data["jobs"])
    state, words = EXPECTED[name]
    assert view.learner is not None and view.learner.state == state
    assert words in view.learner.reason
    assert view.summary().startswith(f"learner {state}")
    assert view.preemptions == (2 if name == "preempted-and-resumed" else 0)


@pytest.mark.parametrize(
    ("message", "named"),
    [  # the same scheduler refusal before Kubernetes 1.34 and after (kubernetes PR 134740 dropped the taint's name)
        (
            "0/3 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}, 2 Insufficient cpu.",
            " {nvidia.com/gpu: present}",
        ),
        ("0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu.", ""),
    ],
)
def test_an_untolerated_taint_is_explained_in_both_scheduler_forms(message: str, named: str) -> None:
    data = recorded("pending-untolerated-taint-1.34")
    data["pods"][0]["status"]["conditions"][0]["message"] = data["events"][0]["message"] = message
    learner = cluster_view(**data).learner
    assert learner is not None and learner.state == "pending"
    said = "unschedulable: the nodes with room have a taint the pod does not tolerate"
    assert learner.reason == f"{said}{named} ({message})"


def test_preemptions_and_job_outcomes_are_summarised() -> None:
    data = recorded("preempted-and-resumed")
    assert "preempted 2 times and resumed from its checkpoint" in cluster_view(**data).summary()
    assert cluster_view(**recorded("failed")).jobs == {
        "learner": "Failed: BackoffLimitExceeded Job has reached the specified backoff limit"
    }
    assert cluster_view(**recorded("succeeded")).jobs == {"learner": "Complete"}
    assert cluster_view([], [], []).summary() == "no learner pod yet"


def test_the_last_error_line_of_a_termination_message() -> None:
    assert last_error_line("INFO starting\nerror: boom\n\n") == "error: boom"
    assert last_error_line("Traceback (most recent call last):\n  ...\nValueError: bad\n") == "ValueError: bad"
    assert last_error_line("just a line") == "just a line"


NOW = datetime(2026, 11, 24, 20, 0, tzinfo=UTC)


def node(
    pool: str, machine: str, created: datetime, *, spot: bool, gpu: str | None = None, gpus: int = 0
) -> dict[str, Any]:
    labels = {"cloud.google.com/gke-nodepool": pool, "node.kubernetes.io/instance-type": machine}
    if spot:
        labels["cloud.google.com/gke-spot"] = "true"
    if gpu:
        labels["cloud.google.com/gke-accelerator"] = gpu
    return {
        "metadata": {"name": f"gke-si1-{pool}-{machine}", "labels": labels,
                     "creationTimestamp": created.strftime("%Y-%m-%dT%H:%M:%SZ")},
        "status": {"capacity": {"cpu": "8", **({"nvidia.com/gpu": str(gpus)} if gpus else {})}},
    }  # fmt: skip


def test_accrued_cost_by_hand() -> None:
    nodes = [
        node("learner", "n1-standard-8", NOW - timedelta(hours=10), spot=True, gpu="nvidia-tesla-t4", gpus=1),
        node("cpu", "e2-standard-4", NOW - timedelta(hours=12), spot=False),
    ]
    cost = accrued_cost(nodes, cluster_created=(NOW - timedelta(hours=12.5)).isoformat(), now=NOW)
    n1_spot = 8 * 0.006655 + 30 * 0.000892  # vCPUs and GiB of n1-standard-8 at the spot rates
    e2 = 4 * 0.021811 + 16 * 0.002923
    items = {item.item: (round(item.hours, 6), round(item.usd, 6)) for item in cost.items}
    assert items == {
        "learner: n1-standard-8 (spot) node-hours": (10.0, round(10 * n1_spot, 6)),
        "cpu: e2-standard-4 (on-demand) node-hours": (12.0, round(12 * e2, 6)),
        "nvidia-tesla-t4 GPU (spot) GPU-hours": (10.0, round(10 * 0.14, 6)),
        "GKE cluster management fee, hours": (12.5, 1.25),
    }
    assert cost.usd == pytest.approx(10 * n1_spot + 12 * e2 + 1.4 + 1.25) == pytest.approx(5.058144)
    shared = accrued_cost(nodes[:1], cluster_created=None, now=NOW)  # no fee
    assert shared.usd == pytest.approx(10 * n1_spot + 1.4)
    unknown = accrued_cost(
        [node("x", "z9-mystery-4", NOW - timedelta(hours=1), spot=False)], cluster_created=None, now=NOW
    )
    assert unknown.unpriced == ("z9-mystery-4",) and unknown.usd == 0


def test_status_warns_from_80_percent_of_max_cost() -> None:
    assert budget_warning(7.99, 10.0) == "" and budget_warning(100.0, None) == ""
    assert budget_warning(8.0, 10.0) == "cost $8.00 is 80% of max_cost $10.00; the trainer pauses itself at the limit"
    assert "has reached max_cost $10.00" in budget_warning(10.0, 10.0)


# --- through the CLI: fake pulumi (the stack), fake API server, fake gke-gcloud-auth-plugin -------------------


def without_auth_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    """PATH without any ``gke-gcloud-auth-plugin`` (this machine may have a real one)."""
    import shutil

    while found := shutil.which("gke-gcloud-auth-plugin"):
        kept = [d for d in os.environ["PATH"].split(os.pathsep) if Path(d).resolve() != Path(found).parent.resolve()]
        monkeypatch.setenv("PATH", os.pathsep.join(kept))


LOG = [f"2026-11-24 09:0{i}:00,000 INFO trainer: episode {i}\n" for i in range(6)]


@pytest.fixture
def cluster() -> Iterator[tuple[Cluster, str]]:
    fake = Cluster()
    data = recorded("preempted-and-resumed")
    fake.add_namespace("tfcli-si1", **data)
    fake.add_namespace("kube-system", created=(datetime.now(UTC) - timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%SZ"))
    fake.nodes = [node("learner", "n1-standard-8", datetime.now(UTC) - timedelta(hours=2), spot=True,
                       gpu="nvidia-tesla-t4", gpus=1)]  # fmt: skip
    fake.logs = {"learner-1a2b3c4d-q8x2v": LOG, "learner-1a2b3c4d-old11": ["the preempted pod\n"]}
    for address in serve(fake):
        yield fake, address


@pytest.fixture
def deployed(gke_project: Path, fake_pulumi: FakePulumi, gcs: Any, cluster: tuple[Cluster, str]) -> Cluster:
    """si1 deployed on its own cluster; its stack's kubeconfig points at the fake API server (plain HTTP)."""
    fake, address = cluster
    point_kubeconfig_at(fake_pulumi, "si1", address)
    gcs.create_bucket("tfcli-si1-96f4ee46")
    assert runner.invoke(app, ["experiment", "new", "-f", "cartpole-ppo", "-n", "si1"]).exit_code == 0
    spec_path = gke_project / "experiments" / "si1" / "experiment.yaml"
    spec = yaml.safe_load(spec_path.read_text())
    spec_path.write_text(yaml.safe_dump({**spec, "max_cost": 1.0}, sort_keys=False))
    result = runner.invoke(app, ["experiment", "start", "-e", "si1"])
    assert result.exit_code == 0, result.stdout + result.stderr
    return fake


def test_logs_stream_the_newest_learner_pod(deployed: Cluster, auth_plugin: Path) -> None:
    result = runner.invoke(app, ["experiment", "logs", "-e", "si1", "--tail", "2"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "".join(LOG[-2:])
    result = runner.invoke(app, ["experiment", "logs", "-e", "si1", "-f"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "".join(LOG)
    logs = [path for path in deployed.requests if path.split("?")[0].endswith("/log")]
    assert logs[-1].startswith("/api/v1/namespaces/tfcli-si1/pods/learner-1a2b3c4d-q8x2v/log?")
    assert "container=learner" in logs[-1] and "follow=true" in logs[-1]


def test_log_characters_cut_between_chunks_come_out_whole(deployed: Cluster, auth_plugin: Path) -> None:
    lines = ["épisode 1 — récompense ≥ 21 🎯\n", "Ünïcødé: 学习率 0.001 ✓\n"]
    deployed.logs["learner-1a2b3c4d-q8x2v"] = lines
    deployed.log_piece = 3  # every multi-byte character above straddles a piece boundary somewhere
    data = "".join(lines).encode()
    with pytest.raises(UnicodeDecodeError):  # some pieces are not UTF-8 on their own
        [data[start : start + 3].decode() for start in range(0, len(data), 3)]
    result = runner.invoke(app, ["experiment", "logs", "-e", "si1"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "".join(lines)


def test_logs_of_a_worker_that_does_not_exist(deployed: Cluster, auth_plugin: Path) -> None:
    result = runner.invoke(app, ["experiment", "logs", "-e", "si1", "--worker", "1"])
    assert result.exit_code == 1
    assert "env worker 1 of 'si1' has no pod" in result.stderr and "--worker is for distributed runs" in result.stderr


def test_logs_of_a_pending_learner_say_why(deployed: Cluster, auth_plugin: Path) -> None:
    deployed.add_namespace("tfcli-si1", **recorded("pending-scale-up"))
    result = runner.invoke(app, ["experiment", "logs", "-e", "si1"])
    assert result.exit_code == 1
    assert "the learner has no log yet: its pod is pending" in result.stderr
    assert "the cluster autoscaler is adding one" in result.stderr


def test_logs_without_the_auth_plugin_say_how_to_install_it(deployed: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    without_auth_plugin(monkeypatch)
    result = runner.invoke(app, ["experiment", "logs", "-e", "si1"])
    assert result.exit_code == 1
    assert "gke-gcloud-auth-plugin is not on PATH" in result.stderr
    assert "gcloud components install gke-gcloud-auth-plugin" in result.stderr
    assert not any(path.split("?")[0].endswith("/log") for path in deployed.requests)


def test_a_failing_auth_plugin_is_named_with_what_it_said(deployed: Cluster, failing_auth_plugin: Path) -> None:
    """The kubernetes client only logs a failing exec plugin; tfcli says so instead of going on to a bare 401."""
    result = runner.invoke(app, ["experiment", "logs", "-e", "si1"])
    assert result.exit_code == 1
    assert "gke-gcloud-auth-plugin gave no token for the cluster" in result.stderr
    assert f"exec: process returned 1. {AUTH_PLUGIN_FAILURE}" in result.stderr
    assert "401" not in result.stderr and deployed.requests == []  # it stopped before asking the cluster anything
    status = runner.invoke(app, ["experiment", "status", "-e", "si1"])
    assert status.exit_code == 0, status.stderr  # status still shows the bucket's part, and warns
    assert "gke-gcloud-auth-plugin gave no token" in status.stderr and "exec: process returned 1" in status.stderr


def test_an_api_error_shows_the_apis_own_message(deployed: Cluster, auth_plugin: Path) -> None:
    learner = deployed.namespaces["tfcli-si1"]["pods"][-1]  # scheduled, its containers not created yet
    learner["status"] = {"phase": "Pending", "containerStatuses": [
        {"name": "learner", "restartCount": 0, "state": {"waiting": {"reason": "ContainerCreating"}}}]}  # fmt: skip
    result = runner.invoke(app, ["experiment", "logs", "-e", "si1"])
    assert result.exit_code == 1
    name = learner["metadata"]["name"]
    assert (
        f"cannot read the log of {name} on the cluster si1: 400 Bad Request: "
        f'container "learner" in pod "{name}" is waiting to start: ContainerCreating'
    ) in result.stderr


def test_status_and_list_show_the_pods_and_the_cost(deployed: Cluster, auth_plugin: Path) -> None:
    result = runner.invoke(app, ["experiment", "status", "-e", "si1"])
    assert result.exit_code == 0, result.stderr
    assert "pods: learner running; preempted 2 times and resumed from its checkpoint" in result.stdout
    # 2 hours of a spot n1-standard-8 with a T4 and of the cluster fee: about $0.64, past 80 % of max_cost $1
    n1_t4_spot = 8 * 0.006655 + 30 * 0.000892 + 0.14
    expected = 2 * n1_t4_spot + 2 * 0.10
    data = json.loads(runner.invoke(app, ["experiment", "status", "-e", "si1", "--json"]).stdout)
    assert data["cost"]["usd"] == pytest.approx(expected, abs=0.01) and data["cost"]["max_cost"] == 1.0
    assert f"cost so far: ${expected:,.2f} of max_cost $1.00" in result.stdout
    assert "billing now: $0.32/h" in result.stdout and "still bills" not in result.stderr  # running: no alarm
    deployed.nodes[0]["metadata"]["creationTimestamp"] = (datetime.now(UTC) - timedelta(hours=3)).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )  # now 3 h x $0.22 + 2 h of fee = $0.86: 86 % of max_cost
    listed = runner.invoke(app, ["experiment", "list"])
    assert listed.exit_code == 0, listed.stderr
    assert "preempted 2x" in listed.stdout and "$0.8" in listed.stdout  # (the 80-column table wraps the pods column)
    assert "si1: cost $0.8" in listed.stderr and "of max_cost $1.00" in listed.stderr


def test_a_failed_learner_job_fails_the_status_with_the_trainers_error(deployed: Cluster, auth_plugin: Path) -> None:
    deployed.add_namespace("tfcli-si1", **recorded("failed"))
    data = json.loads(runner.invoke(app, ["experiment", "status", "-e", "si1", "--json"]).stdout)
    assert data["state"] == "failed"
    assert data["detail"] == "error: environment ALE/SpaceInvaders-v5: ROM not found: install ale-py's ROMs"


def test_a_run_paused_at_max_cost_is_paused_with_its_reason(deployed: Cluster, auth_plugin: Path, gcs: Any) -> None:
    result = {"status": "paused", "timesteps": 4200, "episodes": 80, "wall_seconds": 1800.0,
              "timesteps_per_second": 2.3, "mean_return_last_100": 21.0, "updates": 40,
              "reason": "max_cost reached ($1.00 of $1.00)"}  # fmt: skip
    gcs.bucket("tfcli-si1-96f4ee46").blob("si1/result.json").upload_from_string(json.dumps(result))
    shown = runner.invoke(app, ["experiment", "status", "-e", "si1"])
    assert shown.exit_code == 0, shown.stderr
    assert "si1 (multi-threaded, gke): paused" in shown.stdout
    assert "reason: max_cost reached ($1.00 of $1.00)" in shown.stdout
    # Paused, but its own cluster still bills: the fee and the spot n1-standard-8 + T4 node still up, said loudly.
    node = 8 * 0.006655 + 30 * 0.000892 + 0.14
    loud = (
        f"si1 is paused but its cluster still bills ${0.10 + node:,.2f}/h (GKE cluster management fee $0.10/h, "
        f"1 x learner: n1-standard-8 + 1 x nvidia-tesla-t4 (spot) ${node:,.2f}/h) until `tfcli experiment stop -e si1`"
    )
    assert loud in " ".join(shown.stderr.split())
    assert loud in " ".join(runner.invoke(app, ["experiment", "list"]).stderr.split())
    data = json.loads(runner.invoke(app, ["experiment", "status", "-e", "si1", "--json"]).stdout)
    assert data["cost"]["billing_usd_per_hour"] == pytest.approx(0.10 + node, abs=1e-3)


def test_a_cluster_that_cannot_be_read_is_a_warning(deployed: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    without_auth_plugin(monkeypatch)
    for command in (["experiment", "status", "-e", "si1"], ["experiment", "list"]):
        result = runner.invoke(app, command)
        assert result.exit_code == 0, result.stderr
        assert "cannot read" in result.stderr and "gke-gcloud-auth-plugin is not on PATH" in result.stderr


def test_logs_of_an_env_worker(deployed: Cluster, auth_plugin: Path) -> None:
    pods = deployed.namespaces["tfcli-si1"]["pods"]
    for index in (0, 1):
        worker = json.loads(json.dumps(pods[-1]))  # a running pod, relabelled as env worker <index>
        worker["metadata"]["name"] = f"env-workers-1a2b3c4d-{index}-x{index}"
        worker["metadata"]["labels"].update(
            {"app.kubernetes.io/component": "env-worker", "batch.kubernetes.io/job-completion-index": str(index)}
        )
        worker["spec"] = {"containers": [{"name": "env-worker", "image": "trainer:cpu"}], "restartPolicy": "Never"}
        pods.append(worker)
        deployed.logs[worker["metadata"]["name"]] = [f"worker {index} listening\n", f"worker {index} serving\n"]
    result = runner.invoke(app, ["experiment", "logs", "-e", "si1", "--worker", "1", "--tail", "1"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "worker 1 serving\n"
    assert "container=env-worker" in deployed.requests[-1] and "tailLines=1" in deployed.requests[-1]


def test_the_max_cost_warning_counts_what_the_trainer_counts(deployed: Cluster, auth_plugin: Path, gcs: Any) -> None:
    """The learner was handed $0.50/h (``TFCLI_HOURLY_PRICE``) and 20 min of node time per start
    (``TFCLI_START_ALLOWANCE_SECONDS``), and has trained 1.1 h over 2 starts (the last episode's ``start``): the
    trainer counts 0.5 x (1.1 + 2 x 1/3) = $0.88 of max_cost $1, so `status` warns from that figure (88 %) — not from
    the training time alone ($0.55), nor from the nodes' $0.64 (64 %), which it still shows."""
    for pod in deployed.namespaces["tfcli-si1"]["pods"]:
        if pod["metadata"]["labels"].get("app.kubernetes.io/component") == "learner":
            for container in pod["spec"]["containers"]:
                container["env"] = [
                    {"name": "TFCLI_HOURLY_PRICE", "value": "0.5"},
                    {"name": "TFCLI_START_ALLOWANCE_SECONDS", "value": "1200"},
                ]
    line = {"worker": 0, "episode": 1, "timesteps": 500, "return": 1.0, "length": 500, "wall_seconds": 1.1 * 3600}
    blob = gcs.bucket("tfcli-si1-96f4ee46").blob("si1/progress.jsonl")
    blob.upload_from_string(json.dumps(line | {"start": 2}) + "\n")
    data = json.loads(runner.invoke(app, ["experiment", "status", "-e", "si1", "--json"]).stdout)
    cost = data["cost"]
    assert data["starts"] == 2 and cost["starts"] == 2 and cost["start_allowance_seconds"] == 1200
    assert cost["hourly_price"] == 0.5 and cost["counted_usd"] == pytest.approx(0.5 * (1.1 + 2 / 3), abs=1e-4)
    assert cost["node_time_usd"] == pytest.approx(0.5 * 2 / 3, abs=1e-4)
    assert cost["usd"] < 0.8  # the nodes' cost alone would not warn
    shown = runner.invoke(app, ["experiment", "status", "-e", "si1"])
    assert "counted against max_cost: $0.88 (the run's $0.5000/h x its training wall time and node time)" in (
        shown.stdout
    )
    assert "node time (start-up, image pull, scale-down): 2 start(s) x 20 min, $0.33" in shown.stdout
    assert "si1: cost $0.88 is 88% of max_cost $1.00" in shown.stderr


def test_without_a_handed_allowance_status_counts_training_time_only(
    deployed: Cluster, auth_plugin: Path, gcs: Any
) -> None:
    """A learner of a stack from before the allowance has a price and no ``TFCLI_START_ALLOWANCE_SECONDS``: its
    trainer counts training time alone, and so does `status` (no node-time line)."""
    for pod in deployed.namespaces["tfcli-si1"]["pods"]:
        if pod["metadata"]["labels"].get("app.kubernetes.io/component") == "learner":
            for container in pod["spec"]["containers"]:
                container["env"] = [{"name": "TFCLI_HOURLY_PRICE", "value": "0.5"}]
    line = {"worker": 0, "episode": 1, "timesteps": 500, "return": 1.0, "length": 500, "wall_seconds": 1.7 * 3600}
    gcs.bucket("tfcli-si1-96f4ee46").blob("si1/progress.jsonl").upload_from_string(json.dumps(line) + "\n")
    data = json.loads(runner.invoke(app, ["experiment", "status", "-e", "si1", "--json"]).stdout)
    assert data["cost"]["counted_usd"] == pytest.approx(0.85) and data["cost"]["node_time_usd"] == 0.0
    assert data["starts"] == 1  # a log from before the count: it has trained, so it started once
    assert "node time (start-up" not in runner.invoke(app, ["experiment", "status", "-e", "si1"]).stdout
