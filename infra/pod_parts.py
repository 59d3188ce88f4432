"""What every pod and Job of a run shares, whichever manifests build them (an experiment's in :mod:`infra.manifests`,
a sweep's in :mod:`infra.sweep_manifests`): the context they are built in, security, the failure policy that reads the
trainer's exit codes, the spec volume, and how a Job is named after a digest of what it runs."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from infra import naming
from infra.code_bundle import ARGS as CODE_ARGS
from infra.code_bundle import CODE_DIGEST, CodeBundle
from infra.code_bundle import MOUNT as CODE_MOUNT
from trainer.kernel.budget import START_ALLOWANCE_SECONDS
from trainer.kernel.spec import Experiment, to_yaml
from trainer.kernel.spec.early_stop import METADATA_TTL_SECONDS
from trainer.kernel.spec.outcomes import EXIT_COST_LIMIT, EXIT_INVALID, EXIT_PAUSED

RUN_AS_USER = 1000
GRACE_SECONDS = 120
HOURLY_PRICE_ENV = "TFCLI_HOURLY_PRICE"  # the run's $/hour, for the trainer's max_cost (infra/run_price.py)
START_ALLOWANCE_ENV = "TFCLI_START_ALLOWANCE_SECONDS"  # node time per start max_cost counts (trainer/kernel/budget.py)
GCS_FUSE_DRIVER = "gcsfuse.csi.storage.gke.io"
# The results volume's gcsfuse options (the CSI driver passes ``mountOptions`` to gcsfuse; a config-file key is
# written ``section:key:value``, GKE docs "Cloud Storage FUSE CSI driver: mount options"). The metadata cache TTL is
# set explicitly (gcsfuse's default is 60 s): the trials of an early-stopped sweep read each other's rung scores
# through it and recheck no sooner than it (trainer/kernel/spec/early_stop.py, trainer/hooks/early_stop.py).
RESULTS_MOUNT_OPTIONS = (
    f"implicit-dirs,metadata-cache:ttl-secs:{METADATA_TTL_SECONDS},uid={RUN_AS_USER},gid={RUN_AS_USER}"
)

ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
# The labels GKE puts on the nodes of a pool whose GPUs are shared (GKE docs "About GPU sharing strategies":
# time-sharing and NVIDIA MPS); a pod selecting them lands only where its GPU is a share of this kind and size.
SHARING_STRATEGY_LABEL = "cloud.google.com/gke-gpu-sharing-strategy"
SHARED_CLIENTS_LABEL = "cloud.google.com/gke-max-shared-clients-per-gpu"
# How pulumi-kubernetes awaits a Job (provider/pkg/metadata/overrides.go): without an override it waits for the Job
# to *complete* (hours). ``pulumi.com/waitFor`` replaces that wait: ready once the API server has the Job (it has a
# uid). Not ``pulumi.com/skipAwait``: on a Job that also skips awaiting its *deletion*, so a replaced Job's pods (their
# 120 s grace to checkpoint) would still run beside the new Job's on the same results folders. Deletion is
# foreground: awaited until the old Job's pods are gone.
JOB_AWAIT = {"pulumi.com/waitFor": "jsonpath={.metadata.uid}"}
# A digest of the spec on each pod template: editing the spec replaces the Jobs (pod templates are immutable), and
# the new pods resume from the last checkpoint with the new spec; pausing (suspend) changes no template.
SPEC_DIGEST = "tfcli/spec-sha256"
# Jobs are named ``<role>-<digest of the Job spec without suspend>``: a changed spec, image, num_workers or parallelism
# gives new names (pulumi-kubernetes replaces a Job whose parallelism, completions or template changes), so the
# replacement never needs the old Job's name. The role stays on this annotation (and the Pulumi resource name).
JOB_ROLE = "tfcli/job"
JOB_DIGEST_LENGTH = 8
MUTABLE_JOB_FIELDS = ("suspend",)  # what pulumi-kubernetes updates in place (its diff.go force-new list)

# The GCS FUSE sidecar GKE injects (it writes checkpoints; staging needs local disk): its requests are counted in
# infra.sizing.FUSE_SIDECAR_REQUESTS.
FUSE_SIDECAR = {
    "gke-gcsfuse/cpu-request": "250m",
    "gke-gcsfuse/cpu-limit": "1",
    "gke-gcsfuse/memory-request": "256Mi",
    "gke-gcsfuse/memory-limit": "1Gi",
    "gke-gcsfuse/ephemeral-storage-request": "1Gi",
    "gke-gcsfuse/ephemeral-storage-limit": "10Gi",
}


@dataclass(frozen=True)
class ManifestContext:
    """What the manifests need besides the experiment: where they go and what they run."""

    namespace: str
    image: str
    worker_image: str
    bucket: str
    service_account_email: str
    suspend: bool = False
    token_secret: str = naming.TOKEN_SECRET
    hourly_price: float | None = None  # set only with max_cost: the learner's TFCLI_HOURLY_PRICE
    code: CodeBundle | None = None  # the project's code folders, shipped in a ConfigMap (infra/code_bundle.py)


def code_args(ctx: ManifestContext) -> list[str]:
    """``--code /opt/tfcli/code`` when the run ships code: the trainer imports the user's environments from there."""
    return list(CODE_ARGS) if ctx.code is not None else []


