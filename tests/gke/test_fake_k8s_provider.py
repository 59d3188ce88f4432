"""The fake ``pulumi``'s pulumi-kubernetes (tests/gke/fake_k8s_provider.py) against what pulumi-kubernetes 4.x's source
says (read at 94977969): ``provider/pkg/provider/diff.go`` (force-new fields), ``provider.go`` ``Diff`` (delete before
replace), ``await/await.go`` (``Creation`` retries neither AlreadyExists nor anything but NotFound/NoMatch;
``Deletion``) and ``metadata/overrides.go`` (``ReadyCondition``, ``DeletedCondition``, ``allowsSkipAwaitWithDelete``).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from fake_k8s_provider import Cluster, Refused, delete_before_replace, replaces

GRACE = 120


def job(name: str = "trials-aaaa", *, notes: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    annotations = {"tfcli/job": "trials", **(notes if notes is not None else {"pulumi.com/skipAwait": "true"})}
    template = {"metadata": {"annotations": {}}, "spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds":
                GRACE, "containers": [{"name": "trial", "image": "trainer:1"}]}}  # fmt: skip
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "tfcli-s", "annotations": annotations},
        "spec": {"completions": 4, "parallelism": 2, "suspend": False, "template": template, **spec},
    }


def config_map(data: dict[str, str]) -> dict[str, Any]:
    meta = {"name": "sweep-trials", "namespace": "tfcli-s", "annotations": {"pulumi.com/skipAwait": "true"}}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


def deployed(*objects: dict[str, Any], now: float = 1000.0) -> Cluster:
    cluster = Cluster({}, [], now=now)
    cluster.apply(list(objects))
    cluster.log.clear()
    return cluster


def test_a_jobs_force_new_fields_are_completions_parallelism_selector_and_template() -> None:
    old = job()
    assert replaces(old, job(parallelism=3)) == [".spec.parallelism"]
    assert replaces(old, job(completions=5)) == [".spec.completions"]
    assert replaces(old, job(suspend=True)) == []  # suspend is updated in place
    changed = copy.deepcopy(old)
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "trainer:2"
    assert replaces(old, changed) == [".spec.template"]
    assert replaces(old, job("trials-bbbb")) == [".metadata.name"]


def test_a_new_parallelism_replaces_the_job_under_its_name_and_the_create_fails_409_behind_skip_await() -> None:
    cluster = deployed(job())
    with pytest.raises(Refused, match=r'object is being deleted: jobs\.batch "trials-aaaa" already exists'):
        cluster.apply([job(parallelism=3)])
    # Deleted first (named, same name), not awaited: the old Job and its pods linger; the create was not retried.
    assert [(step["op"], step.get("awaited")) for step in cluster.log] == [("delete", False)]
    assert cluster.lingering == [{"kind": "Job", "namespace": "tfcli-s", "name": "trials-aaaa", "until": 1000 + GRACE}]
    assert cluster.objects == {}  # the state keeps what was done: the old Job is gone from it


def test_suspend_is_an_update_in_place() -> None:
    cluster = deployed(job())
    assert cluster.apply([job(suspend=True)]) == {"job-trials": "update"}
    assert cluster.objects["job-trials"]["spec"]["suspend"] is True and cluster.lingering == []


def test_a_renamed_job_replaces_the_old_one_which_lingers_with_its_pods_beside_the_new_one() -> None:
    cluster = deployed(job())
    assert cluster.apply([job("trials-bbbb")]) == {"job-trials": "replace"}  # the program's deleteBeforeReplace
    assert [(step["op"], step["name"]) for step in cluster.log] == [
        ("delete", "trials-aaaa"),
        ("create", "trials-bbbb"),
    ]
    assert [entry["name"] for entry in cluster.lingering] == ["trials-aaaa"]
    later = Cluster(cluster.objects, cluster.lingering, now=1000 + GRACE + 1)  # its pods' grace period is over
    assert later.lingering == []


def test_without_skip_await_the_delete_is_awaited_and_wait_for_replaces_the_jobs_awaiter() -> None:
    awaited = {"pulumi.com/waitFor": "jsonpath={.metadata.uid}"}
    cluster = deployed(job(notes=awaited))
    assert cluster.apply([job(notes=awaited, parallelism=3)]) == {"job-trials": "replace"}
    assert [(step["op"], step.get("awaited")) for step in cluster.log] == [("delete", True), ("create", None)]
    assert cluster.lingering == [] and cluster.objects["job-trials"]["spec"]["parallelism"] == 3


def test_a_job_without_skip_await_or_wait_for_waits_for_complete_and_the_up_times_out() -> None:
    with pytest.raises(Refused, match="Job has not completed"):
        Cluster({}, []).apply([job(notes={})])


def test_wait_for_jsonpath_and_condition_against_the_job_as_created() -> None:
    Cluster({}, []).apply([job(notes={"pulumi.com/waitFor": "jsonpath={.status.startTime}"})])
    suspended = job(notes={"pulumi.com/waitFor": "jsonpath={.status.startTime}"}, suspend=True)
    with pytest.raises(Refused, match="timed out waiting for"):  # a Job created suspended has not started
        Cluster({}, []).apply([suspended])
    both = '["condition=Suspended", "jsonpath={.metadata.uid}"]'  # a JSON list: all must hold
    Cluster({}, []).apply([job(notes={"pulumi.com/waitFor": both}, suspend=True)])


def test_a_config_maps_new_data_replaces_it_deleting_first_and_awaited_whatever_its_annotations() -> None:
    cluster = deployed(config_map({"trial-0.yaml": "a"}))
    assert cluster.apply([config_map({"trial-0.yaml": "b"})]) == {"configmap-sweep-trials": "replace"}
    assert [(step["op"], step.get("awaited")) for step in cluster.log] == [("delete", True), ("create", None)]
    assert cluster.lingering == []  # skipAwait on delete is honoured for the legacy kinds only


def test_delete_before_replace_when_the_name_is_kept_or_the_program_asks() -> None:
    old = config_map({"a": "1"})
    autonamed = config_map({"a": "2"})
    autonamed["metadata"]["name"] = ""  # generateName: Diff does not ask to delete first
    assert not delete_before_replace(old, autonamed, program_asks=False)
    assert delete_before_replace(old, config_map({"a": "2"}), program_asks=False)
    assert not delete_before_replace(job(), job("trials-bbbb"), program_asks=False)
    assert delete_before_replace(job(), job("trials-bbbb"), program_asks=True)  # infra/workloads.py asks for Jobs
