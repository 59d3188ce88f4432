"""The stack program of a sweep stack (``tfcli:sweep``): the sweep's own cluster (from its base spec's cluster) or a
shared one, a results bucket named after the sweep, and :class:`infra.sweep_workloads.SweepWorkloads` — one Indexed
Job, one pod per trial, ``parallelism`` of them at a time, trial ``k`` writing ``gs://<bucket>/<sweep>/<sweep>-<k>/``.
"""

from __future__ import annotations

import pulumi

from infra import naming
from infra.image import default_image
from infra.manifests import ManifestContext, learner_gpus
from infra.program import _cluster, cpu_pool, export_run_outputs, shared_connection
from infra.results_bucket import ResultsBucket, ResultsBucketArgs
from infra.sweep_config import SweepSettings, read_sweep_config
from infra.sweep_manifests import widest
from infra.sweep_workloads import SweepWorkloads, SweepWorkloadsArgs


def sweep_context(sweep: SweepSettings) -> ManifestContext:
    """Names from the sweep's (not a trial's) name; the image by whether the trials' learner has a GPU."""
    settings, name = sweep.settings, sweep.name
    gpu = learner_gpus(widest(sweep.trials)) > 0
    return ManifestContext(
        namespace=naming.namespace(name),
        image=settings.image or default_image(project=settings.project, location=settings.location, gpu=gpu),
        worker_image=settings.image or default_image(project=settings.project, location=settings.location, gpu=False),
        bucket=naming.bucket_name(name, settings.project),
        service_account_email=naming.service_account_email(naming.writer_account_id(name), settings.project),
        suspend=settings.suspend,
    )


def declare_sweep(sweep: SweepSettings) -> None:
    settings, name = sweep.settings, sweep.name
    after: list[pulumi.Resource] = []
    identity_pool: list[pulumi.Resource] = []
    if settings.shared_cluster_stack:
        connection = shared_connection(name, settings.shared_cluster_stack)
    else:
        trial = widest(sweep.trials)
        assert trial.cluster is not None  # stack_config checked it
        gke, pools = _cluster(name, trial.cluster, settings, cpu_pool(trial))
        connection = gke.connection
        after.append(pools)
        identity_pool.append(gke.cluster)
    results = ResultsBucket(
        name,
        ResultsBucketArgs(
            experiment=name,
            project=settings.project,
            location=settings.location,
            retention_days=settings.retention_days,
            labels={"tfcli-stack": settings.stack},
        ),
    )
    context = sweep_context(sweep)
    workloads = SweepWorkloads(
        name,
        SweepWorkloadsArgs(
            sweep=name,
            trials=sweep.trials,
            parallelism=sweep.parallelism,
            context=context,
            project=settings.project,
            cluster=connection,
            writer_account=results.writer.name,
            after=[*after, results.writer_access],
            storage=[results.bucket, results.writer_access],
            identity_pool=identity_pool,
        ),
    )
    pulumi.export("sweep", name)
    pulumi.export("trials", [trial.name for trial in sweep.trials])
    pulumi.export("parallelism", min(sweep.parallelism, len(sweep.trials)))
    export_run_outputs(
        name, connection=connection, settings=settings, context=context, workloads=workloads, results=results
    )


def run_sweep() -> None:
    declare_sweep(read_sweep_config())
