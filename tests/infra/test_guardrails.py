"""Security and operability guardrails, checked on every bundled experiment (dedicated and shared cluster) and on
every committed stack file: what a reviewer would otherwise have to check by hand before ``pulumi up``."""

from __future__ import annotations

import re
from typing import Any

import pytest
from infra_testkit import BUNDLED_EXPERIMENTS, PROJECT, experiment, jobs, plan_for, stack_config

from infra.cluster import NODE_ROLES
from infra.plan import Plan, iter_strings, plan_stack_file
from infra.stack_files import STACKS_DIR

STACK_FILES = sorted(STACKS_DIR.glob("Pulumi.*.yaml"))
KEY_LOOKING = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----"  # a PEM private key
    r"|\"?private_key(_id)?\"?\s*:|\"type\"\s*:\s*\"service_account\""  # a service account key file
    r"|AIza[0-9A-Za-z_\-]{35}"  # a Google API key
)
DEFAULT_COMPUTE_ACCOUNT = re.compile(r"-compute@developer\.gserviceaccount\.com$|^default$")


def _experiment_plans() -> list[Any]:
    return [
        pytest.param(name, shared, id=f"{name}-{'shared' if shared else 'dedicated'}")
        for name in BUNDLED_EXPERIMENTS
        for shared in (False, True)
    ]


def _plan(name: str, shared: bool) -> Plan:
    return plan_for(stack_config(experiment(name), shared=shared))


# Every plan the guardrails look at: each bundled experiment on a dedicated and a shared cluster, each stack file.
ALL_PLANS = [
    *(
        pytest.param(("experiment", name, shared), id=f"{name}-{'shared' if shared else 'dedicated'}")
        for name in BUNDLED_EXPERIMENTS
        for shared in (False, True)
    ),
    *(pytest.param(("file", path.name, False), id=path.name) for path in STACK_FILES),
]


def _any_plan(case: tuple[str, str, bool]) -> Plan:
    kind, name, shared = case
    return _plan(name, shared) if kind == "experiment" else plan_stack_file(STACKS_DIR / name)


@pytest.mark.parametrize("path", STACK_FILES, ids=lambda p: p.name)
def test_every_committed_stack_file_plans(path: Any) -> None:
    plan = plan_stack_file(path)
    assert plan.resources


@pytest.mark.parametrize(("name", "shared"), _experiment_plans())
def test_workload_identity_binds_only_the_experiments_service_account(name: str, shared: bool) -> None:
    plan = _plan(name, shared)
    namespace = f"tfcli-{name}"
    writer = plan.outputs["writerServiceAccount"]
    (ksa,) = plan.of_type("kubernetes:core/v1:ServiceAccount")
    assert ksa.inputs["metadata"]["annotations"] == {"iam.gke.io/gcp-service-account": writer}
    assert ksa.inputs["metadata"]["namespace"] == namespace
    (binding,) = plan.of_type("gcp:serviceaccount/iAMMember:IAMMember")
    assert binding.inputs["role"] == "roles/iam.workloadIdentityUser"
    assert binding.inputs["member"] == f"serviceAccount:{PROJECT}.svc.id.goog[{namespace}/trainer]"
    assert binding.inputs["serviceAccountId"].endswith(writer)
    # The learner runs as that service account; the env workers need no cloud access and get no token at all.
    found = jobs(plan)
    assert found["learner"].inputs["spec"]["template"]["spec"]["serviceAccountName"] == "trainer"
    if "env-workers" in found:
        pod = found["env-workers"].inputs["spec"]["template"]["spec"]
        assert pod["automountServiceAccountToken"] is False and "serviceAccountName" not in pod


