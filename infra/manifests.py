"""The one manifest builder: an Experiment (+ a small context) -> the Kubernetes objects that run it.

Both the stack program (``workloads.py`` declares one Pulumi resource per object returned here) and ``render``
(``tfcli experiment render``) call :func:`build_manifests`, so what is rendered offline is what is deployed. The only
difference is the transport token: ``render`` writes a token it generates (or the one given), the program a secret
Pulumi output.

What runs (docs/design.md §11):

- single and multi-threaded: one Job, ``learner``: ``python -m trainer run --spec ... --output /results/<name>``.
- distributed: the ``learner`` Job (with ``--workers``) + an indexed Job ``env-workers`` (``completionMode:
  Indexed``, parallelism = completions = ``num_workers``) behind the headless Service ``env-workers``, so worker
  ``i`` is ``env-workers-<digest>-<i>.env-workers:7000``; a Secret holds the transport token (env ``TRAINER_TOKEN``).

Job names are ``<role>-<digest>``, the digest of what the Job runs (its spec without ``suspend``): a changed spec,
image or ``num_workers`` is a Job of a new name, which the program declares as a replacement of the same Pulumi
resource, deleted before its successor is created (see ``JOB_ROLE``).

Every Job: ``suspend`` (pause/resume), ``restartPolicy: Never`` with a podFailurePolicy that ignores exit code 143
(the trainer checkpointed after SIGTERM: a pause, a spot reclaim or a node drain — not a failure) and pod
disruptions, and fails the Job at once on exit code 2 (an invalid spec does not get better by retrying) and 3 (the
trainer paused itself at the experiment's ``max_cost``: nothing is to start it again); 120 s of
grace to checkpoint; non-root, no privilege escalation, all capabilities dropped, RuntimeDefault seccomp; requests
and limits on every container (the injected GCS FUSE sidecar's through its annotations).

Results: the experiment's bucket is mounted at ``/results`` through the GKE Cloud Storage FUSE CSI driver (an
ephemeral CSI volume; pod annotation ``gke-gcsfuse/volumes: "true"``). The trainer marks a finished checkpoint with
a completion-marker file instead of renaming a directory (FUSE has no atomic directory rename), so a checkpoint cut
short by preemption is never taken for a good one.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from infra import naming
from infra.code_bundle import CODE_CONFIG_MAP, CodeBundle
from infra.image_choice import run_images
from infra.pod_parts import (
    ACCELERATOR_LABEL,
    FUSE_SIDECAR,
    GCS_FUSE_DRIVER,
    GRACE_SECONDS,
    JOB_AWAIT,
    RESULTS_MOUNT_OPTIONS,
    RETRIES,
    SPEC_ARGS,
    SPEC_DIGEST,
    SPEC_MOUNT,
    SPEC_VOLUME,
    ManifestContext,
    code_args,
    container_security,
    cpu_learner_affinity,
    failure_policy,
    gpu_sharing_selector,
    named_job,
    pod_security,
    price_env,
    spec_digest,
    token_env,
    with_code,
    worker_addresses,
)
from infra.sizing import GPU_RESOURCE, WORKER_RESOURCES, learner_gpus, learner_resources
from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec import Experiment, to_yaml


def context_for(
    experiment: Experiment,
    *,
    project: str,
    location: str,
    image: str | None = None,
    image_stack: str | None = None,
    suspend: bool = False,
    hourly_price: float | None = None,
    code: CodeBundle | None = None,
) -> ManifestContext:
    """The context the stack program uses for ``experiment`` (names from :mod:`infra.naming`). The image: the
    cluster spec's ``image``, else ``image`` (``tfcli:image``, from tfcli.yaml), else the one ``image_stack`` built,
    else tfcli's own (§11; :mod:`infra.image_choice`)."""
    learner, worker = run_images(
        chosen=(experiment.cluster.image if experiment.cluster else None) or image,
        image_stack=image_stack,
        project=project,
        location=location,
        gpu=learner_gpus(experiment) > 0,
    )
    return ManifestContext(
        namespace=naming.namespace(experiment.name),
        image=learner,
        worker_image=worker,
        bucket=naming.bucket_name(experiment.name, project),
        service_account_email=naming.service_account_email(naming.writer_account_id(experiment.name), project),
        suspend=suspend,
        hourly_price=hourly_price,
        code=code,
    )


def _labels(experiment: Experiment, component: str | None = None) -> dict[str, str]:
    labels = {"app.kubernetes.io/name": "tfcli", "app.kubernetes.io/instance": experiment.name}
    if component:
        labels["app.kubernetes.io/component"] = component
    return labels