def with_code(ctx: ManifestContext, template: dict[str, Any]) -> dict[str, Any]:
    """A pod template that mounts the shipped code read-only and carries its digest (new code: a new Job name)."""
    if ctx.code is None:
        return template
    template["metadata"]["annotations"][CODE_DIGEST] = ctx.code.digest
    pod = template["spec"]
    pod["volumes"].append(ctx.code.volume())
    for container in pod["containers"]:
        container["volumeMounts"].append(dict(CODE_MOUNT))
    return template


def pod_security() -> dict[str, Any]:
    return {
        "runAsNonRoot": True,
        "runAsUser": RUN_AS_USER,
        "runAsGroup": RUN_AS_USER,
        "fsGroup": RUN_AS_USER,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def container_security() -> dict[str, Any]:
    return {
        "runAsNonRoot": True,
        "allowPrivilegeEscalation": False,
        "privileged": False,
        "capabilities": {"drop": ["ALL"]},
    }


RETRIES = 6  # failures (not ignored) a run survives: an experiment's learner Job, or each trial of a sweep's Job


def failure_policy(container: str, *, per_index: bool = False) -> dict[str, Any]:
    """How the Job controller reads the trainer's exit codes (docs/gke.md, "What an exit code does").

    Exit 2 (an invalid spec does not get better by retrying) and 3 (the run paused itself at ``max_cost``: nothing is
    to start it again) end the run at once: ``FailJob`` for an experiment's Job, ``FailIndex`` for a sweep's Indexed
    Job (``per_index``), where ``FailJob`` would end every other trial too. A sweep's trial at ``max_cost`` exits 0
    instead (``--output-parent``, :data:`trainer.results.TRIAL_COST_LIMIT_EXIT_CODE`), so that trials at their limit
    are no failed indexes; 3 stays ``FailIndex`` for a trainer image older than that. Exit 143 (the trainer
    checkpointed after SIGTERM: a pause, a spot reclaim, a drain) and pod disruptions are ignored: the pod is
    replaced without counting against the retries. Any other failure (a crash, an OOM kill) counts:
    ``backoffLimit`` for the Job, or ``backoffLimitPerIndex`` for each trial.
    """
    return {
        "rules": [
            {
                "action": "FailIndex" if per_index else "FailJob",
                "onExitCodes": {
                    "containerName": container,
                    "operator": "In",
                    "values": [EXIT_INVALID, EXIT_COST_LIMIT],
                },
            },
            {
                "action": "Ignore",
                "onExitCodes": {"containerName": container, "operator": "In", "values": [EXIT_PAUSED]},
            },
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
        ]
    }


def token_env(ctx: ManifestContext) -> list[dict[str, Any]]:
    return [
        {"name": "TRAINER_TOKEN", "valueFrom": {"secretKeyRef": {"name": ctx.token_secret, "key": naming.TOKEN_KEY}}}
    ]


def price_env(ctx: ManifestContext) -> list[dict[str, Any]]:
    """The learner's price and, with it, the node time per start that ``max_cost`` counts beside training time (the
    kernel's one figure, trainer/kernel/budget.py): a run on GKE starts and leaves a node each time its pod starts."""
    if ctx.hourly_price is None:
        return []
    return [
        {"name": HOURLY_PRICE_ENV, "value": f"{ctx.hourly_price:.4f}"},
        {"name": START_ALLOWANCE_ENV, "value": str(START_ALLOWANCE_SECONDS)},
    ]


SPEC_MOUNT = {"name": "spec", "mountPath": naming.SPEC_DIR, "readOnly": True}
SPEC_VOLUME = {
    "name": "spec",
    "configMap": {"name": naming.SPEC_CONFIG_MAP, "items": [{"key": naming.SPEC_FILE, "path": naming.SPEC_FILE}]},
}
SPEC_ARGS = ["--spec", f"{naming.SPEC_DIR}/{naming.SPEC_FILE}"]


def gpu_sharing_selector(experiment: Experiment) -> dict[str, str]:
    """The node selector of a learner that asks for a share of a GPU (``nvidia.com/gpu: 1`` is then one share, as
    GKE requires of shared GPUs); empty when its cluster does not share GPUs."""
    cluster = experiment.cluster
    sharing = cluster.gpu_sharing if cluster is not None else None
    if sharing is None:
        return {}
    return {SHARING_STRATEGY_LABEL: sharing.strategy, SHARED_CLIENTS_LABEL: str(sharing.clients_per_gpu)}


def spec_digest(experiment: Experiment) -> str:
    return hashlib.sha256(to_yaml(experiment).encode()).hexdigest()[:16]


def cpu_learner_affinity() -> dict[str, Any]:
    def pools(*names: str) -> dict[str, Any]:
        return {"matchExpressions": [{"key": naming.POOL_LABEL, "operator": "In", "values": list(names)}]}

    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [pools(naming.LEARNER_POOL, naming.CPU_POOL)]
            },
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "preference": pools(naming.LEARNER_POOL)}
            ],
        }
    }


