"""The review findings on how the planned objects relate over a stack's life (see ``test_cross_objects``).

The Workload Identity binding waits for the cluster, a changed spec replaces the Jobs safely, the kubeconfig uses
Application Default Credentials, ``pulumi destroy`` removes the bucket only after the pods writing it are gone, and
the env workers' addresses are valid DNS labels.
"""

from __future__ import annotations

import re

import pytest
import yaml
from infra_testkit import (
    PROJECT,
    ZONE,
    check_worker_dns,
    experiment,
    jobs,
    objects_of,
    plan_for,
    stack_config,
)

from infra.manifests import build_manifests, context_for
from infra.plan import Plan, PlannedResource


def test_the_workload_identity_binding_waits_for_the_cluster_that_creates_the_pool() -> None:
    spec = experiment("space-invaders-dqn")
    plan = plan_for(stack_config(spec))
    binding = plan.named(f"{spec.name}-workload-identity")
    assert f"{spec.name}-cluster" in binding.depends_on  # "Identity Pool does not exist" on a project's first up
    assert f"{spec.name}-cluster" not in plan.named(f"{spec.name}-bucket").dependencies  # explicit, not incidental
    shared = plan_for(stack_config(spec, shared=True))
    assert not shared.of_type("gcp:container/cluster:Cluster")  # the shared stack's cluster made the pool already


def _job_names(plan: Plan) -> dict[str, str]:
    return {role: job.inputs["metadata"]["name"] for role, job in jobs(plan).items()}


def test_a_changed_spec_or_worker_count_replaces_the_jobs_under_new_names_old_first() -> None:
    base = experiment("space-invaders-dqn")
    before = plan_for(stack_config(base))
    for change in ({"total_timesteps": 2_000_000}, {"num_workers": 5}):
        after = plan_for(stack_config(experiment("space-invaders-dqn", **change)))
        old, new = _job_names(before), _job_names(after)
        assert old.keys() == new.keys() == {"learner", "env-workers"}
        for role in old:
            assert old[role] != new[role], f"{change}: {role} keeps its name, so its replacement meets the old Job"
            # The same Pulumi resource (a replacement, not an addition), deleted before its successor is created.
            previous, job = jobs(before)[role], jobs(after)[role]
            assert previous.name == job.name and job.options["deleteBeforeReplace"]
        objects = objects_of(after, experiment("space-invaders-dqn", **change))
        assert check_worker_dns(objects) == (change.get("num_workers") or base.num_workers)
    paused = plan_for(stack_config(base, **{"tfcli:suspend": True}))
    assert _job_names(paused) == _job_names(before)  # pausing is no new Job
    retagged = plan_for(stack_config(base, **{"tfcli:image": "ghcr.io/me/trainer:dev"}))
    assert _job_names(retagged)["learner"] != _job_names(before)["learner"]  # a new image is a new template too


@pytest.mark.parametrize("shared", [False, True], ids=["dedicated", "shared"])
def test_the_kubeconfig_authenticates_with_application_default_credentials(shared: bool) -> None:
    spec = experiment("space-invaders-dqn")
    plan = plan_for(stack_config(spec, shared=shared))
    for text in (plan.named(f"{spec.name}-k8s").inputs["kubeconfig"], plan.outputs["kubeconfig"]):
        (user,) = yaml.safe_load(text)["users"]
        assert user["user"]["exec"]["command"] == "gke-gcloud-auth-plugin"
        assert user["user"]["exec"]["args"] == ["--use_application_default_credentials"]


def _reaches(plan: Plan, start: PlannedResource, target: str) -> bool:
    by_name = {r.name: r for r in plan.resources}
    seen, stack = set(), [start.name]
    while stack:
        name = stack.pop()
        if name == target:
            return True
        if name not in seen and name in by_name:
            seen.add(name)
            stack += list(by_name[name].dependencies)
    return False


@pytest.mark.parametrize("shared", [False, True], ids=["dedicated", "shared"])
def test_destroy_deletes_the_bucket_only_after_the_pods_writing_it_are_gone(shared: bool) -> None:
    spec = experiment("space-invaders-dqn")
    plan = plan_for(stack_config(spec, shared=shared))
    namespace = plan.named(f"{spec.name}-namespace")
    bucket = plan.named(f"{spec.name}-bucket")
    # Destroy runs in reverse dependency order: Jobs, then the namespace — awaited (no skipAwait), so until its pods,
    # the learner writing its SIGTERM checkpoint through FUSE among them, are gone — and only then bucket and binding.
    assert {bucket.name, f"{spec.name}-writer-access"} <= set(namespace.depends_on)
    assert "pulumi.com/skipAwait" not in namespace.inputs["metadata"].get("annotations", {})
    for job in jobs(plan).values():
        assert namespace.name in job.dependencies
    assert bucket.inputs["forceDestroy"] is True  # what is left in it goes with it (stop downloads first)
    assert _reaches(plan, namespace, bucket.name)


def test_worker_addresses_are_short_enough_for_dns() -> None:
    spec = experiment("space-invaders-dqn", num_workers=64)
    objects = build_manifests(spec, context_for(spec, project=PROJECT, location=ZONE), token="t")
    learner = objects[-1]["spec"]["template"]["spec"]["containers"][0]["args"]
    for address in learner[learner.index("--workers") + 1].split(","):
        hostname = address.split(".", 1)[0]
        assert re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", hostname)  # an RFC 1123 label, as pods need