def _meta(name: str, ctx: ManifestContext, labels: Mapping[str, str], **extra: Any) -> dict[str, Any]:
    return {"name": name, "namespace": ctx.namespace, "labels": dict(labels), **extra}


def learner_job(experiment: Experiment, ctx: ManifestContext, workers_job: str | None) -> dict[str, Any]:
    distributed = experiment.run_mode == "distributed"
    args = ["run", *SPEC_ARGS, "--output", naming.results_path(experiment.name), *code_args(ctx)]
    if distributed:
        assert workers_job is not None
        args += ["--workers", ",".join(worker_addresses(workers_job, experiment.num_workers))]
    labels = _labels(experiment, "learner")
    pod: dict[str, Any] = {
        "serviceAccountName": naming.RUNNER_SERVICE_ACCOUNT,
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": GRACE_SECONDS,
        "securityContext": pod_security(),
        "containers": [
            {
                "name": "learner",
                "image": ctx.image,
                "imagePullPolicy": "IfNotPresent",
                "args": args,
                "env": [
                    {"name": "PYTHONUNBUFFERED", "value": "1"},
                    *(token_env(ctx) if distributed else []),
                    *price_env(ctx),
                ],
                # A failed container's last log lines (the trainer's "error: ..." line) become its termination
                # message, which `experiment status` shows (tfcli/gke/pod_states.py).
                "terminationMessagePolicy": "FallbackToLogsOnError",
                "resources": learner_resources(experiment),
                "securityContext": container_security(),
                "volumeMounts": [SPEC_MOUNT, {"name": "results", "mountPath": naming.RESULTS_DIR}],
            }
        ],
        "volumes": [
            SPEC_VOLUME,
            {
                "name": "results",
                "csi": {
                    "driver": GCS_FUSE_DRIVER,
                    "volumeAttributes": {
                        "bucketName": ctx.bucket,
                        "mountOptions": RESULTS_MOUNT_OPTIONS,
                    },
                },
            },
        ],
    }
    if learner_gpus(experiment) and experiment.cluster and experiment.cluster.gpu_type:
        pod["nodeSelector"] = {
            naming.POOL_LABEL: naming.LEARNER_POOL,
            ACCELERATOR_LABEL: experiment.cluster.gpu_type,
            **gpu_sharing_selector(experiment),
        }
        # GKE taints GPU nodes nvidia.com/gpu=present:NoSchedule when the cluster has a non-GPU pool (ours always
        # does); its ExtendedResourceToleration admission adds this too — written out so the manifest says it.
        pod["tolerations"] = [{"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}]
    else:
        # A CPU learner prefers the learner pool and may use the CPU pool: on a shared GPU cluster the learner pool's
        # GPU taint keeps it off the GPUs, and it runs on the CPU pool instead of waiting forever.
        pod["affinity"] = cpu_learner_affinity()
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": _meta(naming.LEARNER_JOB, ctx, labels, annotations=dict(JOB_AWAIT)),
        "spec": {
            "suspend": ctx.suspend,
            "backoffLimit": RETRIES,
            "podFailurePolicy": failure_policy("learner"),
            "template": with_code(
                ctx,
                {
                    "metadata": {
                        "labels": labels,
                        "annotations": {
                            SPEC_DIGEST: spec_digest(experiment),
                            "gke-gcsfuse/volumes": "true",
                            **FUSE_SIDECAR,
                        },
                    },
                    "spec": pod,
                },
            ),
        },
    }
    return named_job(job, naming.LEARNER_JOB)


def _workers_job(experiment: Experiment, ctx: ManifestContext) -> dict[str, Any]:
    labels = _labels(experiment, "env-worker")
    workers = experiment.num_workers
    args = ["env-worker", *SPEC_ARGS, "--port", str(naming.WORKER_PORT), "--host", "0.0.0.0", *code_args(ctx)]
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": _meta(naming.WORKERS_JOB, ctx, labels, annotations=dict(JOB_AWAIT)),
        "spec": {
            "suspend": ctx.suspend,
            "completionMode": "Indexed",
            "completions": workers,
            "parallelism": workers,
            "backoffLimit": 3 * workers,
            "podFailurePolicy": failure_policy("env-worker"),
            "template": {
                "metadata": {"labels": labels, "annotations": {SPEC_DIGEST: spec_digest(experiment)}},
                "spec": {
                    # Indexed pods are named <job>-<index>; with the Service as subdomain each gets a stable DNS name.
                    "subdomain": naming.WORKERS_SERVICE,
                    "automountServiceAccountToken": False,
                    "restartPolicy": "Never",
                    "terminationGracePeriodSeconds": GRACE_SECONDS,
                    "securityContext": pod_security(),
                    "nodeSelector": {naming.POOL_LABEL: naming.CPU_POOL},
                    "containers": [
                        {
                            "name": "env-worker",
                            "image": ctx.worker_image,
                            "imagePullPolicy": "IfNotPresent",
                            "args": args,
                            "ports": [{"name": "transport", "containerPort": naming.WORKER_PORT, "protocol": "TCP"}],
                            "env": [{"name": "PYTHONUNBUFFERED", "value": "1"}, *token_env(ctx)],
                            "terminationMessagePolicy": "FallbackToLogsOnError",
                            "resources": WORKER_RESOURCES,
                            "securityContext": container_security(),
                            "volumeMounts": [SPEC_MOUNT],
                        }
                    ],
                    "volumes": [SPEC_VOLUME],
                },
            },
        },
    }
    with_code(ctx, job["spec"]["template"])  # type: ignore[index]
    return named_job(job, naming.WORKERS_JOB)