def job_digest(job: dict[str, Any]) -> str:
    """A digest of what the Job runs: its spec without ``suspend`` (pausing is no new Job). ``parallelism`` is in it:
    pulumi-kubernetes replaces a Job whose parallelism changes, deleting it first when it keeps its name — and the
    create under that name would meet the old Job still being deleted (409 AlreadyExists, not retried)."""
    spec = {key: value for key, value in job["spec"].items() if key not in MUTABLE_JOB_FIELDS}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:JOB_DIGEST_LENGTH]


def named_job(job: dict[str, Any], role: str) -> dict[str, Any]:
    job["metadata"]["name"] = f"{role}-{job_digest(job)}"
    job["metadata"]["annotations"][JOB_ROLE] = role
    return job


def job_role(obj: Mapping[str, Any]) -> str:
    """A Job's role (``learner``, ``env-workers``): its name without the digest."""
    return str(obj["metadata"]["annotations"][JOB_ROLE])


def worker_addresses(workers_job: str, num_workers: int) -> list[str]:
    """``host:port`` of each env worker: indexed pod ``i`` of ``workers_job`` is ``<job>-<i>.<service>``."""
    return [f"{workers_job}-{index}.{naming.WORKERS_SERVICE}:{naming.WORKER_PORT}" for index in range(num_workers)]
