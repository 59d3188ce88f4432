"""The stack program of a sweep stack (``tfcli:sweep``): the sweep's own cluster (from its base spec's cluster) or a
shared one, a results bucket named after the sweep, and :class:`infra.workloads.Workloads` of one Indexed Job — one
pod per trial, ``parallelism`` of them at a time, trial ``k`` writing ``gs://<bucket>/<sweep>/<sweep>-<k>/``.
"""

from __future__ import annotations

import pulumi

from infra import naming
from infra.image import default_image
from infra.pod_parts import ManifestContext
from infra.run_price import trial_hourly_price
from infra.run_stack import RunStack, declare_run
from infra.sizing import cpu_pool, learner_gpus, widest
from infra.sweep_config import SweepSettings, read_sweep_config
from infra.sweep_manifests import build_sweep_manifests


def sweep_context(sweep: SweepSettings) -> ManifestContext:
    """Names from the sweep's (not a trial's) name; the image by whether the trials' learner has a GPU; each trial's
    hourly price for ``max_cost`` (:func:`infra.run_price.trial_hourly_price`)."""
    settings, name = sweep.settings, sweep.name
    gpu = learner_gpus(widest(sweep.trials)) > 0
    return ManifestContext(
        namespace=naming.namespace(name),
        image=settings.image or default_image(project=settings.project, location=settings.location, gpu=gpu),
        worker_image=settings.image or default_image(project=settings.project, location=settings.location, gpu=False),
        bucket=naming.bucket_name(name, settings.project),
        service_account_email=naming.service_account_email(naming.writer_account_id(name), settings.project),
        suspend=settings.suspend,
        hourly_price=trial_hourly_price(sweep.trials, shared_cluster=settings.shared_cluster_stack is not None),
    )


def declare_sweep(sweep: SweepSettings) -> None:
    trial = widest(sweep.trials)
    context = sweep_context(sweep)
    run = RunStack(sweep.name, sweep.settings, trial.cluster, cpu_pool(trial))
    objects = build_sweep_manifests(sweep.name, sweep.trials, context, parallelism=sweep.parallelism)
    declare_run(run, context, objects, kind="sweep")
    pulumi.export("sweep", sweep.name)
    pulumi.export("trials", [trial.name for trial in sweep.trials])
    pulumi.export("parallelism", min(sweep.parallelism, len(sweep.trials)))


def run_sweep() -> None:
    declare_sweep(read_sweep_config())