def build_manifests(experiment: Experiment, ctx: ManifestContext, *, token: object) -> list[dict[str, Any]]:
    """The Kubernetes objects that run ``experiment``, namespace first, Jobs last.

    ``token`` goes into the transport Secret (distributed mode only) as it is: a string for ``render``, a secret
    Pulumi output in the program. Everything else is plain data.
    """
    base = _labels(experiment)
    objects: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ctx.namespace, "labels": base}},
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": _meta(
                naming.RUNNER_SERVICE_ACCOUNT,
                ctx,
                base,
                annotations={"iam.gke.io/gcp-service-account": ctx.service_account_email},
            ),
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": _meta(naming.SPEC_CONFIG_MAP, ctx, base),
            "data": {naming.SPEC_FILE: to_yaml(experiment)},
        },
    ]
    if ctx.code is not None:
        objects.append(ctx.code.config_map(_meta(CODE_CONFIG_MAP, ctx, base)))
    workers_job = None
    if experiment.run_mode == "distributed":
        workers = _workers_job(experiment, ctx)
        workers_job = workers["metadata"]["name"]
        objects += [
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": _meta(ctx.token_secret, ctx, base),
                "type": "Opaque",
                "stringData": {naming.TOKEN_KEY: token},
            },
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": _meta(naming.WORKERS_SERVICE, ctx, _labels(experiment, "env-worker")),
                "spec": {
                    "clusterIP": "None",
                    # Workers resolve before they are ready, so the learner can connect as soon as they listen.
                    "publishNotReadyAddresses": True,
                    "selector": _labels(experiment, "env-worker"),
                    "ports": [{"name": "transport", "port": naming.WORKER_PORT, "targetPort": naming.WORKER_PORT}],
                },
            },
            workers,
        ]
    objects.append(learner_job(experiment, ctx, workers_job))
    return objects


def new_token() -> str:
    """A fresh transport token (256 bits)."""
    return secrets.token_urlsafe(32)


def render(experiment: Experiment, ctx: ManifestContext, *, token: str | None = None) -> str:
    """The manifests as one multi-document YAML (``kubectl apply -f`` ready); a new token unless one is given."""
    objects = build_manifests(experiment, ctx, token=token if token is not None else new_token())
    return yaml.safe_dump_all(objects, sort_keys=False, default_flow_style=False, allow_unicode=True)


def render_stack_file(path: Path, *, token: str | None = None) -> str:
    """:func:`render` for an experiment stack file: the manifests ``pulumi up`` would apply (no Pulumi needed)."""
    from infra.stack_config import settings_from_config
    from infra.stack_files import read_stack_file, stack_name_of

    settings = settings_from_config(read_stack_file(path), stack=stack_name_of(path))
    if settings.experiment is None:
        raise InvalidInput(f"{path}: a shared cluster stack runs no experiment; there is nothing to render")
    from infra.run_price import run_hourly_price

    ctx = context_for(
        settings.experiment,
        project=settings.project,
        location=settings.location,
        image=settings.image,
        image_stack=settings.image_stack,
        suspend=settings.suspend,
        hourly_price=run_hourly_price(
            settings.experiment, shared_cluster=settings.shared_cluster_stack is not None, book=settings.book
        ),
        code=settings.code,
    )
    return render(settings.experiment, ctx, token=token)
