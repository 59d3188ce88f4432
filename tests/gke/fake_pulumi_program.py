"""What the stack program declares and exports, written out for the fake ``pulumi`` (not asked of infra's Pulumi code:
tests/gke/test_fake_pulumi_program.py checks them against the real program run under Pulumi's mocks)."""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

from fake_pulumi_images import image_resources, is_image_stack
from fake_pulumi_stack import load

# What infra/program.py declares, written out here (not asked of infra): tests/gke/test_fake_pulumi_program.py
# checks these against the real program run under Pulumi's mocks (infra.plan), so the fake's "N created" is the
# program's N. Names are the experiment's, sweep's or cluster's name plus the suffix.
CLUSTER_PARTS = [
    ("tfcli:infra:GkeCluster", ""),
    ("gcp:container/cluster:Cluster", "-cluster"),
    *[("gcp:projects/iAMMember:IAMMember", f"-nodes-{role}") for role in (
        "artifactregistry-reader", "logging-logwriter", "monitoring-metricwriter", "monitoring-viewer",
        "stackdriver-resourcemetadata-writer")],
    ("gcp:serviceaccount/account:Account", "-nodes"),
    ("tfcli:infra:NodePools", ""),
    ("gcp:container/nodePool:NodePool", "-cpu-pool"),
    ("gcp:container/nodePool:NodePool", "-learner-pool"),
]  # fmt: skip
SHARED_CLUSTER_PARTS = [("pulumi:pulumi:StackReference", "-cluster-stack")]
BUCKET_PARTS = [
    ("tfcli:infra:ResultsBucket", ""),
    ("gcp:serviceaccount/account:Account", "-writer"),
    ("gcp:storage/bucket:Bucket", "-bucket"),
    ("gcp:storage/bucketIAMMember:BucketIAMMember", "-writer-access"),
]


def workload_parts(sweep: bool) -> list[tuple[str, str]]:
    return [
        ("tfcli:infra:Workloads", ""),
        ("gcp:serviceaccount/iAMMember:IAMMember", "-workload-identity"),
        ("kubernetes:batch/v1:Job", "-job-trials" if sweep else "-job-learner"),
        ("kubernetes:core/v1:ConfigMap", "-configmap-sweep-trials" if sweep else "-configmap-experiment-spec"),
        ("kubernetes:core/v1:Namespace", "-namespace"),
        ("kubernetes:core/v1:ServiceAccount", "-serviceaccount-trainer"),
        ("pulumi:providers:kubernetes", "-k8s"),
    ]


def program_resources(config: dict[str, Any]) -> list[tuple[str, str]]:
    """(type, name) of what the stack program declares for this config (the engine's own two are not in it)."""
    if is_image_stack(config):  # infra/image_program.py: names of their own
        return image_resources(config)
    experiment = config.get("tfcli:experiment")
    sweep = config.get("tfcli:sweep")
    if experiment is None and sweep is None:
        name = mapping(config["tfcli:cluster"])["name"]
        parts = CLUSTER_PARTS
    else:
        name = mapping(sweep)["name"] if sweep is not None else mapping(experiment)["name"]
        cluster = SHARED_CLUSTER_PARTS if config.get("tfcli:sharedClusterStack") else CLUSTER_PARTS
        parts = cluster + BUCKET_PARTS + workload_parts(sweep is not None)
        if config.get("tfcli:imageStack") and not config.get("tfcli:image"):  # the built trainer's digests
            parts = [*parts, ("pulumi:pulumi:StackReference", "-image-stack")]
    return [(type_, f"{name}{suffix}") for type_, suffix in parts]


def resources_for(stack: str, config: dict[str, Any]) -> list[tuple[str, str]]:
    """(type, name) of what an ``up`` reports: the engine's stack and default provider, then the program's."""
    return [("pulumi:pulumi:Stack", f"tfcli-{stack}"), ("pulumi:providers:gcp", "default_10_2_0"),
            *program_resources(config)]  # fmt: skip