@pytest.mark.parametrize("case", ALL_PLANS)
def test_clusters_use_workload_identity_and_never_the_default_compute_account(case: tuple[str, str, bool]) -> None:
    plan = _any_plan(case)
    for cluster in plan.of_type("gcp:container/cluster:Cluster"):
        inputs = cluster.inputs
        assert inputs["workloadIdentityConfig"] == {"workloadPool": f"{inputs['project']}.svc.id.goog"}
        assert inputs["removeDefaultNodePool"] is True and inputs["initialNodeCount"] == 1
        assert inputs["deletionProtection"] is False
        assert inputs["addonsConfig"]["gcsFuseCsiDriverConfig"] == {"enabled": True}
        assert inputs["releaseChannel"]["channel"]
        assert cluster.options["customTimeouts"] == {"create": "45m", "update": "45m", "delete": "45m"}
    node_accounts = {
        f"{r.inputs['accountId']}@{r.inputs['project']}.iam.gserviceaccount.com"
        for r in plan.of_type("gcp:serviceaccount/account:Account")
        if r.name.endswith("-nodes")
    }
    configs = [r.inputs["nodeConfig"] for r in plan.of_type("gcp:container/cluster:Cluster")]
    configs += [r.inputs["nodeConfig"] for r in plan.of_type("gcp:container/nodePool:NodePool")]
    for config in configs:
        assert config["serviceAccount"] in node_accounts
        assert not DEFAULT_COMPUTE_ACCOUNT.search(config["serviceAccount"])
        assert config["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
        assert config["oauthScopes"] == ["https://www.googleapis.com/auth/cloud-platform"]
    roles = sorted(r.inputs["role"] for r in plan.of_type("gcp:projects/iAMMember:IAMMember"))
    assert roles == (sorted(NODE_ROLES) if node_accounts else [])


@pytest.mark.parametrize("case", ALL_PLANS)
def test_no_keys_no_project_storage_roles_and_no_secret_in_plain_sight(case: tuple[str, str, bool]) -> None:
    plan = _any_plan(case)
    assert not [r.type for r in plan.resources if "key" in r.type.lower().rsplit(":", 1)[-1]]
    for binding in plan.of_type("gcp:projects/iAMMember:IAMMember"):
        assert not binding.inputs["role"].startswith(("roles/storage", "roles/owner", "roles/editor"))
    for text in [*iter_strings([r.inputs for r in plan.resources]), *iter_strings(plan.outputs)]:
        assert not KEY_LOOKING.search(text), text[:200]
    for secret in plan.of_type("kubernetes:core/v1:Secret"):
        assert secret.inputs["stringData"] == "[secret]"


def test_the_key_detector_detects_keys() -> None:
    samples = [
        "-----BEGIN PRIVATE KEY-----\nMIIE",
        '{"type": "service_account", "project_id": "p"}',
        '"private_key_id": "abc"',
        "AIza" + "x" * 35,
    ]
    assert all(KEY_LOOKING.search(sample) for sample in samples)
    assert not KEY_LOOKING.search("nvidia.com/gpu: 1; iam.gke.io/gcp-service-account: a@b.iam.gserviceaccount.com")


@pytest.mark.parametrize("path", STACK_FILES, ids=lambda p: p.name)
def test_stack_files_hold_no_secret_or_key(path: Any) -> None:
    text = path.read_text()
    assert not KEY_LOOKING.search(text)
    assert "secure:" not in text and "transportToken" not in text
    assert "encryptionsalt" not in text and "secretsprovider" not in text


@pytest.mark.parametrize(("name", "shared"), _experiment_plans())
def test_the_results_bucket_is_private_and_writable_by_the_experiment_only(name: str, shared: bool) -> None:
    plan = _plan(name, shared)
    (bucket,) = plan.of_type("gcp:storage/bucket:Bucket")
    inputs = bucket.inputs
    assert inputs["publicAccessPrevention"] == "enforced"
    assert inputs["uniformBucketLevelAccess"] is True
    assert inputs["forceDestroy"] is True  # destroy works; `tfcli experiment stop` downloads first
    assert {"action": {"type": "Delete"}, "condition": {"age": 90}} in inputs["lifecycleRules"]
    (access,) = plan.of_type("gcp:storage/bucketIAMMember:BucketIAMMember")
    assert access.inputs == {
        "bucket": inputs["name"],
        "role": "roles/storage.objectAdmin",
        "member": f"serviceAccount:{plan.outputs['writerServiceAccount']}",
    }
    (learner,) = [j for n, j in jobs(plan).items() if n == "learner"]
    volumes = learner.inputs["spec"]["template"]["spec"]["volumes"]
    (results,) = [v for v in volumes if v["name"] == "results"]
    assert results["csi"]["driver"] == "gcsfuse.csi.storage.gke.io"
    assert results["csi"]["volumeAttributes"]["bucketName"] == inputs["name"]


def _pods(plan: Plan) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    return [(name, job.inputs["spec"], job.inputs["spec"]["template"]) for name, job in jobs(plan).items()]


@pytest.mark.parametrize(("name", "shared"), _experiment_plans())
def test_pods_run_as_non_root_unprivileged_with_requests_and_limits(name: str, shared: bool) -> None:
    for job, _spec, template in _pods(_plan(name, shared)):
        pod = template["spec"]
        security = pod["securityContext"]
        assert security["runAsNonRoot"] is True and security["runAsUser"] > 0
        assert security["seccompProfile"] == {"type": "RuntimeDefault"}
        assert not pod.get("hostNetwork") and not pod.get("hostPID") and not pod.get("hostIPC")
        assert not [v for v in pod["volumes"] if "hostPath" in v]
        for container in pod["containers"]:
            context = container["securityContext"]
            assert context["allowPrivilegeEscalation"] is False and context["privileged"] is False
            assert context["capabilities"] == {"drop": ["ALL"]}
            for kind in ("requests", "limits"):
                assert {"cpu", "memory"} <= container["resources"][kind].keys(), f"{job}: {kind}"
        annotations = template["metadata"].get("annotations", {})
        if annotations.get("gke-gcsfuse/volumes") == "true":  # the sidecar GKE injects gets bounds too
            for resource in ("cpu", "memory", "ephemeral-storage"):
                assert (
                    f"gke-gcsfuse/{resource}-limit" in annotations and f"gke-gcsfuse/{resource}-request" in annotations
                )


@pytest.mark.parametrize(("name", "shared"), _experiment_plans())
def test_jobs_pause_cleanly_and_treat_a_checkpointed_exit_as_no_failure(name: str, shared: bool) -> None:
    for job, spec, template in _pods(_plan(name, shared)):
        pod = template["spec"]
        assert pod["restartPolicy"] == "Never"  # required by podFailurePolicy
        assert pod["terminationGracePeriodSeconds"] >= 60  # time to checkpoint on SIGTERM
        assert spec["backoffLimit"] >= 1 and spec["suspend"] is False
        rules = spec["podFailurePolicy"]["rules"]
        ignored = [r for r in rules if r["action"] == "Ignore" and "onExitCodes" in r]
        assert [r["onExitCodes"]["values"] for r in ignored] == [[143]], job
        assert ignored[0]["onExitCodes"]["containerName"] == pod["containers"][0]["name"]
        assert any(r.get("onPodConditions") == [{"type": "DisruptionTarget", "status": "True"}] for r in rules)
        job_resource = jobs(_plan(name, shared))[job]
        notes = job_resource.inputs["metadata"]["annotations"]
        # Ready once created (not when complete), its deletion awaited: no skipAwait (tests/gke/fake_k8s_provider.py)
        assert notes["pulumi.com/waitFor"] == "jsonpath={.metadata.uid}" and "pulumi.com/skipAwait" not in notes