def bucket_for(name: str, project: str) -> str:
    """The results bucket's name by infra/naming.py's rule written out again for the names tests use (short and
    without "google"), so that a change to the rule is caught instead of followed."""
    assert len(name) <= 48 and "google" not in name, f"the fake names buckets of short names only, not {name!r}"
    return f"tfcli-{name}-{hashlib.sha256(project.encode()).hexdigest()[:8]}"


def urn(stack: str, type_: str, name: str) -> str:
    return f"urn:pulumi:{stack}::tfcli::{type_}::{name}"


def mapping(value: Any) -> dict[str, Any]:
    return json.loads(value) if isinstance(value, str) else dict(value or {})


def outputs_for(stack: str, config: dict[str, Any]) -> dict[str, Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

    project = str(config.get("gcp:project", ""))
    location = str(config.get("gcp:zone") or config.get("gcp:region") or "")
    if "tfcli:cluster" in config:
        cluster = mapping(config["tfcli:cluster"])
        return {
            "clusterName": cluster["name"],
            "endpoint": "203.0.113.10",
            "clusterCaCertificate": base64.b64encode(
                b"-----BEGIN CERTIFICATE-----\nfake\n-----END CERTIFICATE-----\n"
            ).decode(),
            "project": project,
            "location": cluster.get("location") or location,
            "nodeServiceAccount": f"{cluster['name']}-nodes@{project}.iam.gserviceaccount.com",
            "nodePools": {"learner": "learner", "cpu": "cpu"},
            "gpuType": cluster.get("gpu_type", ""),
            "gpusPerNode": cluster.get("gpus_per_node", 0),
        }
    sweep = mapping(config["tfcli:sweep"]) if "tfcli:sweep" in config else None
    experiment = mapping(sweep["base"] if sweep is not None else config["tfcli:experiment"])
    name = sweep["name"] if sweep is not None else experiment["name"]
    shared = config.get("tfcli:sharedClusterStack")
    buckets = load("control.json", {}).get("buckets", {})
    bucket = buckets.get(stack) or bucket_for(name, project)
    # The program's image outputs (read by nothing in tfcli): the -cpu variant, right for the CPU learners tests use.
    region = location.rsplit("-", 1)[0] if location.count("-") == 2 else location
    image = f"{region}-docker.pkg.dev/{project}/tfcli/trainer:{version('tfcli')}-cpu"
    if config.get("tfcli:imageStack") and not config.get("tfcli:image"):  # tagged by the context it was built from
        from infra.image_choice import current_context

        image = f"{region}-docker.pkg.dev/{project}/tfcli/trainer:{current_context()}-cpu"
    outputs = {
        "clusterName": shared or name,
        "clusterLocation": (experiment.get("cluster") or {}).get("location") or location,
        "namespace": f"tfcli-{name}",
        "jobs": ["learner-0123456789"],  # named learner-<digest of the spec>, as infra/workloads.py names them
        "bucket": bucket,
        "resultsUrl": f"gs://{bucket}/{name}/",
        "suspended": str(config.get("tfcli:suspend", False)).lower() == "true",
        "writerServiceAccount": f"{name}-results@{project}.iam.gserviceaccount.com",
        "image": image,
    }
    if sweep is None:
        outputs.update({"experiment": name, "runMode": experiment.get("run_mode", "single"),
                        "workerImage": image})  # fmt: skip
    else:  # infra/sweep_program.py: its trials (NAME-0 ..) and the Indexed Job's parallelism, as the program reads them
        from infra.sweep_config import sweep_settings_from_config
        from infra.sweep_manifests import has_workers, slot_trials

        settings = sweep_settings_from_config(config, stack=stack)
        trials = [trial.name for trial in settings.trials]
        outputs.update({"sweep": name, "trials": trials, "parallelism": min(settings.parallelism, len(trials)),
                        "jobs": ["trials-0123456789"], "rerun": settings.rerun,
                        "slots": slot_trials(len(trials), settings.held),
                        "workers": has_workers(settings.trials)})  # fmt: skip
    if shared:
        outputs["sharedClusterStack"] = shared
    outputs.update(load("control.json", {}).get("extra_outputs", {}).get(stack, {}))  # e.g. a kubeconfig
    return outputs
